// What the authorization server keeps, read the way someone holding a copy of the database reads
// it: after real flows, no stored field of any OAuth record holds a code, a token or a cookie the
// server handed out, and nothing taken from the store is accepted in their place.
import * as oauth from 'oauth4webapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from './harness/service.js';
import { authorizationRequest, authorizeOverHttp, discover, insecure, Jar, register } from './oauth.fixtures.js';

let svc: TestService;
const resource = () => `${svc.config.appUrl}/api/mcp`;

beforeAll(async () => {
  svc = await startTestService();
});
afterAll(async () => {
  await svc?.stop();
});

/** A cookie jar that also remembers every value the server ever set. */
class RecordingJar extends Jar {
  readonly seen = new Map<string, string>();
  readonly names = new Set<string>();
  override take(res: Response) {
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const eq = pair!.indexOf('=');
      const name = pair!.slice(0, eq).trim();
      const value = pair!.slice(eq + 1).trim();
      if (!value) continue;
      this.seen.set(value, `cookie ${name}`);
      this.names.add(name);
    }
    super.take(res);
  }
}

/** Every string anywhere in a document, its JSON payload parsed too. */
function stringsIn(value: unknown, out: string[] = []): string[] {
  if (typeof value === 'string') {
    out.push(value);
    if (value.startsWith('{')) {
      try {
        stringsIn(JSON.parse(value), out);
      } catch {
        // not JSON: the string itself is enough
      }
    }
  } else if (Array.isArray(value)) for (const v of value) stringsIn(v, out);
  else if (value && typeof value === 'object' && !(value instanceof Date)) for (const v of Object.values(value)) stringsIn(v, out);
  return out;
}

const refreshWith = (clientId: string, token: string) =>
  fetch(`${svc.config.authUrl}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: token, client_id: clientId }),
  });

describe('oauth - what the store keeps', () => {
  it('when codes, tokens and cookies have been issued, then no stored OAuth record holds any of them, and no stored value works as a refresh token', async () => {
    const { as } = await discover(svc);
    const reg = (await register(svc)).registered!;
    const issued = new Map<string, string>();

    // One step left pending at the consent page (its interaction and session stay stored)…
    const pendingJar = new RecordingJar();
    const pending = await authorizeOverHttp(
      svc,
      (await authorizationRequest(as, reg, { resource: resource() })).url,
      'pending@example.com',
      'leave',
      pendingJar,
    );
    expect(pending.consentPages).toBe(1);

    // …and one connection made, its refresh token spent once.
    const jar = new RecordingJar();
    const req = await authorizationRequest(as, reg, { resource: resource() });
    const done = await authorizeOverHttp(svc, req.url, 'at-rest@example.com', { approve: ['profile:read', 'care_circle:read'] }, jar);
    const params = oauth.validateAuthResponse(as, reg.client, done.redirect!, req.state);
    issued.set(params.get('code')!, 'authorization code');
    const first = await oauth.processAuthorizationCodeResponse(
      as,
      reg.client,
      await oauth.authorizationCodeGrantRequest(as, reg.client, oauth.None(), params, reg.redirectUri, req.verifier, {
        additionalParameters: { resource: resource() },
        ...insecure,
      }),
    );
    const second = await oauth.processRefreshTokenResponse(
      as,
      reg.client,
      await oauth.refreshTokenGrantRequest(as, reg.client, oauth.None(), first.refresh_token!, insecure),
    );
    issued.set(first.access_token, 'access token').set(first.refresh_token!, 'spent refresh token');
    issued.set(second.access_token, 'access token').set(second.refresh_token!, 'live refresh token');
    for (const [value, what] of [...pendingJar.seen, ...jar.seen]) issued.set(value, what);
    expect([...jar.names]).toEqual(expect.arrayContaining(['cc_oauth_session', 'cc_oauth_interaction', 'cc_oauth_resume']));

    const db = svc.store.db;
    const names = (await db.listCollections({}, { nameOnly: true }).toArray()).map((c) => c.name).filter((n) => n.startsWith('oauth_'));
    const stored = new Map<string, string[]>();
    for (const name of names) stored.set(name, stringsIn(await db.collection(name).find({}).toArray()));
    for (const model of ['oauth_session', 'oauth_interaction', 'oauth_authorization_code', 'oauth_refresh_token', 'oauth_grant', 'oauth_consumed'])
      expect(stored.get(model)?.length, model).toBeGreaterThan(0);

    const leaks: string[] = [];
    for (const [name, strings] of stored) for (const [value, what] of issued) if (strings.some((s) => s.includes(value))) leaks.push(`${name} holds: ${what}`);
    expect.soft(leaks).toEqual([]);

    // Whatever the live refresh token's record holds (the one no consumption marker names), none of it is a refresh token.
    const spent = new Set((await db.collection('oauth_consumed').find({}).toArray()).map((m) => String(m._id)));
    const live = (await db.collection('oauth_refresh_token').find({}).toArray()).filter((d) => !spent.has(`RefreshToken:${String(d._id)}`));
    expect(live).toHaveLength(1);
    const candidates = new Set(stringsIn(live).filter((s) => s.length >= 16));
    const accepted: string[] = [];
    for (const value of candidates) {
      const res = await refreshWith(reg.client.client_id, value);
      if (res.status === 200) accepted.push(`${value.slice(0, 4)}… (${value.length} characters)`);
      else expect(((await res.json()) as { error: string }).error).toBe('invalid_grant');
    }
    expect(accepted).toEqual([]);
    // The store still serves the real one.
    expect((await refreshWith(reg.client.client_id, second.refresh_token!)).status).toBe(200);
  });
});
