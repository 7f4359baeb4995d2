// What a client can send the gateways and what it gets back: nesting depth, batch size, reply size,
// batch items against the rate limit, and request ids echoed on refusals.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RPC } from '../src/rpc/codes.js';
import { appCall, caregiverWithKey } from './harness/identity.js';
import { postJson, rpc, startTestService, type TestService } from './harness/service.js';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService({
    nats: true,
    env: { RATE_DIRECTORY_MCP_PER_MIN: '100000', RATE_SANDBOX_MCP_PER_MIN: '100000', RATE_MCP_KEY_PER_MIN: '100000' },
  });
});
afterAll(async () => svc?.stop());

const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
/** Batch messages the directory server left unanswered so far, from the service's own metrics. */
const skippedItems = async (service: TestService): Promise<number> =>
  Number(/^carecircle_mcp_batch_items_skipped_total\{server="carecircle-directory"\} (\d+)/m.exec(await (await fetch(service.urls.metrics!)).text())?.[1] ?? 0);
const search = (i: number, limit = 25) => rpc('tools/call', { name: 'search_care_resources', arguments: { query: `care ${i}`, limit } }, i + 1);
/** A JSON-RPC call whose arguments hold one field nested `levels` arrays deep. */
const deepCall = (levels: number) =>
  `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"search_care_resources","arguments":{"query":"x","extra":${'['.repeat(levels)}${']'.repeat(levels)}}}}`;

describe('JSON nesting depth at the gateway', () => {
  it('when JSON nests 5000 levels deep on any MCP endpoint, then 400 -32700 naming the depth and the limit, not 503', async () => {
    const { apiKey } = await caregiverWithKey(svc, 'deep@example.com');
    const endpoints: [string, Record<string, string>][] = [
      [`${svc.urls.site}/api/mcp`, {}],
      [`${svc.urls.app}/api/mcp`, bearer(apiKey)],
      [`${svc.urls.app}/api/mcp/public`, {}],
    ];
    for (const [url, headers] of endpoints) {
      const res = await postJson(url, deepCall(5000), headers);
      expect({ url, status: res.status }).toEqual({ url, status: 400 });
      expect(res.json.error.code).toBe(RPC.PARSE_ERROR);
      expect(res.json.error.message).toMatch(/5003 levels deep.*limit is 64/);
    }
  });

  it('when JSON nests 5000 levels deep on the community API, then 400 BAD_REQUEST naming the depth and the limit', async () => {
    const body = `{"channel":"respite-and-burnout","action":"join","extra":${'['.repeat(5000)}${']'.repeat(5000)}}`;
    const res = await postJson(`${svc.urls.site}/api/community`, body, { authorization: 'Bearer not-a-token' });
    expect(res.status).toBe(400);
    expect(res.json).toMatchObject({ code: 'BAD_REQUEST', error: { code: 'BAD_REQUEST' } });
    expect(res.json.message).toMatch(/5001 levels deep.*limit is 64/);
  });

  it('when JSON nests within the limit, then it is served as before', async () => {
    const res = await postJson(`${svc.urls.site}/api/mcp`, deepCall(50));
    expect(res.status).toBe(200);
    expect(res.json.id).toBe(7);
  });
});

describe('batches', () => {
  it('when a batch holds more items than MCP_MAX_BATCH, then 413 -32600 naming the count and the limit', async () => {
    const res = await postJson(
      `${svc.urls.site}/api/mcp`,
      Array.from({ length: 51 }, (_, i) => rpc('ping', undefined, i)),
    );
    expect(res.status).toBe(413);
    expect(res.json).toMatchObject({ id: null, error: { code: RPC.INVALID_REQUEST } });
    expect(res.json.error.message).toMatch(/batch of 51 items.*limit is 50/i);
    expect(res.json.error.data.hint).toMatch(/fewer items per batch/);
    expect(
      (
        await postJson(
          `${svc.urls.site}/api/mcp`,
          Array.from({ length: 50 }, (_, i) => rpc('ping', undefined, i)),
        )
      ).status,
    ).toBe(200);
  });

  it('when a reply would exceed MAX_REPLY_BYTES, then 413 -32600 saying what to do, the batch stopped where it passed, and the endpoint keeps serving', async () => {
    const small = await startTestService({
      nats: true,
      env: { MAX_REPLY_BYTES: '20000', RATE_DIRECTORY_MCP_PER_MIN: '100000', RATE_SANDBOX_MCP_PER_MIN: '100000' },
    });
    try {
      const url = `${small.urls.site}/api/mcp`;
      const before = await skippedItems(small);
      const res = await postJson(
        url,
        Array.from({ length: 10 }, (_, i) => search(i)),
        { 'mcp-protocol-version': '2025-03-26' },
      );
      expect(res.status).toBe(413);
      expect(res.json.error.code).toBe(RPC.INVALID_REQUEST);
      expect(res.json.error.message).toMatch(/reply too large/i);
      expect(res.json.error.data.hint).toMatch(/fewer items per batch or a smaller limit/);
      // A search of 25 is several KB: the first few pass 20 000 bytes and the rest never run.
      expect(await skippedItems(small)).toBeGreaterThan(before);
      expect((await postJson(url, search(1, 2))).status).toBe(200);
      // A single reply too large (a search of 25 with its structured copy, about 22 KB) is refused as before, by the bus.
      const single = await postJson(url, search(1, 25), { 'mcp-protocol-version': '2025-06-18' });
      expect(single.status).toBe(413);
      expect(single.json.error.message).toMatch(/^Reply too large: \d+ bytes, the limit is 20000$/);
    } finally {
      await small.stop();
    }
  });
});

describe('rate limits count batch items, and refusals echo the request id', () => {
  let limited: TestService;
  beforeAll(async () => {
    limited = await startTestService({ nats: true, env: { RATE_DIRECTORY_MCP_PER_MIN: '10' } });
  });
  afterAll(async () => limited?.stop());

  it('when a batch of 8 follows a batch of 8 within a bucket of 10, then the second is 429: every item counts', async () => {
    const url = `${limited.urls.site}/api/mcp`;
    const batch = () => Array.from({ length: 8 }, (_, i) => rpc('ping', undefined, i));
    expect((await postJson(url, batch())).status).toBe(200);
    const second = await postJson(url, batch());
    expect(second.status).toBe(429);
    expect(Number(second.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(second.json.error.code).toBe(RPC.RATE_LIMITED);
  });

  it('when a single message is refused with 429, then the error carries its id', async () => {
    const url = `${limited.urls.site}/api/mcp`;
    let res = await postJson(url, rpc('ping', undefined, 'req-429'));
    for (let i = 0; i < 12 && res.status !== 429; i++) res = await postJson(url, rpc('ping', undefined, 'req-429'));
    expect(res.status).toBe(429);
    expect(res.json.id).toBe('req-429');
  });

  it('when a workspace call is refused with 401 or 403, then the error carries its id', async () => {
    const mcp = `${svc.urls.app}/api/mcp`;
    const unknown = await postJson(mcp, rpc('ping', undefined, 'req-401'), bearer(`sk-svc-${'0'.repeat(64)}`));
    expect(unknown.status).toBe(401);
    expect(unknown.json).toMatchObject({ id: 'req-401', error: { code: RPC.UNAUTHORIZED } });
    const { apiKey, keyId, cookie } = await caregiverWithKey(svc, 'revoked-id@example.com');
    expect((await appCall(svc, cookie, 'POST', `/api/keys/${keyId}/revoke`)).status).toBe(200);
    const revoked = await postJson(mcp, rpc('ping', undefined, 403), bearer(apiKey));
    expect(revoked.status).toBe(403);
    expect(revoked.json).toMatchObject({ id: 403, error: { code: RPC.UNAUTHORIZED, message: 'API key revoked' } });
  });
});

describe('broken percent-encoding is the client’s to fix', () => {
  it('when a path parameter is not valid percent-encoding, then 400 naming the parameter, not 500', async () => {
    const { cookie } = await caregiverWithKey(svc, 'percent@example.com');
    for (const path of ['/api/keys/%ZZ/revoke', '/settings/apps/%ZZ/revoke', '/api/keys/%E0%A4%A/revoke']) {
      const res = await appCall(svc, cookie, 'POST', path, {});
      expect({ path, status: res.status }).toEqual({ path, status: 400 });
      expect(res.json).toMatchObject({ code: 'BAD_REQUEST' });
      expect(res.json.message).toMatch(/path parameter id is not valid percent-encoding/);
    }
    expect((await fetch(`${svc.urls.app}/care/%ZZ`, { headers: { cookie } })).status).toBe(400);
  });

  it('when the session cookie is not valid percent-encoding, then it counts as no session, not 500', async () => {
    const me = await fetch(`${svc.urls.app}/api/auth/me`, { headers: { cookie: 'cc_session=%E0%A4%A' } });
    expect(me.status).toBe(200);
    expect(await me.json()).toEqual({ authenticated: false });
    const page = await fetch(`${svc.urls.app}/settings`, { headers: { cookie: 'cc_session=%' }, redirect: 'manual' });
    const none = await fetch(`${svc.urls.app}/settings`, { redirect: 'manual' });
    expect(page.status).toBe(none.status);
    expect(await page.text()).toBe(await none.text());
  });
});

describe('bodies the auth host reads itself', () => {
  it('when the development sign-in form is larger than its limit, then 413 PAYLOAD_TOO_LARGE, not 500', async () => {
    const res = await fetch(`${svc.urls.auth}/dev/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ email: 'big@example.com', name: 'x'.repeat(20_000), return_to: `${svc.config.appUrl}/auth/callback` }).toString(),
    });
    expect(res.status).toBe(413);
    expect(await res.json()).toMatchObject({ code: 'PAYLOAD_TOO_LARGE', error: { code: 'PAYLOAD_TOO_LARGE' } });
  });
});
