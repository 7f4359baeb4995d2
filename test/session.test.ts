// The session helpers against login and logout CSRF (Origin), and an ID token that has been
// signed out: it opens no second session, here or at the authorization server's sign-in.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { devIdToken } from './harness/identity.js';
import { startTestService, type TestService } from './harness/service.js';
import { authorizationRequest, discover, Jar, register } from './oauth.fixtures.js';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
});
afterAll(async () => svc?.stop());

const appOrigin = () => new URL(svc.config.appUrl).origin;
const siteOrigin = () => new URL(svc.config.siteUrl).origin;

async function post(url: string, body: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, cookie: res.headers.get('set-cookie')?.split(';')[0], json: text ? (JSON.parse(text) as any) : undefined };
}

const openSession = (host: 'site' | 'app', idToken: string, origin?: string) =>
  post(`${svc.urls[host]}/api/auth/session`, { idToken }, origin ? { origin } : {});
const signOut = (host: 'site' | 'app', cookie: string, origin?: string) =>
  post(`${svc.urls[host]}/api/auth/signout`, {}, { cookie, ...(origin ? { origin } : {}) });
const me = async (cookie: string) => (await (await fetch(`${svc.urls.app}/api/auth/me`, { headers: { cookie } })).json()) as { authenticated: boolean };

describe('session - Origin', () => {
  it('when another site posts an ID token to either host, then 403 FORBIDDEN and no cookie (login CSRF)', async () => {
    const idToken = await devIdToken(svc, 'login-csrf@example.com');
    for (const host of ['site', 'app'] as const) {
      for (const origin of ['https://evil.example', 'null']) {
        const res = await openSession(host, idToken, origin);
        expect(res.status, `${host} ${origin}`).toBe(403);
        expect(res.json).toMatchObject({ code: 'FORBIDDEN', error: { code: 'FORBIDDEN' } });
        expect(res.cookie).toBeUndefined();
      }
    }
  });

  it('when the page is ours (site or app origin) or no Origin is sent (a server), then the session opens', async () => {
    for (const [host, origin] of [
      ['app', appOrigin()],
      ['site', siteOrigin()],
      ['app', siteOrigin()],
      ['site', undefined],
    ] as const) {
      const res = await openSession(host, await devIdToken(svc, 'own-origin@example.com'), origin);
      expect(res.status, `${host} ${origin}`).toBe(200);
      expect(res.json.authenticated).toBe(true);
    }
  });

  it('when another site posts to sign-out, then 403 and the session stands (logout CSRF)', async () => {
    const { cookie } = await openSession('app', await devIdToken(svc, 'logout-csrf@example.com'), appOrigin());
    const res = await signOut('app', cookie!, 'https://evil.example');
    expect(res.status).toBe(403);
    expect(res.json.code).toBe('FORBIDDEN');
    expect((await me(cookie!)).authenticated).toBe(true);
    expect((await signOut('app', cookie!, appOrigin())).status).toBe(200);
    expect((await me(cookie!)).authenticated).toBe(false);
  });
});

describe('session - a signed-out ID token', () => {
  it('when the session is signed out, then the same ID token opens no new one (401) and its other sessions end too', async () => {
    const idToken = await devIdToken(svc, 'replay@example.com');
    const first = await openSession('app', idToken, appOrigin());
    const second = await openSession('site', idToken, siteOrigin());
    expect([first.status, second.status]).toEqual([200, 200]);

    expect((await signOut('app', first.cookie!, appOrigin())).status).toBe(200);
    expect((await me(second.cookie!)).authenticated).toBe(false);
    for (const host of ['app', 'site'] as const) {
      const again = await openSession(host, idToken, host === 'app' ? appOrigin() : siteOrigin());
      expect(again.status, host).toBe(401);
      expect(again.json).toMatchObject({ code: 'UNAUTHORIZED', message: expect.stringMatching(/signed out/) });
      expect(again.cookie).toBeUndefined();
    }
    // A fresh sign-in is a new token and works.
    expect((await openSession('app', await devIdToken(svc, 'replay@example.com'), appOrigin())).status).toBe(200);
  });

  it('when the app page signs out (the Sign out button), then the ID token is remembered as signed out as well', async () => {
    const idToken = await devIdToken(svc, 'page-signout@example.com');
    const { cookie } = await openSession('app', idToken, appOrigin());
    const res = await fetch(`${svc.urls.app}/signout`, { method: 'POST', redirect: 'manual', headers: { cookie: cookie!, origin: appOrigin() } });
    expect(res.status).toBe(303);
    expect((await openSession('app', idToken, appOrigin())).status).toBe(401);
  });

  it('when an app is connected with OAuth, then a signed-out ID token does not sign in at the authorization server either', async () => {
    const idToken = await devIdToken(svc, 'oauth-replay@example.com');
    const { cookie } = await openSession('app', idToken, appOrigin());
    await signOut('app', cookie!, appOrigin());

    const { as } = await discover(svc);
    const req = await authorizationRequest(as, (await register(svc)).registered!, { resource: `${svc.config.appUrl}/api/mcp` });
    const jar = new Jar();
    const authorize = await fetch(req.url, { redirect: 'manual' });
    jar.take(authorize);
    const interaction = new URL(authorize.headers.get('location')!, req.url);
    expect(interaction.pathname).toMatch(/^\/oauth\/interaction\//);
    const login = await fetch(`${interaction.href}/login`, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie: jar.header(), origin: new URL(svc.config.authUrl).origin, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ id_token: idToken }),
    });
    expect(login.status).toBe(401);
    expect(await login.text()).toContain('login_required');
  });
});
