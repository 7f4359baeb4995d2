// Walks openapi.json as served: every documented operation is called, and every answer must be a
// documented status whose body matches the documented schema and whose documented headers are set.
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeIdp, type FakeIdp } from './harness/fakeIdp.js';
import { startTestService, type TestService } from './harness/service.js';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

interface Probe {
  why: string;
  status: number;
  /** Another method than the operation's own (to reach its documented 405). */
  method?: string;
  query?: string;
  headers?: Record<string, string>;
  body?: unknown;
  /** Send the same request this many times first (to reach a documented 429). */
  warmUp?: number;
}

type Ctx = { svc: TestService; token: string; cookie: () => Promise<string>; threadId: () => Promise<string> };

const json = { 'content-type': 'application/json' };
const rpc = (method: string, id = 1) => ({ jsonrpc: '2.0', id, method });

/** One entry per documented operation: a new operation without probes fails the walk. */
const PROBES: Record<string, (c: Ctx) => Promise<Probe[]> | Probe[]> = {
  'GET /openapi.json': () => [{ why: 'the document', status: 200 }],
  'GET /agents.json': () => [{ why: 'the manifest', status: 200 }],
  'GET /llms.txt': () => [{ why: 'the index', status: 200 }],
  'GET /llms-full.txt': () => [{ why: 'the expanded index', status: 200 }],
  'GET /.well-known/api-catalog': () => [{ why: 'the catalog', status: 200 }],
  'GET /.well-known/mcp/server.json': () => [{ why: 'server.json', status: 200 }],
  'GET /.well-known/mcp.json': () => [{ why: 'the mirror', status: 200 }],
  'GET /.well-known/oauth-authorization-server': () => [{ why: 'RFC 8414 metadata', status: 200 }],
  'GET /api/mcp': () => [
    { why: 'the descriptor', status: 200 },
    { why: 'an SSE-only client', status: 405, headers: { accept: 'text/event-stream' } },
  ],
  'POST /api/mcp': () => [
    { why: 'tools/list', status: 200, headers: json, body: rpc('tools/list') },
    { why: 'a batch', status: 200, headers: json, body: [rpc('ping', 1), rpc('ping', 2)] },
    { why: 'a notification', status: 204, headers: json, body: { jsonrpc: '2.0', method: 'notifications/initialized' } },
    { why: 'not JSON', status: 400, headers: json, body: '{"jsonrpc":' },
    { why: 'not an envelope', status: 400, headers: json, body: { jsonrpc: '1.0', id: 1, method: 7 } },
    { why: 'a foreign browser origin', status: 403, headers: { ...json, origin: 'https://evil.example' }, body: rpc('ping') },
    { why: 'an oversized body', status: 413, headers: json, body: { ...rpc('ping'), params: { pad: 'x'.repeat(300 * 1024) } } },
    { why: 'the wrong content type', status: 415, headers: { 'content-type': 'text/plain' }, body: JSON.stringify(rpc('ping')) },
  ],
  'GET /api/md': () => [
    { why: 'a resource page', status: 200, query: 'path=/resources/eldercare-locator' },
    { why: 'the original path header', status: 200, headers: { 'x-md-original-path': '/glossary' } },
    { why: 'another host', status: 400, query: `path=${encodeURIComponent('https://evil.example/')}` },
    { why: 'an unknown page', status: 404, query: 'path=/nowhere' },
  ],
  'POST /api/newsletter': () => [
    { why: 'a sign-up', status: 200, headers: { ...json, 'x-forwarded-for': '192.0.2.1' }, body: { email: 'walker@example.com', firstName: 'Walker' } },
    { why: 'a repeat sign-up', status: 200, headers: { ...json, 'x-forwarded-for': '192.0.2.2' }, body: { email: 'walker@example.com' } },
    { why: 'a bad address', status: 400, headers: { ...json, 'x-forwarded-for': '192.0.2.3' }, body: { email: 'nope' } },
    { why: 'GET', status: 405, method: 'GET' },
    { why: 'a huge body', status: 413, headers: { ...json, 'x-forwarded-for': '192.0.2.4' }, body: { email: 'a@example.com', firstName: 'x'.repeat(20_000) } },
    { why: 'a text body', status: 415, headers: { 'content-type': 'text/plain', 'x-forwarded-for': '192.0.2.5' }, body: 'a@example.com' },
    { why: 'a sixth sign-up in an hour', status: 429, headers: { ...json, 'x-forwarded-for': '192.0.2.6' }, body: { email: 'busy@example.com' }, warmUp: 5 },
  ],
  'GET /api/auth/me': async (c) => [
    { why: 'no cookie', status: 200 },
    { why: 'a session cookie', status: 200, headers: { cookie: await c.cookie() } },
  ],
  'POST /api/auth/session': (c) => [
    { why: 'a valid ID token', status: 200, headers: json, body: { idToken: c.token } },
    { why: 'no idToken', status: 400, headers: json, body: {} },
    { why: 'a forged idToken', status: 401, headers: json, body: { idToken: 'a.b.c' } },
  ],
  'POST /api/auth/signout': () => [{ why: 'signing out', status: 200 }],
  'GET /api/community': async (c) => [
    { why: 'a channel', status: 200, query: 'channel=respite-and-burnout&limit=5' },
    { why: 'a thread', status: 200, query: `channel=respite-and-burnout&threadId=${await c.threadId()}` },
    { why: 'no channel', status: 400 },
    { why: 'an unknown channel', status: 404, query: 'channel=nope' },
  ],
  'POST /api/community': async (c) => {
    const auth = { ...json, authorization: `Bearer ${c.token}` };
    return [
      { why: 'join', status: 200, headers: auth, body: { channel: 'veteran-caregivers', action: 'join' } },
      {
        why: 'a thread',
        status: 200,
        headers: auth,
        body: { channel: 'veteran-caregivers', action: 'thread', title: 'VA respite', body: 'How many days a year?' },
      },
      { why: 'a bad action', status: 400, headers: auth, body: { channel: 'veteran-caregivers', action: 'shout' } },
      { why: 'no token', status: 401, headers: json, body: { channel: 'veteran-caregivers', action: 'join' } },
      { why: 'not a member', status: 403, headers: auth, body: { channel: 'siblings-and-family-conflict', action: 'thread', title: 't', body: 'b' } },
      { why: 'an unknown channel', status: 404, headers: auth, body: { channel: 'nope', action: 'join' } },
      { why: 'a text body', status: 415, headers: { authorization: `Bearer ${c.token}`, 'content-type': 'text/plain' }, body: 'join' },
    ];
  },
};

describe('openapi.json walk', () => {
  let idp: FakeIdp;
  let svc: TestService;
  let doc: any;
  let ajv: Ajv;
  const validators = new Map<string, ValidateFunction>();

  beforeAll(async () => {
    idp = await startFakeIdp();
    svc = await startTestService({ env: { ...idp.env, TRUST_PROXY: 'true' } });
    doc = await (await fetch(`${svc.urls.site}/openapi.json`)).json();
    ajv = addFormats(new Ajv({ strict: false, allErrors: true }));
    ajv.addSchema({ components: doc.components }, 'openapi');
  });
  afterAll(async () => {
    await svc?.stop();
    await idp?.stop();
  });

  const resolve = (obj: any): any =>
    obj?.$ref
      ? resolve(
          obj.$ref
            .replace(/^#\//, '')
            .split('/')
            .reduce((o: any, k: string) => o[k], doc),
        )
      : obj;
  const validatorFor = (key: string, schema: any) => {
    if (!validators.has(key)) validators.set(key, ajv.compile(JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', '"openapi#/components/'))));
    return validators.get(key)!;
  };

  it('when every documented operation is called, then each answer is documented and matches its schema and headers', async () => {
    const token = await idp.token({ sub: 'walker', email: 'walker@example.com', name: 'Walker' });
    let thread: string | undefined;
    const ctx: Ctx = {
      svc,
      token,
      cookie: async () => {
        const res = await fetch(`${svc.urls.site}/api/auth/session`, { method: 'POST', headers: json, body: JSON.stringify({ idToken: token }) });
        return res.headers.get('set-cookie')!.split(';')[0]!;
      },
      threadId: async () => {
        if (thread) return thread;
        const post = (body: unknown) =>
          fetch(`${svc.urls.site}/api/community`, { method: 'POST', headers: { ...json, authorization: `Bearer ${token}` }, body: JSON.stringify(body) }).then(
            (r) => r.json() as Promise<any>,
          );
        await post({ channel: 'respite-and-burnout', action: 'join' });
        thread = (await post({ channel: 'respite-and-burnout', action: 'thread', title: 'Walk', body: 'A thread for the walk.' })).thread.id as string;
        return thread;
      },
    };

    const operations = Object.entries(doc.paths as Record<string, Record<string, any>>).flatMap(([path, ops]) =>
      Object.entries(ops).map(([method, op]) => ({ key: `${method.toUpperCase()} ${path}`, path, method, op })),
    );
    expect(operations.map((o) => o.key).sort()).toEqual(Object.keys(PROBES).sort());

    let calls = 0;
    for (const { key, path, method, op } of operations) {
      const probes = await PROBES[key]!(ctx);
      expect(
        probes.some((p) => p.status >= 200 && p.status < 300),
        `${key} has a success probe`,
      ).toBe(true);
      for (const probe of probes) {
        const label = `${key} (${probe.why})`;
        const send = () =>
          fetch(`${svc.urls.site}${path}${probe.query ? `?${probe.query}` : ''}`, {
            method: probe.method ?? method.toUpperCase(),
            headers: probe.headers ?? {},
            ...(probe.body === undefined ? {} : { body: typeof probe.body === 'string' ? probe.body : JSON.stringify(probe.body) }),
          });
        for (let i = 0; i < (probe.warmUp ?? 0); i++) await (await send()).arrayBuffer();
        const res = await send();
        calls++;
        const text = await res.text();
        expect(res.status, label).toBe(probe.status);
        const documented = resolve(op.responses[String(res.status)]);
        expect(documented, `${label}: status ${res.status} is documented`).toBeDefined();

        for (const [name, header] of Object.entries((documented.headers ?? {}) as Record<string, any>)) {
          const value = res.headers.get(name);
          expect(value, `${label}: header ${name}`).not.toBeNull();
          if (header.schema?.enum) expect(header.schema.enum, `${label}: header ${name}`).toContain(value);
        }
        const content = documented.content as Record<string, { schema: unknown }> | undefined;
        if (!content) {
          expect(text, `${label}: no body`).toBe('');
          continue;
        }
        const type = (res.headers.get('content-type') ?? '').split(';')[0]!.trim();
        expect(Object.keys(content), `${label}: content type ${type}`).toContain(type);
        const schema = content[type]!.schema;
        const body = type.endsWith('json') ? JSON.parse(text) : text;
        const validate = validatorFor(`${key} ${res.status} ${type}`, schema);
        expect(validate(body), `${label}: ${ajv.errorsText(validate.errors)}`).toBe(true);
      }
    }
    expect(calls).toBeGreaterThan(40);
  });
});
