// The site listener's lean path for the directory's POST /api/mcp against the Koa pipeline it stands
// in for: the same corpus sent to a service with the lean path and to one without (LEAN_PATH=false)
// gets the same status, body and headers, and the lean path really answered what it should. The
// first answers the directory on a worker thread (DIRECTORY_THREADS=1), the second on its main
// thread, so the corpus holds the thread to the same answers too.
import { request } from 'node:http';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { sliceSubject } from '../src/slice/contract.js';
import { startTestService, type TestService } from './harness/service.js';

interface Sent {
  method?: string;
  target?: string;
  headers?: Record<string, string>;
  /** One string is sent with Content-Length; several are sent chunked. */
  body?: string | string[];
}

interface Got {
  status: number;
  headers: Record<string, string>;
  body: string;
}

const IGNORED = new Set(['date', 'connection', 'keep-alive']);
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

function send(base: string, s: Sent): Promise<Got> {
  const url = new URL(base);
  const chunks = s.body === undefined ? [] : typeof s.body === 'string' ? [s.body] : s.body;
  const headers = { ...(typeof s.body === 'string' ? { 'content-length': String(Buffer.byteLength(s.body)) } : {}), ...s.headers };
  return new Promise((resolve, reject) => {
    const req = request(
      { host: url.hostname, port: url.port, method: s.method ?? 'POST', path: s.target ?? '/api/mcp', headers, agent: false, setHost: !('host' in headers) },
      (res) => {
        const parts: Buffer[] = [];
        res.on('data', (c: Buffer) => parts.push(c));
        res.on('error', reject);
        res.on('end', () => {
          const kept: Record<string, string> = {};
          for (const [k, v] of Object.entries(res.headers)) if (!IGNORED.has(k) && v !== undefined) kept[k] = String(v);
          resolve({ status: res.statusCode ?? 0, headers: kept, body: Buffer.concat(parts).toString('utf8') });
        });
      },
    );
    req.on('error', reject);
    for (const c of chunks) req.write(c);
    req.end();
  });
}

/** `{site}` in a request header stands for the service's own site origin (each service has its own port). */
const forService = (sent: Sent, site: string): Sent =>
  sent.headers ? { ...sent, headers: Object.fromEntries(Object.entries(sent.headers).map(([k, v]) => [k, v.replaceAll('{site}', site)])) } : sent;

/** The service's own origin in an answer reads `{site}`, so two services' answers compare. */
const unsited = (got: Got, site: string): Got => ({
  ...got,
  body: got.body.replaceAll(site, '{site}'),
  headers: Object.fromEntries(Object.entries(got.headers).map(([k, v]) => [k, v.replaceAll(site, '{site}')])),
});

/** An id the service made up stands for any: each side makes its own. */
function normalised(got: Got, sent: Sent): Got {
  const incoming = sent.headers?.['x-request-id'];
  const id = got.headers['x-request-id'];
  if (incoming !== undefined && /^[A-Za-z0-9._:-]{1,100}$/.test(incoming)) expect(id).toBe(incoming);
  else if (id !== undefined) {
    expect(id).toMatch(UUID);
    return { ...got, headers: { ...got.headers, 'x-request-id': '(made)' } };
  }
  return got;
}

const JSON_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
const MODERN = '2026-07-28';
const META = { 'io.modelcontextprotocol/protocolVersion': MODERN, 'io.modelcontextprotocol/clientCapabilities': {} };
const call = (args: Record<string, unknown>, id: unknown = 1, name = 'search_care_resources') =>
  JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } });
const deep = (n: number) => `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":${'['.repeat(n)}${']'.repeat(n)}}}`;

/** Lean-path requests taken by the site listener so far, from the process's own metrics. */
async function leanCount(svc: TestService): Promise<number> {
  const text = await (await fetch(svc.urls.metrics!)).text();
  return Number(/^carecircle_http_lean_requests_total\{surface="site"\} (\d+)/m.exec(text)?.[1] ?? 0);
}

/** Sends each request to both services in turn and expects the same answer; returns the lean answers. */
async function compare(
  lean: TestService,
  koa: TestService,
  corpus: [string, Sent][],
  base: (svc: TestService) => string = (s) => s.urls.site!,
): Promise<Got[]> {
  const answers: Got[] = [];
  const ask = async (svc: TestService, sent: Sent) => {
    const site = new URL(svc.config.siteUrl).origin;
    return unsited(normalised(await send(base(svc), forService(sent, site)), sent), site);
  };
  for (const [label, sent] of corpus) {
    const a = await ask(lean, sent);
    const b = await ask(koa, sent);
    expect({ label, ...a }).toEqual({ label, ...b });
    answers.push(a);
  }
  return answers;
}

describe('the lean path for the directory POST /api/mcp, against the Koa pipeline', () => {
  let lean: TestService;
  let koa: TestService;
  beforeAll(async () => {
    [lean, koa] = await Promise.all([
      startTestService({ env: { DIRECTORY_THREADS: '1' } }),
      startTestService({ env: { LEAN_PATH: 'false', DIRECTORY_THREADS: '0' } }),
    ]);
  });
  afterAll(async () => Promise.all([lean?.stop(), koa?.stop()]));

  it('when the corpus of good and bad requests is sent to both, then every answer is the same and the lean path took each plain POST', async () => {
    const site = (svc: TestService) => svc.urls.site!;
    const allowedOrigin = '{site}';
    const taken: [string, Sent][] = [
      ['a search, 2025 era', { headers: { ...JSON_HEADERS, 'mcp-protocol-version': '2025-06-18' }, body: call({ query: 'alzheimers helpline', limit: 3 }) }],
      ['a search naming no version', { headers: JSON_HEADERS, body: call({ query: 'respite care', limit: 5, state: 'OH' }, 'x7') }],
      // Compressed as the Koa path compresses it: same encoding, threshold and headers.
      ['a large search, brotli', { headers: { ...JSON_HEADERS, 'accept-encoding': 'gzip, deflate, br' }, body: call({ query: 'care', limit: 25 }, 'br') }],
      ['a large search, gzip', { headers: { ...JSON_HEADERS, 'accept-encoding': 'gzip' }, body: call({ query: 'care', limit: 25 }, 'gz') }],
      ['a small search, gzip asked', { headers: { ...JSON_HEADERS, 'accept-encoding': 'gzip' }, body: call({ query: 'hospice', limit: 1 }, 'small') }],
      [
        'a search, 2026-07-28',
        {
          headers: { ...JSON_HEADERS, 'mcp-protocol-version': MODERN, 'mcp-method': 'tools/call', 'mcp-name': 'search_care_resources' },
          body: JSON.stringify({
            jsonrpc: '2.0',
            id: 2,
            method: 'tools/call',
            params: { name: 'search_care_resources', arguments: { query: 'hospice', limit: 2 }, _meta: META },
          }),
        },
      ],
      [
        '2026-07-28 with a header that disagrees',
        {
          headers: { ...JSON_HEADERS, 'mcp-protocol-version': MODERN, 'mcp-method': 'tools/list' },
          body: JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'get_channel', arguments: { slug: 'x' }, _meta: META } }),
        },
      ],
      [
        'initialize',
        {
          headers: JSON_HEADERS,
          body: JSON.stringify({
            jsonrpc: '2.0',
            id: 1,
            method: 'initialize',
            params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 't', version: '1' } },
          }),
        },
      ],
      ['a notification (204, no body)', { headers: JSON_HEADERS, body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) }],
      [
        'a batch of two',
        {
          headers: JSON_HEADERS,
          body: JSON.stringify([
            { jsonrpc: '2.0', id: 1, method: 'ping' },
            { jsonrpc: '2.0', id: 2, method: 'tools/list' },
          ]),
        },
      ],
      ['an empty batch', { headers: JSON_HEADERS, body: '[]' }],
      [
        'a batch over MCP_MAX_BATCH',
        { headers: JSON_HEADERS, body: JSON.stringify(Array.from({ length: 51 }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'ping' }))) },
      ],
      ['an unknown tool', { headers: JSON_HEADERS, body: call({}, 4, 'no_such_tool') }],
      ['bad arguments', { headers: JSON_HEADERS, body: call({ query: 5 }, 5) }],
      ['an unknown method', { headers: JSON_HEADERS, body: JSON.stringify({ jsonrpc: '2.0', id: 6, method: 'nope/nope' }) }],
      ['bad JSON', { headers: JSON_HEADERS, body: '{"jsonrpc":"2.0","id":1,' }],
      ['an empty body', { headers: JSON_HEADERS, body: '' }],
      ['JSON nested too deep', { headers: JSON_HEADERS, body: deep(100) }],
      ['a body over the limit by Content-Length', { headers: JSON_HEADERS, body: call({ query: 'x'.repeat(300 * 1024) }) }],
      ['a chunked body over the limit', { headers: JSON_HEADERS, body: Array.from({ length: 40 }, () => ' '.repeat(8 * 1024)) }],
      [
        'a chunked search',
        { headers: JSON_HEADERS, body: [call({ query: 'adult day', limit: 2 }, 8).slice(0, 20), call({ query: 'adult day', limit: 2 }, 8).slice(20)] },
      ],
      ['text/plain', { headers: { ...JSON_HEADERS, 'content-type': 'text/plain' }, body: call({ query: 'x' }) }],
      ['no Content-Type', { headers: { accept: 'application/json' }, body: call({ query: 'x' }) }],
      ['JSON with a charset', { headers: { ...JSON_HEADERS, 'content-type': 'Application/JSON; charset=utf-8' }, body: call({ query: 'meals', limit: 1 }) }],
      ['a +json type', { headers: { ...JSON_HEADERS, 'content-type': 'application/vnd.example+json' }, body: call({ query: 'meals', limit: 1 }) }],
      ['a foreign Origin', { headers: { ...JSON_HEADERS, origin: 'https://evil.example' }, body: call({ query: 'x' }) }],
      ['an allowed Origin', { headers: { ...JSON_HEADERS, origin: allowedOrigin }, body: call({ query: 'caregiver support', limit: 2 }) }],
      ['an allowed Origin and bad JSON', { headers: { ...JSON_HEADERS, origin: allowedOrigin }, body: '{' }],
      ['a well-formed X-Request-Id', { headers: { ...JSON_HEADERS, 'x-request-id': 'req-1.2:3_x' }, body: call({ query: 'x' }) }],
      ['a malformed X-Request-Id', { headers: { ...JSON_HEADERS, 'x-request-id': 'has spaces in it' }, body: '{' }],
    ];
    const passed: [string, Sent][] = [
      ['a foreign Host', { headers: { ...JSON_HEADERS, host: 'evil.example' }, body: call({ query: 'x' }) }],
      ['a query string', { target: '/api/mcp?x=1', headers: JSON_HEADERS, body: call({ query: 'x' }) }],
      ['a trailing slash', { target: '/api/mcp/', headers: JSON_HEADERS, body: call({ query: 'x' }) }],
      ['a preflight', { method: 'OPTIONS', headers: { origin: allowedOrigin, 'access-control-request-method': 'POST' } }],
      ['the descriptor', { method: 'GET', headers: { accept: 'application/json' } }],
      ['a PUT', { method: 'PUT', headers: JSON_HEADERS, body: '{}' }],
    ];
    const before = await leanCount(lean);
    const answers = await compare(lean, koa, taken, site);
    expect(await leanCount(lean)).toBe(before + taken.length);
    // The corpus covers what it claims: successes and each refusal.
    expect(answers.map((g) => g.status)).toEqual([
      200, 200, 200, 200, 200, 200, 400, 200, 204, 200, 400, 413, 200, 200, 200, 400, 400, 400, 413, 413, 200, 415, 415, 200, 200, 403, 200, 400, 200, 400,
    ]);
    expect(answers.slice(2, 5).map((g) => g.headers['content-encoding'])).toEqual(['br', 'gzip', undefined]);
    await compare(lean, koa, passed, site);
    expect(await leanCount(lean)).toBe(before + taken.length);
  });

  describe('the rate limit, behind a trusted proxy', () => {
    let leanLimited: TestService;
    let koaLimited: TestService;
    const env = { RATE_DIRECTORY_MCP_PER_MIN: '2', TRUST_PROXY: 'true' };
    beforeAll(async () => {
      [leanLimited, koaLimited] = await Promise.all([startTestService({ env }), startTestService({ env: { ...env, LEAN_PATH: 'false' } })]);
    });
    afterAll(async () => Promise.all([leanLimited?.stop(), koaLimited?.stop()]));

    it('when one forwarded address spends its budget, then both refuse its next request alike and still serve another address', async () => {
      const from = (ip: string, body = call({ query: 'x' })): Sent => ({
        headers: { ...JSON_HEADERS, 'x-forwarded-for': `${ip}, 10.0.0.1`, 'x-request-id': 'rate-1' },
        body,
      });
      const corpus: [string, Sent][] = [
        ['first', from('203.0.113.5')],
        ['a batch of three, more than the bucket holds', from('203.0.113.6', JSON.stringify([1, 2, 3].map((id) => ({ jsonrpc: '2.0', id, method: 'ping' }))))],
        ['second', from('203.0.113.5')],
        ['a foreign forwarded host', { ...from('203.0.113.5'), headers: { ...from('203.0.113.5').headers, 'x-forwarded-host': 'evil.example' } }],
      ];
      await compare(leanLimited, koaLimited, corpus);
      // The refusal's wait is counted from the moment of each take: the same up to a second.
      const third = from('203.0.113.5');
      const [a, b] = [await send(leanLimited.urls.site!, third), await send(koaLimited.urls.site!, third)].map((g, i) =>
        unsited(g, new URL([leanLimited, koaLimited][i]!.config.siteUrl).origin),
      ) as [Got, Got];
      const wait = (g: Got) => Number(g.headers['retry-after']);
      expect(a.status).toBe(429);
      expect(Math.abs(wait(a) - wait(b))).toBeLessThanOrEqual(1);
      // The wait in the hint and in retryAfterSec may differ by that second too.
      const same = (g: Got) => ({
        ...g,
        headers: { ...g.headers, 'retry-after': '(n)' },
        body: g.body.replace(/\d+ s\b/g, '(n)').replace(/("retryAfterSec":)\d+/g, '$1(n)'),
      });
      expect(same(a)).toEqual(same(b));
      await compare(leanLimited, koaLimited, [['another address', from('198.51.100.9')]]);
    });
  });

  describe('failures behind the gateway, over NATS with a stand-in worker', () => {
    let nc: NatsConnection;
    let leanGw: TestService;
    let koaGw: TestService;
    const REPLIES: Record<string, string | undefined> = {
      malformed: '{"ok":true,"data":{"status":"no"}}',
      failed: '{"ok":false,"kind":"failed","error":"boom"}',
      unavailable: '{"ok":false,"kind":"unavailable","error":"store down"}',
      rejected: '{"ok":false,"kind":"rejected","error":"cannot encode"}',
      tooLarge: '{"ok":false,"kind":"too_large","error":"reply of 2 MB"}',
      text: '{"ok":true,"data":{"status":200,"headers":{"cache-control":"no-store"},"body":"plain words","raw":true}}',
      html: '{"ok":true,"data":{"status":201,"headers":{},"body":" <p>hi</p>","raw":true}}',
      typed: '{"ok":true,"data":{"status":200,"headers":{"content-type":"application/problem+json","vary":"Accept"},"body":{"a":[1,"é"]}}}',
      accepted: '{"ok":true,"data":{"status":202,"headers":{"x-extra":"1"}}}',
      notModified: '{"ok":true,"data":{"status":304,"headers":{}}}',
      silent: undefined,
    };
    beforeAll(async () => {
      const ns = `lean${Date.now().toString(36)}`;
      const env = { BUS_NAMESPACE: ns, GATEWAY_RETRY_WINDOW_MS: '300', BUS_TIMEOUT_MS: '200' };
      nc = await connect({ servers: inject('natsUrl') });
      nc.subscribe(sliceSubject(ns, 'directory'), {
        callback: (_err, msg) => {
          const id = String((msg.json() as { body?: { id?: unknown } }).body?.id);
          const reply = REPLIES[id];
          if (reply !== undefined) msg.respond(reply);
        },
      });
      await nc.flush();
      [leanGw, koaGw] = await Promise.all([
        startTestService({ nats: true, role: 'gateway', env }),
        startTestService({ nats: true, role: 'gateway', env: { ...env, LEAN_PATH: 'false' } }),
      ]);
    });
    afterAll(async () => {
      await Promise.all([leanGw?.stop(), koaGw?.stop()]);
      await nc?.close();
    });

    it('when the worker fails, stalls or answers oddly, then both gateways answer alike (500 with the request id, 503 with Retry-After, 4xx, the reply as sent)', async () => {
      const before = await leanCount(leanGw);
      const corpus = Object.keys(REPLIES).map((id): [string, Sent] => [
        id,
        { headers: { ...JSON_HEADERS, 'x-request-id': `fail-${id}` }, body: call({ query: 'x' }, id) },
      ]);
      const answers = await compare(leanGw, koaGw, corpus);
      expect(answers.map((g) => g.status)).toEqual([500, 500, 503, 400, 413, 200, 201, 200, 202, 304, 503]);
      expect(answers[0]!.body).toContain('fail-malformed');
      expect(answers[2]!.headers['retry-after']).toBe('2');
      expect(await leanCount(leanGw)).toBe(before + corpus.length);
    });
  });
});
