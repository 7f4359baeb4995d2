// The authenticated workspace MCP endpoint and what stands behind it: sessions, keys, audit.
import { createHash } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { MongoClient, type Db } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RPC } from '../src/rpc/codes.js';
import { databaseName } from '../src/store/mongo.js';
import { appendCareEvents } from '../src/family/records.js';
import { appCall, caregiverWithKey, devIdToken, signIn } from './harness/identity.js';
import { postJson, rpc, startTestService, type TestService } from './harness/service.js';

let svc: TestService;
let mongo: MongoClient;
let db: Db;
let mcp: string;
beforeAll(async () => {
  svc = await startTestService({ nats: true });
  mcp = `${svc.urls.app}/api/mcp`;
  mongo = await new MongoClient(svc.mongoUrl).connect();
  db = mongo.db(databaseName(svc.mongoUrl));
});
afterAll(async () => {
  await mongo?.close();
  await svc?.stop();
});

const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
const callTool = (key: string, name: string, args: Record<string, unknown> = {}) => postJson(mcp, rpc('tools/call', { name, arguments: args }), bearer(key));
const toolJson = (res: { json: any }) => JSON.parse(res.json.result.content.at(-1).text);

describe('session helpers', () => {
  it('when the body is missing or wrong, then 400 with ApiError in both forms naming idToken', async () => {
    const res = await fetch(`${svc.urls.site}/api/auth/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(res.status).toBe(400);
    const body = (await res.json()) as any;
    expect(body).toMatchObject({ code: 'VALIDATION_FAILED', error: { code: 'VALIDATION_FAILED' } });
    expect(body.message).toMatch(/idToken/);
    expect(
      (await fetch(`${svc.urls.site}/api/auth/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"idToken":' })).status,
    ).toBe(400);
    expect((await fetch(`${svc.urls.site}/api/auth/session`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: '{}' })).status).toBe(415);
  });

  it('when the token is forged or not a JWT, then 401', async () => {
    const token = await devIdToken(svc, 'forger@example.com');
    const [h, p] = token.split('.');
    const forged = `${h}.${Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(p!, 'base64url').toString()), email: 'victim@example.com' })).toString('base64url')}.${token.split('.')[2]}`;
    for (const idToken of [forged, 'not-a-jwt']) {
      const res = await postJson(`${svc.urls.site}/api/auth/session`, { idToken });
      expect(res.status).toBe(401);
      expect(res.json.code).toBe('UNAUTHORIZED');
    }
  });

  it('when signed in, then /api/auth/me knows the caller until sign-out revokes the session', async () => {
    const idToken = await devIdToken(svc, 'Me@Example.com', 'Mia');
    const res = await postJson(`${svc.urls.site}/api/auth/session`, { idToken });
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ authenticated: true, email: 'me@example.com', tenant: 'family' });
    const setCookie = res.headers.get('set-cookie')!;
    expect(setCookie).toMatch(/^cc_session=[^;]+; Path=\/; HttpOnly; SameSite=Lax/);
    const cookie = setCookie.split(';')[0]!;
    expect(await (await fetch(`${svc.urls.site}/api/auth/me`, { headers: { cookie } })).json()).toMatchObject({
      authenticated: true,
      email: 'me@example.com',
      name: 'Mia',
    });
    expect(await (await fetch(`${svc.urls.app}/api/auth/me`, { headers: { cookie } })).json()).toMatchObject({ authenticated: true });
    const out = await fetch(`${svc.urls.site}/api/auth/signout`, { method: 'POST', headers: { cookie } });
    expect(out.status).toBe(200);
    expect(out.headers.get('set-cookie')).toMatch(/cc_session=;.*Max-Age=0/);
    expect(await (await fetch(`${svc.urls.site}/api/auth/me`, { headers: { cookie } })).json()).toEqual({ authenticated: false });
    expect(await (await fetch(`${svc.urls.site}/api/auth/me`)).json()).toEqual({ authenticated: false });
  });

  it('when the sign-in is older than five minutes, then a refresh is required and no cookie is set', async () => {
    const { mintDevIdToken } = await import('../src/identity/devIdp.js');
    const idToken = await mintDevIdToken(db, svc.config, { email: 'old@example.com', authTime: Math.floor(Date.now() / 1000) - 600 });
    const res = await postJson(`${svc.urls.site}/api/auth/session`, { idToken });
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ refreshRequired: true, authenticated: false });
    expect(res.headers.get('set-cookie')).toBeNull();
  });
});

describe('workspace and keys API', () => {
  it('when a change comes without our Origin, then 403 and nothing is created', async () => {
    const cookie = await signIn(svc, 'csrf@example.com');
    const res = await fetch(`${svc.urls.app}/api/workspace`, {
      method: 'POST',
      headers: { cookie, 'content-type': 'application/json', origin: 'https://evil.example' },
      body: JSON.stringify({ familyName: 'X', firstName: 'A', lastName: 'B' }),
    });
    expect(res.status).toBe(403);
    expect((await appCall(svc, cookie, 'GET', '/api/workspace')).json).toEqual({ workspace: null });
  });

  it('when fields are invalid, then 400 naming them', async () => {
    const cookie = await signIn(svc, 'invalid@example.com');
    const res = await appCall(svc, cookie, 'POST', '/api/workspace', { familyName: '', firstName: 'x'.repeat(61), lastName: 'B' });
    expect(res.status).toBe(400);
    expect(res.json.message).toMatch(/familyName/);
    expect(res.json.message).toMatch(/firstName/);
  });

  it('when a key is minted, then the plaintext is returned once and only its SHA-256 is stored', async () => {
    const { apiKey, keyId, cookie } = await caregiverWithKey(svc, 'hash@example.com');
    expect(apiKey).toMatch(/^sk-svc-[0-9a-f]{64}$/);
    const row = await db.collection('api_keys').findOne({ _id: keyId as any });
    expect(row!.hash).toBe(createHash('sha256').update(apiKey).digest('hex'));
    expect(JSON.stringify(row)).not.toContain(apiKey.slice(7));
    const list = await appCall(svc, cookie, 'GET', '/api/keys');
    expect(list.json.keys).toEqual([expect.objectContaining({ id: keyId, last4: apiKey.slice(-4), status: 'active', lastUsedAt: null })]);
    expect(JSON.stringify(list.json)).not.toContain(apiKey.slice(7, 30));
  });

  it("when someone revokes another caregiver's key, then 404 and the key still works", async () => {
    const a = await caregiverWithKey(svc, 'owner@example.com');
    const intruder = await signIn(svc, 'intruder@example.com');
    expect((await appCall(svc, intruder, 'POST', `/api/keys/${a.keyId}/revoke`)).status).toBe(404);
    expect((await callTool(a.apiKey, 'ping')).status).toBe(200);
  });
});

describe('workspace MCP endpoint - authentication', () => {
  it('when no credential is sent, then 401 -32001 with WWW-Authenticate naming the resource metadata, for POST and GET', async () => {
    const post = await postJson(mcp, rpc('tools/list'));
    expect(post.status).toBe(401);
    expect(post.json.error.code).toBe(RPC.UNAUTHORIZED);
    expect(post.headers.get('www-authenticate')).toBe(`Bearer resource_metadata="${svc.config.appUrl}/.well-known/oauth-protected-resource"`);
    const get = await fetch(mcp);
    expect(get.status).toBe(401);
    expect(get.headers.get('www-authenticate')).toMatch(/resource_metadata=/);
  });

  it('when a client follows the challenge, then the protected-resource metadata names the endpoint, issuer and scopes', async () => {
    for (const path of ['/.well-known/oauth-protected-resource', '/.well-known/oauth-protected-resource/api/mcp']) {
      const res = await fetch(`${svc.urls.app}${path}`);
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({
        resource: `${svc.config.appUrl}/api/mcp`,
        authorization_servers: [svc.config.authUrl],
        scopes_supported: ['profile:read', 'care_circle:read', 'care_circle:write'],
        bearer_methods_supported: ['header'],
      });
    }
  });

  it('when the key is malformed or unknown, then 401 -32001 saying which', async () => {
    for (const [key, message] of [
      [`sk-svc-${'a'.repeat(63)}`, /Malformed API key/],
      [`sk-svc-${'A'.repeat(64)}`, /Malformed API key/],
      [`sk-svc-${'0'.repeat(64)}`, /Unknown API key/],
      ['sk-live-123', /Unknown credential/],
    ] as const) {
      const res = await postJson(mcp, rpc('ping'), bearer(key));
      expect(res.status).toBe(401);
      expect(res.json.error.code).toBe(RPC.UNAUTHORIZED);
      expect(res.json.error.message).toMatch(message);
    }
    expect((await postJson(mcp, rpc('ping'), { authorization: 'Basic abc' })).status).toBe(401);
  });

  it('when a GET carries a valid credential, then 405 with Allow: POST', async () => {
    const { apiKey } = await caregiverWithKey(svc, 'getter@example.com');
    const res = await fetch(mcp, { headers: bearer(apiKey) });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('POST');
  });

  it('when a key is revoked through one gateway, then the very next request on another gateway gets 403 -32001', async () => {
    const { apiKey, keyId, cookie } = await caregiverWithKey(svc, 'revoke@example.com');
    const second = await startTestService({ nats: true, role: 'gateway', mongoUrl: svc.mongoUrl, env: { BUS_NAMESPACE: svc.config.busNamespace } });
    try {
      const other = `${second.urls.app}/api/mcp`;
      expect((await postJson(other, rpc('ping'), bearer(apiKey))).status).toBe(200);
      expect((await appCall(svc, cookie, 'POST', `/api/keys/${keyId}/revoke`)).json.key.status).toBe('revoked');
      const res = await postJson(other, rpc('ping'), bearer(apiKey));
      expect(res.status).toBe(403);
      expect(res.json.error).toMatchObject({ code: RPC.UNAUTHORIZED, message: 'API key revoked' });
    } finally {
      await second.stop();
    }
  });

  it('when one key sends more than 60 requests at once over two gateways, then the bucket of 60 holds and the rest get 429 -32029 with Retry-After', async () => {
    const { apiKey } = await caregiverWithKey(svc, 'busy@example.com');
    const second = await startTestService({ nats: true, role: 'gateway', mongoUrl: svc.mongoUrl, env: { BUS_NAMESPACE: svc.config.busNamespace } });
    try {
      const urls = [mcp, `${second.urls.app}/api/mcp`];
      const started = Date.now();
      const replies = await Promise.all(Array.from({ length: 75 }, (_, i) => postJson(urls[i % 2]!, rpc('ping', undefined, i), bearer(apiKey))));
      // The bucket refills one token a second (60 a minute), so a slow run may admit a few more.
      const refilled = Math.ceil((Date.now() - started) / 1000);
      const admitted = replies.filter((r) => r.status === 200).length;
      expect(admitted).toBeGreaterThanOrEqual(60);
      expect(admitted).toBeLessThanOrEqual(60 + refilled);
      const res = replies.find((r) => r.status !== 200)!;
      expect(res.status).toBe(429);
      expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(res.json.error).toMatchObject({ code: RPC.RATE_LIMITED, data: { retryAfterSec: expect.any(Number) } });
    } finally {
      await second.stop();
    }
  });

  it('when an in-app agent calls with the session cookie past its own budget, then 429 -32029 with Retry-After, each batch message counting, and the API key keeps its own bucket', async () => {
    const { cookie, apiKey } = await caregiverWithKey(svc, 'inapp@example.com');
    const res = await postJson(mcp, rpc('tools/call', { name: 'ping', arguments: {} }), { cookie });
    expect(res.json.result.content[0].text).toMatch(/via=session$/);
    // The person's bucket holds 120 (RATE_MCP_SESSION_PER_MIN) and regains one each 0.5 s: after
    // the ping, two batches of 50 leave 19 and a third of 50 is refused as a whole.
    expect(svc.config.rateMcpSessionPerMin).toBe(120);
    const batch = Array.from({ length: 50 }, (_, i) => rpc('ping', undefined, i));
    const replies = [];
    for (let i = 0; i < 3; i++) replies.push(await postJson(mcp, batch, { cookie }));
    expect(replies.map((r) => r.status)).toEqual([200, 200, 429]);
    const refused = replies[2]!;
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(refused.json).toMatchObject({
      id: null,
      error: { code: RPC.RATE_LIMITED, message: 'Rate limit exceeded', data: { retryAfterSec: Number(refused.headers.get('retry-after')) } },
    });
    // Another session of the same person shares the bucket; the API key has its own.
    expect((await postJson(mcp, batch, { cookie: await signIn(svc, 'inapp@example.com') })).status).toBe(429);
    expect((await postJson(mcp, rpc('ping'), bearer(apiKey))).status).toBe(200);
  });
});

/** Batch messages the workspace server left unanswered so far, from the process's own metrics. */
async function skippedItems(): Promise<number> {
  const text = await (await fetch(svc.urls.metrics!)).text();
  return Number(/^carecircle_mcp_batch_items_skipped_total\{server="carecircle-workspace"\} (\d+)/m.exec(text)?.[1] ?? 0);
}

describe('workspace MCP endpoint - reply size', () => {
  it('when a batch of 50 large list_care_events passes MAX_REPLY_BYTES, then 413 -32600 before most of it is built; a batch under the limit is answered whole', async () => {
    const me = await caregiverWithKey(svc, 'bulk@example.com');
    const base = Date.parse('2026-10-01T00:00:00Z');
    const note = 'n'.repeat(2_000);
    await appendCareEvents(
      svc.timelines,
      Array.from({ length: 50 }, (_, i) => ({
        _id: `evt_bulk_${i}`,
        lovedOneId: me.lovedOneId,
        workspaceId: me.workspaceId,
        source: 'partner' as const,
        institutionId: 'inst_test',
        eventType: 'note_added',
        occurredAt: new Date(base + i * 60_000),
        receivedAt: new Date(),
        payload: { note, i },
      })),
    );
    const list = (id: number, limit: number) => rpc('tools/call', { name: 'list_care_events', arguments: { lovedOneId: me.lovedOneId, limit } }, id);
    const cookie = { cookie: me.cookie };
    const one = await postJson(mcp, [list(0, 50)], cookie);
    expect(one.status).toBe(200);
    // Each reply is about 100 KB, so 50 of them come to about 5 MB against the 1 MiB limit.
    const perReply = Buffer.byteLength(one.text);
    expect(perReply * 50).toBeGreaterThan(4 * svc.config.maxReplyBytes);

    const before = await skippedItems();
    const res = await postJson(
      mcp,
      Array.from({ length: 50 }, (_, i) => list(i, 50)),
      cookie,
    );
    expect(res.status).toBe(413);
    expect(res.json).toMatchObject({ id: null, error: { code: RPC.INVALID_REQUEST, data: { hint: 'Send fewer items per batch or a smaller limit.' } } });
    expect(res.json.error.message).toMatch(/^Reply too large: \d+ bytes after \d+ of the batch's 50 messages, the limit is 1048576$/);
    // Built until the replies passed the limit (and one more beside it at most); the rest never ran.
    const built = Math.ceil(svc.config.maxReplyBytes / perReply) + 1;
    expect(await skippedItems()).toBeGreaterThanOrEqual(before + 50 - built);

    const small = await postJson(
      mcp,
      Array.from({ length: 50 }, (_, i) => list(i, 1)),
      cookie,
    );
    expect(small.status).toBe(200);
    expect(small.json.map((r: any) => r.id)).toEqual(Array.from({ length: 50 }, (_, i) => i));
    expect(small.json.every((r: any) => JSON.parse(r.result.content.at(-1).text).events[0].id === 'evt_bulk_49')).toBe(true);
  });
});

describe('workspace MCP endpoint - bad input', () => {
  let key: string;
  beforeAll(async () => {
    key = (await caregiverWithKey(svc, 'badinput@example.com')).apiKey;
  });

  it('when the body is not JSON, the wrong type, or too large, then 400/415/413', async () => {
    expect((await postJson(mcp, '{"jsonrpc":', bearer(key))).json.error.code).toBe(RPC.PARSE_ERROR);
    const wrongType = await fetch(mcp, { method: 'POST', headers: { ...bearer(key), 'content-type': 'text/plain' }, body: JSON.stringify(rpc('ping')) });
    expect(wrongType.status).toBe(415);
    const big = await postJson(mcp, rpc('tools/call', { name: 'ping', arguments: { pad: 'x'.repeat(300 * 1024) } }), bearer(key));
    expect(big.status).toBe(413);
  });

  it('when limit is 0, 51 or "ten", then -32602 naming limit', async () => {
    for (const limit of [0, 51, 'ten']) {
      const res = await callTool(key, 'list_care_events', { limit });
      expect(res.json.error.code).toBe(RPC.INVALID_PARAMS);
      expect(res.json.error.message).toMatch(/limit/);
    }
  });

  it('when a notification is posted, then 202 with an empty body', async () => {
    const res = await postJson(mcp, { jsonrpc: '2.0', method: 'notifications/initialized' }, bearer(key));
    expect(res.status).toBe(202);
    expect(res.text).toBe('');
  });

  it('when the tool does not exist, then -32601', async () => {
    expect((await callTool(key, 'delete_workspace')).json.error.code).toBe(RPC.METHOD_NOT_FOUND);
  });
});

describe('workspace MCP endpoint - tools', () => {
  it('when pinged, then the text names the platform, uid, tenant and auth method', async () => {
    const { apiKey } = await caregiverWithKey(svc, 'pinger@example.com');
    const res = await callTool(apiKey, 'ping');
    expect(res.json.result.content[0].text).toMatch(/^pong from carecircle - uid=dev-[0-9a-f]+ tenant=family via=api-key$/);
  });

  it('when asked for the profile, then uid, email, tenant, workspace name and member count', async () => {
    const { apiKey, workspaceId } = await caregiverWithKey(svc, 'profile@example.com');
    expect(toolJson(await callTool(apiKey, 'get_user_profile'))).toMatchObject({
      email: 'profile@example.com',
      tenant: 'family',
      workspace: { id: workspaceId, name: 'Family of profile@example.com', familyMemberCount: 1 },
    });
  });

  it('when listing loved ones and their events, then only this workspace, newest first, limit per loved one', async () => {
    const me = await caregiverWithKey(svc, 'events@example.com');
    const other = await caregiverWithKey(svc, 'stranger@example.com', { firstName: 'Other', lastName: 'Person' });
    const cookie = me.cookie;
    const second = await appCall(svc, cookie, 'POST', '/api/workspace/loved-ones', { firstName: 'Walt', lastName: 'Rivera' });
    const base = Date.parse('2026-11-01T10:00:00Z');
    for (const [lovedOneId, n] of [
      [me.lovedOneId, 25],
      [second.json.id, 3],
      [other.lovedOneId, 2],
    ] as const) {
      await appendCareEvents(
        svc.timelines,
        Array.from({ length: n }, (_, i) => ({
          _id: `evt_${lovedOneId}_${i}`,
          lovedOneId,
          workspaceId: 'x',
          source: 'partner' as const,
          institutionId: 'inst_test',
          eventType: 'vital_recorded',
          occurredAt: new Date(base + i * 60_000),
          receivedAt: new Date(),
          payload: { vital_type: 'heart_rate', value: 60 + i, unit: '/min', recorded_by: 'n1' },
        })),
      );
    }
    const lovedOnes = toolJson(await callTool(me.apiKey, 'list_loved_ones')).lovedOnes;
    expect(lovedOnes.map((l: any) => l.name)).toEqual(['Rosa Rivera', 'Walt Rivera']);

    const one = toolJson(await callTool(me.apiKey, 'list_care_events', { lovedOneId: me.lovedOneId }));
    expect(one.count).toBe(20); // the default limit
    expect(one.events[0].payload.value).toBe(60 + 24);
    expect(one.events.map((e: any) => e.occurredAt)).toEqual([...one.events.map((e: any) => e.occurredAt)].sort().reverse());

    const all = toolJson(await callTool(me.apiKey, 'list_care_events', { limit: 2 }));
    expect(all.byLovedOne.map((b: any) => b.events.length)).toEqual([2, 2]);
    expect(all.events.every((e: any) => e.lovedOneId !== other.lovedOneId)).toBe(true);
  });

  it("when a lovedOneId is another caregiver's or does not exist, then the same -32003 with no hint of which", async () => {
    const me = await caregiverWithKey(svc, 'nosy@example.com');
    const other = await caregiverWithKey(svc, 'private@example.com');
    const foreign = await callTool(me.apiKey, 'list_care_events', { lovedOneId: other.lovedOneId });
    const missing = await callTool(me.apiKey, 'list_care_events', { lovedOneId: 'lo_doesnotexist00000000' });
    expect(foreign.json.error.code).toBe(RPC.NOT_AUTHORIZED);
    expect(foreign.json.error).toEqual(missing.json.error);
  });

  it('when an agency user asks for loved ones, then a clear tool error', async () => {
    const { apiKey, keyId } = await caregiverWithKey(svc, 'agency@example.com');
    const key = await db.collection('api_keys').findOne({ _id: keyId as any });
    await db.collection('users').updateOne({ _id: key!.uid }, { $set: { tenant: 'agency' } });
    const res = await callTool(apiKey, 'list_loved_ones');
    expect(res.json.result.isError).toBe(true);
    expect(res.json.result.content[0].text).toMatch(/family caregivers.*agency/);
  });
});

describe('audit log', () => {
  it('when requests are made, then one row each with method, tool, success and auth method, and never the arguments', async () => {
    const { apiKey, cookie, keyId } = await caregiverWithKey(svc, 'audited@example.com');
    // Counted for this caller only: other tests' rows, written off their reply paths, may still be landing.
    const uid = (await db.collection('api_keys').findOne({ _id: keyId as any }))!.uid;
    const before = await db.collection('mcp_audit_log').countDocuments({ uid });
    await callTool(apiKey, 'list_care_events', { lovedOneId: 'lo_secret_marker_value' });
    await postJson(mcp, rpc('tools/list'), bearer(apiKey));
    // Written off the reply path: the rows arrive shortly after the replies, exactly one each.
    await expect.poll(() => db.collection('mcp_audit_log').countDocuments({ uid }), { timeout: 5_000 }).toBe(before + 2);
    // The person's activity list is written beside the audit row, so it may land a moment later.
    await expect
      .poll(async () => (await appCall(svc, cookie, 'GET', '/api/activity')).json.activity.slice(0, 2), { timeout: 5_000 })
      .toEqual([
        expect.objectContaining({ method: 'tools/list', tool: null, success: true, via: 'api-key' }),
        expect.objectContaining({ method: 'tools/call', tool: 'list_care_events', success: false, via: 'api-key' }),
      ]);
    const rows = await db.collection('mcp_audit_log').find().toArray();
    expect(JSON.stringify(rows)).not.toContain('lo_secret_marker_value');
  });

  it('when a request is refused before authentication, then no row is written', async () => {
    // A row for nobody would have no uid; other tests' rows may still be landing, so only those count.
    const anonymous = () => db.collection('mcp_audit_log').countDocuments({ uid: null });
    const before = await anonymous();
    await postJson(mcp, rpc('ping'), bearer(`sk-svc-${'f'.repeat(64)}`));
    // An authenticated call after it: once its row is stored, the refused one would have been too.
    const { apiKey, keyId } = await caregiverWithKey(svc, 'after-refusal@example.com');
    const uid = (await db.collection('api_keys').findOne({ _id: keyId as any }))!.uid;
    await postJson(mcp, rpc('ping'), bearer(apiKey));
    await expect.poll(() => db.collection('mcp_audit_log').countDocuments({ uid }), { timeout: 5_000 }).toBe(1);
    expect(await anonymous()).toBe(before);
  });
});

describe('MCP SDK client with an API key', () => {
  it('when connected with a key, then it lists and calls every tool', async () => {
    const { apiKey, lovedOneId } = await caregiverWithKey(svc, 'sdk@example.com');
    const client = new Client({ name: 'carecircle-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(mcp), { requestInit: { headers: bearer(apiKey) } }));
    try {
      expect((await client.listTools()).tools.map((t) => t.name)).toEqual([
        'ping',
        'get_user_profile',
        'list_loved_ones',
        'list_care_events',
        'get_health_summary',
        'list_medications',
        'update_medication',
        'add_care_note',
        'log_medication_dose',
        'record_vital',
        'retract_entry',
        'add_appointment',
        'list_appointments',
        'add_task',
        'update_task',
        'list_tasks',
      ]);
      const soon = new Date(Date.now() + 86_400_000).toISOString();
      for (const [name, args] of [
        ['ping', {}],
        ['get_user_profile', {}],
        ['list_loved_ones', {}],
        ['list_care_events', { lovedOneId, limit: 5 }],
        ['update_medication', { lovedOneId, action: 'add', medication: { name: 'Metformin', times: ['08:00'], timeZone: 'UTC' } }],
        ['get_health_summary', { lovedOneId }],
        ['list_medications', { lovedOneId }],
        ['add_appointment', { lovedOneId, title: 'Podiatrist', start: soon, timeZone: 'Europe/Madrid' }],
        ['list_appointments', { lovedOneId }],
        ['add_task', { lovedOneId, title: 'Pick up the walker', due: soon }],
        ['list_tasks', { lovedOneId }],
      ] as const) {
        const res = await client.callTool({ name, arguments: args });
        expect(res.isError, JSON.stringify(res)).toBeFalsy();
      }
      // The SDK checks each result against the tool's outputSchema, so a result off its schema fails here.
      const { tasks } = (await client.callTool({ name: 'list_tasks', arguments: { lovedOneId } })).structuredContent as { tasks: { id: string }[] };
      const taken = await client.callTool({ name: 'update_task', arguments: { lovedOneId, taskId: tasks[0]!.id, action: 'take' } });
      expect(taken.structuredContent).toMatchObject({ task: { state: 'taken' } });
    } finally {
      await client.close();
    }
  });
});
