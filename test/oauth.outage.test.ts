// The authorization server while its database is down: a transient failure, answered 503 with
// Retry-After in the OAuth error format (JSON for the endpoints apps call, a page at authorize),
// and served again once the database is back. A private FerretDB, so stopping it disturbs no
// other test.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startPrivateFerretDb, type PrivateFerretDb } from './harness/privateFerretDb.js';
import { startTestService, type TestService } from './harness/service.js';
import { Jar, register } from './oauth.fixtures.js';

let db: PrivateFerretDb | undefined;
let svc: TestService;

beforeAll(async () => {
  db = await startPrivateFerretDb('oauth-outage');
  svc = await startTestService({ mongoUrl: db.url('carecircle_oauth_outage') });
});
afterAll(async () => {
  await svc?.stop();
  await db?.remove();
});

const form = (body: Record<string, string>) => ({
  method: 'POST',
  headers: { 'content-type': 'application/x-www-form-urlencoded' },
  body: new URLSearchParams(body),
});

describe('oauth - database outage', () => {
  it(
    'when the database is down, then register, token, revoke, authorize and the sign-in step answer 503 with Retry-After in the OAuth error format, and serve again once it is back',
    { timeout: 90_000 },
    async () => {
      const reg = (await register(svc)).registered!;
      const clientId = reg.client.client_id;
      const auth = svc.config.authUrl;
      const authorizeUrl = `${auth}/oauth/authorize?${new URLSearchParams({ client_id: clientId, redirect_uri: reg.redirectUri, response_type: 'code', scope: 'profile:read', state: 'outage-state', code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', code_challenge_method: 'S256' })}`;
      const calls = {
        register: () =>
          fetch(`${auth}/oauth/register`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ client_name: 'During an outage', redirect_uris: ['http://127.0.0.1:47000/cb'], token_endpoint_auth_method: 'none' }),
          }),
        token: () =>
          fetch(
            `${auth}/oauth/token`,
            form({ grant_type: 'authorization_code', code: 'some-code', code_verifier: 'v'.repeat(43), redirect_uri: reg.redirectUri, client_id: clientId }),
          ),
        revoke: () => fetch(`${auth}/oauth/revoke`, form({ token: 'some-refresh-token', client_id: clientId })),
        authorize: () => fetch(authorizeUrl, { redirect: 'manual', headers: { accept: 'text/html' } }),
      };
      // Up: each is answered by the authorization server itself (a refusal of the made-up values, a redirect to sign in).
      expect((await calls.register()).status).toBe(201);
      expect((await calls.token()).status).toBe(400);
      expect((await calls.revoke()).status).toBe(200);
      const started = await calls.authorize();
      expect(started.status).toBe(303);
      // A person already at the sign-in step when the database goes.
      const jar = new Jar();
      jar.take(started);
      const step = new URL(started.headers.get('location')!, auth).href;
      const interaction = () => fetch(step, { redirect: 'manual', headers: { cookie: jar.header(), accept: 'text/html' } });

      await db!.stop();
      const down = Object.fromEntries(await Promise.all(Object.entries({ ...calls, interaction }).map(async ([name, call]) => [name, await call()] as const)));
      for (const [name, res] of Object.entries(down)) {
        expect({ name, status: res.status }).toEqual({ name, status: 503 });
        expect({ name, retryAfter: Number(res.headers.get('retry-after')) > 0 }).toEqual({ name, retryAfter: true });
        expect({ name, cacheControl: res.headers.get('cache-control') }).toEqual({ name, cacheControl: 'no-store' });
      }
      for (const name of ['register', 'token', 'revoke'] as const) {
        expect(down[name]!.headers.get('content-type')).toMatch(/^application\/json/);
        expect(await down[name]!.json()).toEqual({ error: 'temporarily_unavailable', error_description: expect.stringContaining('try again in') });
      }
      // A browser is at authorize and the sign-in step: a page, never a redirect to an app whose redirect URI could not be checked.
      for (const name of ['authorize', 'interaction'] as const) {
        expect(down[name]!.headers.get('location')).toBeNull();
        expect(down[name]!.headers.get('content-type')).toMatch(/^text\/html/);
        expect(await down[name]!.text()).toContain('<code id="error-code">temporarily_unavailable</code>');
      }

      await db!.start();
      await vi.waitFor(async () => expect((await calls.register()).status).toBe(201), { timeout: 30_000, interval: 250 });
      expect((await calls.authorize()).status).toBe(303);
    },
  );
});
