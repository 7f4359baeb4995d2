// The public directory MCP endpoint end to end: gateway → bus → worker → tools, over both buses.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RPC } from '../src/rpc/codes.js';
import { postJson, rpc, startTestService, type TestService } from './harness/service.js';

describe.each([
  ['in-process bus', false],
  ['NATS bus', true],
] as const)('directory MCP over the %s', (_label, nats) => {
  let svc: TestService;
  let mcp: string;
  beforeAll(async () => {
    svc = await startTestService({ nats });
    mcp = `${svc.urls.site}/api/mcp`;
  });
  afterAll(async () => svc?.stop());

  const call = (name: string, args: Record<string, unknown>, headers?: Record<string, string>) =>
    postJson(mcp, rpc('tools/call', { name, arguments: args }), headers);

  it('when asked with GET, then it describes itself and its tools', async () => {
    const res = await fetch(mcp);
    expect(res.status).toBe(200);
    const body = (await res.json()) as any;
    expect(body).toMatchObject({ transport: 'streamable-http', protocolVersion: '2025-03-26', auth: 'none', endpoint: expect.stringMatching(/\/api\/mcp$/) });
    expect(body.tools.map((t: any) => t.name)).toEqual(['search_care_resources', 'get_channel', 'calculate_long_term_care_cost']);
    for (const tool of body.tools) {
      expect(tool.inputSchema.additionalProperties).toBe(false);
      expect(tool.annotations.readOnlyHint).toBe(true);
      expect(tool.title).toBeTruthy();
    }
  });

  it('when a GET asks only for an event stream, then 405 with Allow: POST', async () => {
    const res = await fetch(mcp, { headers: { accept: 'text/event-stream' } });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('POST');
  });

  it('when initialized, then it answers our version, or echoes 2025-06-18', async () => {
    const a = await postJson(mcp, rpc('initialize', { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 't', version: '1' } }));
    expect(a.json.result).toMatchObject({ protocolVersion: '2025-03-26', serverInfo: { name: 'carecircle-directory' }, capabilities: { tools: {} } });
    const b = await postJson(mcp, rpc('initialize', { protocolVersion: '2025-06-18' }));
    expect(b.json.result.protocolVersion).toBe('2025-06-18');
  });

  it('when notified, then 204 with an empty body', async () => {
    const res = await postJson(mcp, { jsonrpc: '2.0', method: 'notifications/initialized' });
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
  });

  it('when pinged, then an empty result', async () => {
    expect((await postJson(mcp, rpc('ping', undefined, 'p'))).json).toEqual({ jsonrpc: '2.0', id: 'p', result: {} });
  });

  it('when searching, then the best match comes first with its phone and link', async () => {
    const res = await call('search_care_resources', { query: 'alzheimers helpline', limit: 3 });
    const text = JSON.parse(res.json.result.content[0].text);
    expect(text.results.length).toBeGreaterThan(0);
    expect(text.results.length).toBeLessThanOrEqual(3);
    expect(text.results[0].title).toMatch(/Alzheimer's Association/);
    expect(res.json.result.structuredContent).toBeUndefined();
  });

  it('when the client negotiated 2025-06-18, then results carry structuredContent too', async () => {
    const res = await call('search_care_resources', { query: 'respite' }, { 'mcp-protocol-version': '2025-06-18' });
    expect(res.json.result.structuredContent.results.length).toBeGreaterThan(0);
    expect(JSON.parse(res.json.result.content[0].text)).toEqual(res.json.result.structuredContent);
  });

  it('when asking for a channel, then its details; an unknown slug is a tool error naming where slugs come from', async () => {
    const list = await fetch(mcp).then((r) => r.json() as any);
    expect(list.tools).toBeDefined();
    const known = await call('get_channel', { slug: 'hospice-and-grief' });
    expect(JSON.parse(known.json.result.content[0].text)).toMatchObject({
      slug: 'hospice-and-grief',
      url: expect.stringContaining('/channels/hospice-and-grief'),
    });
    const unknown = await call('get_channel', { slug: 'no-such-channel' });
    expect(unknown.json.result.isError).toBe(true);
    expect(unknown.json.result.content[0].text).toMatch(/search_care_resources.*category "channel"/);
  });

  it('when estimating costs, then figures come with the data year and source', async () => {
    const res = await call('calculate_long_term_care_cost', { careType: 'assisted_living', years: 2 });
    const est = JSON.parse(res.json.result.content[0].text);
    expect(est).toMatchObject({ careType: 'assisted_living', dataYear: 2025, monthly: 6200, annual: 74400 });
    expect(est.perYear).toHaveLength(2);
    expect(est.source.url).toMatch(/^https:/);
  });

  it('when tool arguments are invalid, then -32602 naming the field', async () => {
    for (const [args, field] of [
      [{ query: 'x', limit: 0 }, 'limit'],
      [{ query: 'x', limit: 26 }, 'limit'],
      [{ query: '' }, 'query'],
      [{ query: 'x', state: 'Atlantis' }, 'state'],
      [{ query: 'x', color: 'red' }, 'color'],
    ] as const) {
      const res = await call('search_care_resources', args);
      expect(res.json.error.code).toBe(RPC.INVALID_PARAMS);
      expect(res.json.error.message).toContain(field);
    }
  });

  it('when a method or tool does not exist, then -32601', async () => {
    expect((await postJson(mcp, rpc('resources/list'))).json.error.code).toBe(RPC.METHOD_NOT_FOUND);
    expect((await call('delete_everything', {})).json.error.code).toBe(RPC.METHOD_NOT_FOUND);
  });

  it('when the body is not JSON, then 400 -32700', async () => {
    const res = await postJson(mcp, '{"jsonrpc": "2.0", "id": 1, "method": ');
    expect(res.status).toBe(400);
    expect(res.json).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: RPC.PARSE_ERROR } });
  });

  it('when the envelope is invalid, then 400 -32600', async () => {
    const res = await postJson(mcp, { jsonrpc: '2.0', id: 4, method: 42 });
    expect(res.status).toBe(400);
    expect(res.json).toMatchObject({ id: 4, error: { code: RPC.INVALID_REQUEST } });
  });

  it('when sent a batch, then it answers a batch', async () => {
    const res = await postJson(mcp, [rpc('ping', undefined, 1), { jsonrpc: '2.0', method: 'notifications/initialized' }, rpc('tools/list', undefined, 2)]);
    expect(res.status).toBe(200);
    expect(res.json.map((r: any) => r.id)).toEqual([1, 2]);
  });

  it('when MCP-Protocol-Version is unsupported, then 400', async () => {
    const res = await postJson(mcp, rpc('ping'), { 'mcp-protocol-version': '2023-01-01' });
    expect(res.status).toBe(400);
    expect(res.json.error.code).toBe(RPC.INVALID_REQUEST);
  });

  it('when the content type is not JSON, then 415', async () => {
    const res = await fetch(mcp, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: JSON.stringify(rpc('ping')) });
    expect(res.status).toBe(415);
    expect(((await res.json()) as any).error.message).toMatch(/application\/json/);
  });

  it('when the body is too large, then 413', async () => {
    const res = await postJson(mcp, rpc('tools/call', { name: 'search_care_resources', arguments: { query: 'x'.repeat(300 * 1024) } }));
    expect(res.status).toBe(413);
  });

  it('when another HTTP method is used, then 405 with Allow', async () => {
    const res = await fetch(mcp, { method: 'PUT' });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toMatch(/POST/);
  });

  it('when a browser on a foreign origin calls, then 403; an allowed origin gets CORS headers', async () => {
    const bad = await postJson(mcp, rpc('ping'), { origin: 'https://evil.example' });
    expect(bad.status).toBe(403);
    const site = new URL(svc.config.siteUrl).origin;
    const good = await postJson(mcp, rpc('ping'), { origin: site });
    expect(good.status).toBe(200);
    expect(good.headers.get('access-control-allow-origin')).toBe(site);
    const pre = await fetch(mcp, {
      method: 'OPTIONS',
      headers: { origin: site, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type, mcp-protocol-version' },
    });
    expect(pre.status).toBe(204);
    expect(pre.headers.get('access-control-allow-headers')).toMatch(/MCP-Protocol-Version/i);
  });

  it('when probed, then /healthz and /readyz answer', async () => {
    expect((await fetch(`${svc.urls.site}/healthz`)).status).toBe(200);
    const ready = await fetch(`${svc.urls.site}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({ bus: 'up', mongo: 'up', busKind: nats ? 'nats' : 'memory' });
  });

  it('when a path is unknown, then 404 ApiError in both forms', async () => {
    const res = await fetch(`${svc.urls.site}/no/such/page`);
    expect(res.status).toBe(404);
    const body = (await res.json()) as any;
    expect(body.error).toEqual({ code: 'NOT_FOUND', message: body.message, hint: body.hint });
    expect(body.code).toBe('NOT_FOUND');
  });
});

describe('directory MCP - limits shared across gateways', () => {
  it('when one client address spends its budget across two gateways, then 429 with Retry-After and -32029', async () => {
    const env = { RATE_DIRECTORY_MCP_PER_MIN: '4', BUS_NAMESPACE: 'shared-limit' };
    const a = await startTestService({ nats: true, env });
    const b = await startTestService({ nats: true, role: 'gateway', mongoUrl: a.mongoUrl, env });
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 4; i++) statuses.push((await postJson(`${(i % 2 ? b : a).urls.site}/api/mcp`, rpc('ping'))).status);
      expect(statuses).toEqual([200, 200, 200, 200]);
      // A token is minted every 15 s on the clock: one may land between these calls, never two.
      let limited = await postJson(`${b.urls.site}/api/mcp`, rpc('ping'));
      if (limited.status === 200) limited = await postJson(`${a.urls.site}/api/mcp`, rpc('ping'));
      expect(limited.status).toBe(429);
      expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(limited.json.error).toMatchObject({ code: RPC.RATE_LIMITED, data: { retryAfterSec: expect.any(Number) } });
    } finally {
      await b.stop();
      await a.stop();
    }
  });

  it('when no worker is running, then the gateway answers 503 with Retry-After after its retry window', async () => {
    const gw = await startTestService({ nats: true, role: 'gateway', env: { GATEWAY_RETRY_WINDOW_MS: '300', BUS_TIMEOUT_MS: '200' } });
    try {
      const res = await postJson(`${gw.urls.site}/api/mcp`, rpc('ping'));
      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).toBe('2');
      expect(res.json.error.code).toBe(RPC.UNAVAILABLE);
    } finally {
      await gw.stop();
    }
  });
});
