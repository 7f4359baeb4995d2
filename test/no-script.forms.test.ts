// Sign-in and agency linking as plain HTTP form posts, as a browser without script sends them: the
// provider posts the ID token back (form_post) and the app answers with a session and a 303; the
// link-code form answers a 303 to a confirmation page. Scripts still get JSON from the same routes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PartnerClient } from '../src/partner/client.js';
import { caregiverWithKey } from './harness/identity.js';
import { startTestService, type TestService } from './harness/service.js';
import { onboard, TEST_DATA_KEY } from './ingest.fixtures.js';
import { authorizationRequest, authorizeOverHttp, discover, Jar, register } from './oauth.fixtures.js';

let svc: TestService;
let appOrigin: string;
let authOrigin: string;
beforeAll(async () => {
  svc = await startTestService({ env: { DATA_KEY: TEST_DATA_KEY } });
  appOrigin = new URL(svc.config.appUrl).origin;
  authOrigin = new URL(svc.config.authUrl).origin;
});
afterAll(async () => svc?.stop());

const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString();
const FORM = 'application/x-www-form-urlencoded';

/** The development provider in form_post mode: the page it answers, and the token in its form. */
async function formPostSignIn(email: string, next: string): Promise<{ html: string; action: string; idToken: string }> {
  const res = await fetch(`${svc.urls.auth}/dev/login`, {
    method: 'POST',
    headers: { 'content-type': FORM },
    body: form({ email, return_to: `${svc.config.appUrl}/auth/callback?next=${encodeURIComponent(next)}`, response_mode: 'form_post' }),
    redirect: 'manual',
  });
  expect(res.status).toBe(200);
  const html = await res.text();
  const action = /<form method="post" action="([^"]+)" id="form-post">/.exec(html)![1]!.replace(/&amp;/g, '&');
  const idToken = /name="id_token" value="([^"]+)"/.exec(html)![1]!;
  return { html, action, idToken };
}

const postCallback = (action: string, body: string, origin: string) =>
  fetch(action, { method: 'POST', headers: { 'content-type': FORM, origin }, body, redirect: 'manual' });

describe('sign-in by form post', () => {
  it('when the sign-in page is opened without script, then its form asks for the token to be posted back', async () => {
    const page = await (await fetch(`${svc.urls.auth}/dev/login?return_to=${encodeURIComponent(`${svc.config.appUrl}/auth/callback?next=/`)}`)).text();
    expect(page).toContain('<noscript><input type="hidden" name="response_mode" value="form_post"/></noscript>');
  });

  it('when the provider posts the ID token to the callback, then the app opens a session and answers 303 to where the sign-in was going', async () => {
    const { action, idToken } = await formPostSignIn('form-post@example.com', '/settings#time-zone');
    expect(action).toBe(`${svc.config.appUrl}/auth/callback?next=%2Fsettings%23time-zone`);
    const res = await postCallback(action, form({ id_token: idToken }), authOrigin);
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/settings#time-zone');
    const cookie = res.headers.get('set-cookie')!.split(';')[0]!;
    expect(cookie).toMatch(/^cc_session=/);
    const me = await (await fetch(`${svc.urls.app}/api/auth/me`, { headers: { cookie } })).json();
    expect(me).toMatchObject({ authenticated: true, email: 'form-post@example.com' });
  });

  it('when next leads off the app, then the posted sign-in still lands on the app', async () => {
    const { action, idToken } = await formPostSignIn('form-post-next@example.com', '//evil.example/phish');
    const res = await postCallback(action, form({ id_token: idToken }), authOrigin);
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/');
  });

  it('when the callback is posted from any page but the provider’s, then the edge refuses it 403 before a session opens', async () => {
    const { action, idToken } = await formPostSignIn('form-post-csrf@example.com', '/');
    for (const origin of ['https://evil.example', 'null', appOrigin]) {
      const res = await postCallback(action, form({ id_token: idToken }), origin);
      expect(res.status, origin).toBe(403);
      expect(res.headers.get('set-cookie'), origin).toBeNull();
      expect(((await res.json()) as { code: string }).code).toBe('FORBIDDEN');
    }
  });

  it('when the posted token is missing or forged, then the page says so with a way to sign in again, and no session opens', async () => {
    const missing = await postCallback(`${svc.config.appUrl}/auth/callback?next=/`, form({}), authOrigin);
    expect(missing.status).toBe(400);
    expect(await missing.text()).toContain('without a token (id_token)');
    const forged = await postCallback(`${svc.config.appUrl}/auth/callback?next=/`, form({ id_token: 'eyJhbGciOiJFUzI1NiJ9.e30.c2ln' }), authOrigin);
    expect(forged.status).toBe(401);
    expect(forged.headers.get('set-cookie')).toBeNull();
    expect(await forged.text()).toMatch(/Sign in again/);
  });
});

describe('OAuth sign-in by form post', () => {
  it('when an assistant is connected from a browser without script, then the posted sign-in reaches consent and the app gets its code', async () => {
    const { as } = await discover(svc);
    const reg = (await register(svc)).registered!;
    const req = await authorizationRequest(as, reg, { resource: `${svc.config.appUrl}/api/mcp` });
    const done = await authorizeOverHttp(svc, req.url, 'oauth-form-post@example.com', { approve: ['profile:read'] }, new Jar(), true);
    expect(done.consentPages).toBe(1);
    expect(done.redirect?.searchParams.get('code')).toBeTruthy();
    expect(done.redirect?.searchParams.get('state')).toBe(req.state);
  });
});

describe('agency link by form post', () => {
  async function linkCode(name: string, subjectRef: string): Promise<string> {
    const partner = await onboard(svc.store.db, svc.credentials, name);
    const client = new PartnerClient({ baseUrl: svc.urls.pipe!, institutionId: partner.institutionId, secret: partner.secret });
    return ((await client.setFamilyShare(subjectRef, true)).body as { link_code: string }).link_code;
  }

  const postLink = (cookie: string, body: string, headers: Record<string, string> = {}) =>
    fetch(`${svc.urls.app}/api/family-share/link`, { method: 'POST', headers: { cookie, origin: appOrigin, ...headers }, body, redirect: 'manual' });

  it('when the form is posted, then it answers 303 to a confirmation page that names the agency and the loved one', async () => {
    const fam = await caregiverWithKey(svc, 'form-link@example.com');
    const code = await linkCode('Lakeside Home Care', 'lakeside-1');
    const res = await postLink(fam.cookie, form({ code, lovedOneId: fam.lovedOneId }), { 'content-type': FORM, accept: 'text/html,*/*;q=0.8' });
    expect(res.status).toBe(303);
    const location = res.headers.get('location')!;
    expect(location).toMatch(/^\/family-share\/linked\?link=lnk_/);
    const page = await fetch(`${svc.urls.app}${location}`, { headers: { cookie: fam.cookie } });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toContain('text/html');
    expect(await page.text()).toContain('Linked: events from Lakeside Home Care will appear for Rosa Rivera.');
    // Another family cannot read it.
    const other = await caregiverWithKey(svc, 'form-link-other@example.com');
    expect((await fetch(`${svc.urls.app}${location}`, { headers: { cookie: other.cookie } })).status).toBe(404);
  });

  it('when a form post asks for JSON, or the body is JSON, then the answer is the JSON it always was', async () => {
    const fam = await caregiverWithKey(svc, 'json-link@example.com');
    const asked = await postLink(fam.cookie, form({ code: await linkCode('Hillside Home Care', 'hill-1'), lovedOneId: fam.lovedOneId }), {
      'content-type': FORM,
      accept: 'application/json',
    });
    expect(asked.status).toBe(200);
    expect(await asked.json()).toMatchObject({ linked: true, institutionName: 'Hillside Home Care', lovedOneName: 'Rosa Rivera' });
    const json = await postLink(fam.cookie, JSON.stringify({ code: 'WRONG-CODE-0000', lovedOneId: fam.lovedOneId }), { 'content-type': 'application/json' });
    expect(json.status).toBe(400);
    expect(await json.json()).toMatchObject({ code: 'VALIDATION_FAILED', message: 'code: that link code is not valid' });
  });

  it('when the form is wrong, then the refusal is a page in words with its status, never JSON', async () => {
    const fam = await caregiverWithKey(svc, 'form-wrong@example.com');
    const wrong = await postLink(fam.cookie, form({ code: 'WRONG-CODE-0000', lovedOneId: fam.lovedOneId }), { 'content-type': FORM });
    expect(wrong.status).toBe(400);
    expect(wrong.headers.get('content-type')).toContain('text/html');
    const text = await wrong.text();
    expect(text).toContain('that link code is not valid');
    expect(text).toContain('href="/#family-share-form"');
    const empty = await postLink(fam.cookie, form({ code: '', lovedOneId: fam.lovedOneId }), { 'content-type': FORM });
    expect(empty.status).toBe(400);
    expect(await empty.text()).toContain('Enter the link code the agency gave you');
    const signedOut = await postLink('cc_session=nope', form({ code: 'X', lovedOneId: 'y' }), { 'content-type': FORM });
    expect(signedOut.status).toBe(303);
    expect(signedOut.headers.get('location')).toBe('/signin?next=%2F%23family-share-form');
  });
});
