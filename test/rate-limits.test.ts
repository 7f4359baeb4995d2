// Each rate limit reads its own setting: set low, the route answers 429 with Retry-After at the
// configured count, whatever the neighbouring limits are set to.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RPC } from '../src/rpc/codes.js';
import { appCall } from './harness/identity.js';
import { postJson, rpc, startTestService, type TestService } from './harness/service.js';
import { family } from './ingest.fixtures.js';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService({
    env: {
      RATE_SESSION_PER_MIN: '2',
      RATE_SANDBOX_MCP_PER_MIN: '2',
      RATE_FAMILY_SHARE_LINK_PER_HOUR: '2',
      // The settings these limits once borrowed or shadowed stay generous: only their own key may refuse.
      RATE_DIRECTORY_MCP_PER_MIN: '100000',
    },
  });
});
afterAll(async () => svc?.stop());

/** The status of each of `n` calls, in order. */
async function statuses(n: number, call: () => Promise<{ status: number }>): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) out.push((await call()).status);
  return out;
}

describe('rate limits with their own settings', () => {
  it('when RATE_SESSION_PER_MIN is 2, then the third sign-in from one address is 429 with Retry-After', async () => {
    const signIn = () =>
      fetch(`${svc.urls.app}/api/auth/session`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ idToken: 'not-a-token' }),
      });
    expect((await statuses(2, signIn)).every((s) => s !== 429)).toBe(true);
    const refused = await signIn();
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  });

  it('when RATE_SANDBOX_MCP_PER_MIN is 2 and the directory allows far more, then the third sandbox request is 429 with Retry-After', async () => {
    const url = `${svc.urls.app}/api/mcp/public`;
    expect(await statuses(2, () => postJson(url, rpc('ping')))).toEqual([200, 200]);
    const refused = await postJson(url, rpc('ping', undefined, 'sandbox-3'));
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(refused.json).toMatchObject({ id: 'sandbox-3', error: { code: RPC.RATE_LIMITED } });
    // The directory's own bucket is untouched.
    expect((await postJson(`${svc.urls.site}/api/mcp`, rpc('ping'))).status).toBe(200);
  });

  it("when RATE_FAMILY_SHARE_LINK_PER_HOUR is 2, then a person's third link code within the hour is 429 with Retry-After", async () => {
    const fam = await family(svc.store.db, svc.credentials, svc.config);
    const enter = () => appCall(svc, fam.cookie, 'POST', '/api/family-share/link', { code: 'ABCD-EFGH-JKMN', lovedOneId: fam.lovedOneId });
    expect(await statuses(2, enter)).toEqual([400, 400]);
    const refused = await enter();
    expect(refused.status).toBe(429);
    expect(refused.json).toMatchObject({ code: 'RATE_LIMITED' });
    // The default ten would have let the third through. Tokens are minted on a half-hour grid of the
    // clock (two an hour), so the wait is up to the next grid point: at most half an hour.
    const wait = Number(refused.headers.get('retry-after'));
    expect(wait).toBeGreaterThanOrEqual(1);
    expect(wait).toBeLessThanOrEqual(30 * 60);
  });
});
