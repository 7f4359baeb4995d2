// What the fuzz suite sends: every route of every slice manifest, with methods, headers, bodies,
// encodings and sizes drawn by fast-check, plus malformed HTTP written straight to a socket.
import fc from 'fast-check';
import { signBody } from '../src/partner/signature.js';
import { KNOWN_EVENT_TYPES } from '../src/ingest/envelope.js';
import { SUPPORTED_PROTOCOL_VERSIONS } from '../src/rpc/versions.js';
import { pathsOf, type AuthBody, type Edge, type SliceManifest } from '../src/slice/contract.js';

/** A partner subject never linked to a family, for the agency calls. */
const OTHER_SUBJECT = 'fuzz-other-client';

export type Surface = 'site' | 'app' | 'pipe' | 'auth';

export interface Endpoint {
  /** `slice.route`, for the counts and failure reports. */
  name: string;
  host: Surface;
  path: string;
  methods: readonly string[];
  edge: Edge;
  bodyLimit: number;
  /** What an auth host route reads from the body. */
  authBody?: AuthBody;
}

/** Every route served on a listener, from the manifests: a new route is fuzzed without a change here. */
export function endpointsOf(slices: readonly SliceManifest[]): Endpoint[] {
  const out: Endpoint[] = [];
  for (const slice of slices)
    for (const [route, spec] of Object.entries(slice.routes ?? {}))
      for (const host of spec.hosts)
        if (host !== 'internal')
          for (const path of pathsOf(spec))
            out.push({ name: `${slice.name}.${route}`, host, path, methods: spec.methods, edge: spec.edge ?? 'api', bodyLimit: spec.bodyLimit ?? 64 * 1024 });
  return out;
}

/** Every route of the auth host, from the listeners the slices declare (the authorization server, the development sign-in). */
export function authEndpointsOf(slices: readonly SliceManifest[]): Endpoint[] {
  return slices.flatMap((slice) =>
    (slice.listeners ?? []).flatMap((listener) =>
      Object.entries(listener.routes).map(([route, spec]): Endpoint => ({
        name: `${slice.name}.${route}`,
        host: 'auth',
        path: spec.path,
        methods: spec.methods,
        edge: 'api',
        bodyLimit: 64 * 1024,
        authBody: spec.body,
      })),
    ),
  );
}

/** Credentials and ids of a real family and partner, so generated requests also get past the checks. */
export interface Fixtures {
  origins: Record<Surface, string>;
  institutionId: string;
  secret: string;
  /** The subject linked to the family: signed events about it are stored. */
  linkedSubject: string;
  cookie: string;
  apiKey: string;
  idToken: string;
  ids: string[];
  tools: string[];
  maxBatch: number;
}

export interface HttpInput {
  kind: 'http';
  endpoint: string;
  host: Surface;
  method: string;
  target: string;
  headers: Record<string, string>;
  body?: Buffer;
  /** What the body is (for the report). */
  shape: string;
  /** A signed partner event with a valid signature. */
  signedEvent?: boolean;
}

export interface RawInput {
  kind: 'raw';
  endpoint: string;
  host: Surface;
  shape: string;
  bytes: Buffer;
}

export type FuzzInput = HttpInput | RawInput;

interface Body {
  bytes?: Buffer;
  type?: string;
  shape: string;
  /** The JSON-RPC method of a single call, for Mcp-Method games. */
  rpcMethod?: string;
}

const utf8 = (s: string) => Buffer.from(s, 'utf8');
const asJson =
  (shape: string) =>
  (v: unknown): Body => ({ bytes: utf8(JSON.stringify(v)), type: 'application/json', shape });
const nowIso = (offsetMs = 0) => new Date(Date.now() + offsetMs).toISOString();

const junkText = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 20 }),
  fc.constantFrom('', ' ', '\u0000', '$where', 'a.b', '\ud800', '../../etc/passwd', '<script>alert(1)</script>', '%', '{}'),
);
const keyName = fc.oneof({ weight: 4, arbitrary: fc.stringMatching(/^[a-z_][a-z0-9_]{0,12}$/) }, { weight: 1, arbitrary: junkText });
const json = (maxDepth: number) => fc.jsonValue({ maxDepth });

/** Nested arrays or objects, `levels` deep, around a small value. */
const deepBody = fc
  .record({ levels: fc.constantFrom(20, 32, 33, 63, 64, 65, 100, 1000, 3000, 6000), objects: fc.boolean(), inside: fc.boolean() })
  .map(({ levels, objects, inside }): Body => {
    const open = objects ? '{"a":'.repeat(levels) : '['.repeat(levels);
    const close = objects ? '}'.repeat(levels) : ']'.repeat(levels);
    const nested = `${open}1${close}`;
    const text = inside
      ? `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search_care_resources","arguments":{"query":"x","deep":${nested}}}}`
      : nested;
    return { bytes: utf8(text), type: 'application/json', shape: `deep ${levels}` };
  });

const hugeString = (limit: number) =>
  fc
    .record({ size: fc.constantFrom(1_000, limit - 100, limit + 1, Math.floor(limit * 1.5)), c: fc.constantFrom('x', 'é', '😀', '\\', '"') })
    .map(({ size, c }): Body => {
      const filler = c === '"' || c === '\\' ? `\\${c}` : c;
      return {
        bytes: utf8(`{"query":"${filler.repeat(Math.max(1, Math.floor(size / Buffer.byteLength(filler))))}"}`),
        type: 'application/json',
        shape: `huge ${size}`,
      };
    });

/** Bytes that are not UTF-8 (or are, in an unexpected encoding), inside otherwise plausible JSON. */
const badEncoding = fc
  .record({
    bytes: fc.constantFrom([0xff, 0xfe], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0xe2, 0x82], [0xf8, 0x88, 0x80, 0x80, 0x80], [0x00]),
    bom: fc.boolean(),
    utf16: fc.boolean(),
  })
  .map(({ bytes, bom, utf16 }): Body => {
    if (utf16)
      return {
        bytes: Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('{"jsonrpc":"2.0","id":1,"method":"ping"}', 'utf16le')]),
        type: 'application/json; charset=utf-16',
        shape: 'utf-16',
      };
    const parts = [bom ? Buffer.from([0xef, 0xbb, 0xbf]) : Buffer.alloc(0), utf8('{"query":"'), Buffer.from(bytes), utf8('","name":"x"}')];
    return { bytes: Buffer.concat(parts), type: 'application/json', shape: 'invalid utf-8' };
  });

/** The argument names the tools declare, with values at and past every edge. */
const toolArguments = (f: Fixtures) => {
  const number = fc.oneof(fc.integer({ min: -2, max: 200 }), fc.constantFrom(0, -0, 0.5, 1e308, -1e308, 5e-324, 2 ** 53 + 1, 30, 31, 168, 169));
  const text = fc.oneof(
    fc.string({ maxLength: 30 }),
    junkText,
    fc.constantFrom('respite care', 'OH', 'Ohio', 'home_health_aide', 'nursing_home_private', 'caregiver', 'x'.repeat(300)),
  );
  const value = fc.oneof(number, text, fc.constantFrom(...f.ids), fc.constant(null), fc.boolean(), fc.array(text, { maxLength: 2 }), fc.constant({ $gt: '' }));
  const names = [
    'query',
    'limit',
    'category',
    'state',
    'slug',
    'careType',
    'hoursPerWeek',
    'daysPerWeek',
    'years',
    'annualIncreasePct',
    'lovedOneId',
    'cursor',
    'since',
    'until',
    'eventType',
    'familyName',
    'firstName',
    'lastName',
    'email',
  ] as const;
  return fc.dictionary(fc.constantFrom(...names), value, { maxKeys: 6 });
};

const rpcCall = (f: Fixtures) =>
  fc.record({
    jsonrpc: fc.constantFrom('2.0', '2.0', '1.0', 2),
    id: fc.oneof(fc.integer(), fc.string({ maxLength: 10 }), fc.constant(null), fc.constant(undefined), json(1)),
    method: fc.constantFrom(
      'initialize',
      'ping',
      'tools/list',
      'tools/call',
      'tools/call',
      'server/discover',
      'resources/list',
      'notifications/initialized',
      'prompts/get',
      '',
    ),
    params: fc.oneof(
      fc.record({
        name: fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...f.tools) }, { weight: 1, arbitrary: junkText }),
        arguments: fc.oneof(toolArguments(f), fc.dictionary(keyName, json(2), { maxKeys: 4 })),
      }),
      fc.record({
        protocolVersion: fc.constantFrom(...SUPPORTED_PROTOCOL_VERSIONS, '1999-01-01'),
        capabilities: fc.constant({}),
        clientInfo: fc.constant({ name: 'fuzz', version: '1' }),
      }),
      fc.record({
        _meta: fc.record({
          'io.modelcontextprotocol/protocolVersion': fc.constantFrom(...SUPPORTED_PROTOCOL_VERSIONS, 'junk'),
          'io.modelcontextprotocol/clientCapabilities': fc.constant({}),
        }),
      }),
      json(2),
      fc.constant(undefined),
    ),
  });

const rpcBody = (f: Fixtures): fc.Arbitrary<Body> =>
  fc.oneof(
    { weight: 3, arbitrary: rpcCall(f).map((c): Body => ({ ...asJson('rpc')(c), rpcMethod: c.method })) },
    {
      weight: 2,
      arbitrary: fc
        .array(
          fc.oneof({ weight: 5, arbitrary: rpcCall(f) as fc.Arbitrary<unknown> }, { weight: 1, arbitrary: json(2) }, { weight: 1, arbitrary: fc.constant([]) }),
          { maxLength: f.maxBatch + 5 },
        )
        .map((items) => asJson(`batch ${items.length}`)(items)),
    },
    {
      weight: 1,
      arbitrary: fc
        .constantFrom(f.maxBatch, f.maxBatch + 1, f.maxBatch * 20)
        .map((n) => asJson(`batch ${n} pings`)(Array.from({ length: n }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'ping' })))),
    },
  );

/** Fields the API routes read, with plausible and hostile values. */
const apiBody = (f: Fixtures): fc.Arbitrary<Body> =>
  fc
    .record(
      {
        channel: fc.constantFrom('respite-and-burnout', 'dementia-and-alzheimers', 'nope'),
        action: fc.constantFrom('join', 'leave', 'thread', 'comment', 'explode'),
        title: fc.string({ maxLength: 60 }),
        body: fc.string({ maxLength: 200 }),
        threadId: fc.constantFrom(...f.ids, 'thr-nope'),
        email: fc.oneof(fc.emailAddress(), junkText),
        idToken: fc.oneof(fc.constant(f.idToken), junkText),
        familyName: fc.string({ maxLength: 40 }),
        firstName: fc.string({ maxLength: 40 }),
        lastName: fc.string({ maxLength: 40 }),
        name: fc.string({ maxLength: 40 }),
        code: fc.string({ maxLength: 12 }),
        lovedOneId: fc.constantFrom(...f.ids),
        token: junkText,
      },
      { requiredKeys: [] },
    )
    .map(asJson('api fields'));

/** A partner event: known types with their payload fields, others as they come, plus extra fields. */
const eventBody = (f: Fixtures) =>
  fc
    .record({
      type: fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...KNOWN_EVENT_TYPES) }, { weight: 1, arbitrary: fc.stringMatching(/^[a-z][a-z0-9_.-]{0,20}$/) }),
      subject: fc.oneof({ weight: 6, arbitrary: fc.constant(f.linkedSubject) }, { weight: 1, arbitrary: fc.string({ minLength: 1, maxLength: 20 }) }),
      ageMs: fc.oneof(
        { weight: 6, arbitrary: fc.integer({ min: 0, max: 86_400_000 }) },
        { weight: 1, arbitrary: fc.constantFrom(-3_600_000, 40 * 86_400_000) },
      ),
      extra: fc.oneof(
        {
          weight: 3,
          arbitrary: fc.object({
            key: fc.stringMatching(/^[A-Za-z_][\w -]{0,10}$/),
            maxDepth: 3,
            maxKeys: 4,
            values: [fc.string({ maxLength: 40 }), fc.string({ unit: 'binary', maxLength: 10 }), fc.double(), fc.integer(), fc.boolean(), fc.constant(null)],
          }),
        },
        { weight: 1, arbitrary: fc.dictionary(keyName, json(3), { maxKeys: 4 }) },
      ),
      source: fc.option(fc.oneof({ weight: 1, arbitrary: fc.constantFrom('dup-1', 'dup-2') }, { weight: 8, arbitrary: fc.uuid() }), { nil: undefined }),
      number: fc.oneof(fc.double(), fc.integer()),
    })
    .map(({ type, subject, ageMs, extra, source, number }) => {
      const at = nowIso(-ageMs);
      const known: Record<string, Record<string, unknown>> = {
        visit_started: { caregiver_id: 'cg-1', scheduled_start: at, actual_start: at },
        visit_ended: { caregiver_id: 'cg-1', actual_end: at, duration_minutes: Math.abs(number) % 600 },
        note_added: { caregiver_id: 'cg-1', note_text: 'Ate lunch, walked in the garden.' },
        med_administered: { medication_name: 'Donepezil', dose_amount: 5, dose_unit: 'mg', administered_by: 'cg-1' },
        vital_recorded: { vital_type: 'heart_rate', value: number, unit: 'bpm', recorded_by: 'cg-1' },
      };
      return {
        institution_id: f.institutionId,
        subject_ref: subject,
        event_type: type,
        occurred_at: at,
        payload: { ...extra, ...known[type] },
        ...(source ? { source_event_id: source } : {}),
      };
    });

/** The agency calls' bodies, about a subject other than the linked one (turning that off would drop its events, rightly). */
const controlBody = fc.record(
  {
    enabled: fc.oneof({ weight: 4, arbitrary: fc.boolean() }, { weight: 1, arbitrary: junkText }),
    subject_ref: fc.oneof({ weight: 4, arbitrary: fc.constant(OTHER_SUBJECT) }, { weight: 1, arbitrary: fc.constant('x') }),
    requested_at: fc.oneof({ weight: 4, arbitrary: fc.constant(0) }, { weight: 1, arbitrary: fc.constant(-3_600_000) }).map((ms) => nowIso(ms)),
  },
  { requiredKeys: ['subject_ref', 'requested_at'] },
);

/** What the authorization server and the sign-in pages read: OAuth forms and client registrations. */
const oauthBody = (f: Fixtures, body: AuthBody | undefined): fc.Arbitrary<Body> =>
  body === 'json' ? registrationBody : body === 'form' ? oauthForm(f) : fc.oneof(oauthForm(f), registrationBody);

const oauthForm = (f: Fixtures): fc.Arbitrary<Body> =>
  fc
    .record(
      {
        grant_type: fc.constantFrom('authorization_code', 'refresh_token', 'client_credentials', 'junk'),
        code: junkText,
        client_id: fc.oneof(fc.constant(`${f.origins.site}/client.json`), junkText),
        redirect_uri: fc.constantFrom(`${f.origins.app}/auth/callback`, 'http://localhost:1/cb', 'javascript:alert(1)', ''),
        code_verifier: junkText,
        token: fc.constantFrom(f.apiKey, f.idToken, 'junk'),
        token_type_hint: fc.constantFrom('access_token', 'refresh_token', 'junk'),
        response_type: fc.constantFrom('code', 'token', ''),
        scope: fc.constantFrom('profile:read care_circle:read', 'openid', ''),
        email: fc.oneof(fc.emailAddress(), junkText),
        name: fc.string({ maxLength: 30 }),
        return_to: fc.constantFrom(`${f.origins.app}/auth/callback`, 'https://evil.example/', '//evil.example', ''),
      },
      { requiredKeys: [] },
    )
    .map((d): Body => ({ bytes: utf8(new URLSearchParams(d).toString()), type: 'application/x-www-form-urlencoded', shape: 'oauth form' }));

const registrationBody: fc.Arbitrary<Body> = fc
  .record(
    {
      redirect_uris: fc.array(fc.oneof(fc.webUrl(), junkText), { maxLength: 3 }),
      client_name: fc.string({ maxLength: 40 }),
      grant_types: fc.array(fc.constantFrom('authorization_code', 'refresh_token', 'implicit')),
      token_endpoint_auth_method: fc.constantFrom('none', 'client_secret_basic', 'junk'),
    },
    { requiredKeys: [] },
  )
  .map(asJson('client registration'));

/** A body the endpoint could take: JSON-RPC, a partner event or agency call, OAuth, or the API's fields. */
const shapedBody = (f: Fixtures, e: Endpoint): fc.Arbitrary<Body> =>
  e.host === 'auth'
    ? oauthBody(f, e.authBody)
    : e.edge === 'mcp'
      ? rpcBody(f)
      : e.edge === 'signed'
        ? e.methods.includes('POST')
          ? eventBody(f).map(asJson('event'))
          : controlBody.map(asJson('control'))
        : apiBody(f);

const bodyFor = (f: Fixtures, e: Endpoint): fc.Arbitrary<Body> =>
  fc.oneof(
    { weight: 2, arbitrary: fc.constant<Body>({ shape: 'none' }) },
    { weight: 4, arbitrary: shapedBody(f, e) },
    { weight: 2, arbitrary: json(4).map(asJson('random json')) },
    { weight: 1, arbitrary: deepBody },
    { weight: 1, arbitrary: hugeString(e.bodyLimit) },
    { weight: 1, arbitrary: badEncoding },
    {
      weight: 1,
      arbitrary: fc.tuple(json(3), fc.nat()).map(([v, cut]): Body => {
        const t = JSON.stringify(v) ?? 'null';
        return { bytes: utf8(t.slice(0, cut % Math.max(1, t.length))), type: 'application/json', shape: 'truncated json' };
      }),
    },
    {
      weight: 1,
      arbitrary: fc
        .dictionary(keyName, fc.string({ maxLength: 30 }), { maxKeys: 5 })
        .map((d): Body => ({ bytes: utf8(new URLSearchParams(d).toString()), type: 'application/x-www-form-urlencoded', shape: 'form' })),
    },
    { weight: 1, arbitrary: fc.string({ maxLength: 200 }).map((t): Body => ({ bytes: utf8(t), type: 'text/plain', shape: 'text' })) },
  );

const contentType = (body: Body, focused: boolean) =>
  fc.oneof(
    { weight: focused ? 24 : 6, arbitrary: fc.constant(body.type) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        undefined,
        'application/json',
        'application/x-www-form-urlencoded',
        'text/plain',
        'application/xml',
        'multipart/form-data',
        'application/json; charset=latin1',
        'application/*',
        ';;;',
        'application/json, text/html',
      ),
    },
  );

const pathParam = (f: Fixtures) =>
  fc.oneof(
    fc.constantFrom(...f.ids, OTHER_SUBJECT, 'respite-and-burnout', 'caregiver', '..', '%2e%2e', '%00', '%ZZ', '%', 'x'.repeat(3000)),
    fc.string({ maxLength: 30 }).map(encodeURIComponent),
  );
const query = fc.oneof(
  { weight: 4, arbitrary: fc.constant('') },
  {
    weight: 2,
    arbitrary: fc
      .dictionary(
        fc.constantFrom('q', 'query', 'channel', 'threadId', 'limit', 'cursor', 'token', 'next', 'code', 'state', 'category'),
        fc.string({ maxLength: 30 }),
        { maxKeys: 3 },
      )
      .map((d) => `?${new URLSearchParams(d).toString()}`),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      '?',
      '?%',
      '?a=%ZZ',
      '?=&=&',
      '?limit=-1',
      '?limit=1e309',
      '?q[]=1&q[]=2',
      `?q=${'y'.repeat(6000)}`,
      '?__proto__=1&constructor[prototype]=1',
      '?years=1e309&annualIncreasePct=1e308&careType=home_health_aide&state=OH',
      '?hoursPerWeek=-1&careType=__proto__',
      '?state=constructor&category=toString',
    ),
  },
  {
    weight: 1,
    arbitrary: fc
      .constantFrom('[1e300,"x"]', '[-8.64e15,"x"]', '[8.64e15,"x"]', '[1,{"$gt":""}]', 'null', '[1]', '"x"')
      .map((c) => `?channel=respite-and-burnout&cursor=${Buffer.from(c).toString('base64url')}`),
  },
);

/** Headers, each most often absent; `focused` makes junk rarer and sends the right credential to MCP endpoints. */
function headerPool(f: Fixtures, e: Endpoint, body: Body, focused: boolean) {
  const opt = <T>(arb: fc.Arbitrary<T>, weight = 2) =>
    fc.oneof({ weight: focused ? weight * 4 : weight, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: arb });
  const usual = <T>(value: T, arb: fc.Arbitrary<T | undefined>) =>
    focused ? fc.oneof({ weight: 4, arbitrary: fc.constant(value) }, { weight: 1, arbitrary: arb }) : arb;
  const mcp = focused && e.edge === 'mcp';
  const origins = fc.constantFrom(f.origins.app, f.origins.site, f.origins.pipe, 'https://evil.example', 'null', 'not a url');
  return fc.record({
    accept: (mcp
      ? (a: fc.Arbitrary<string | undefined>) => usual<string | undefined>('application/json, text/event-stream', a)
      : (a: fc.Arbitrary<string | undefined>) => a)(
      opt(
        fc.constantFrom(
          'application/json',
          'text/event-stream',
          'application/json, text/event-stream',
          'text/html',
          'text/markdown',
          '*/*',
          'image/png',
          ',,,',
        ),
      ),
    ),
    origin: opt(origins, e.edge === 'api' ? 1 : 2),
    cookie: opt(fc.constantFrom(f.cookie, 'cc_session=junk', 'cc_session=', 'cc_session=%E0%A4%A', '=;=;', `${f.cookie}; ${f.cookie}x`), 1),
    authorization: (mcp
      ? (a: fc.Arbitrary<string | undefined>) => usual<string | undefined>(`Bearer ${f.apiKey}`, a)
      : (a: fc.Arbitrary<string | undefined>) => a)(
      opt(fc.constantFrom(`Bearer ${f.apiKey}`, `Bearer ${f.idToken}`, 'Bearer ', 'Bearer junk.junk.junk', 'Basic Zm9vOmJhcg==', 'bearer', 'x'.repeat(5000))),
    ),
    host: opt(fc.constantFrom('evil.example:8082', 'localhost', '', '127.0.0.1:1', 'a b', `${new URL(f.origins[e.host]).host}.evil.example`), 6),
    'mcp-protocol-version': opt(fc.constantFrom(...SUPPORTED_PROTOCOL_VERSIONS, '2024-11-05', '', 'junk', '2025-03-26, 2025-06-18'), e.edge === 'mcp' ? 1 : 4),
    'mcp-method': opt(fc.constantFrom(body.rpcMethod ?? 'ping', 'tools/call', 'tools/list', 'initialize', 'nope'), e.edge === 'mcp' ? 1 : 6),
    'mcp-name': opt(fc.constantFrom(...f.tools, 'nope', '=?base64?junk'), e.edge === 'mcp' ? 1 : 6),
    'idempotency-key': opt(fc.oneof(fc.uuid(), fc.constantFrom('', 'dup-1', 'k'.repeat(300))), e.edge === 'signed' ? 2 : 8),
    'x-forwarded-for': opt(fc.constantFrom('1.2.3.4', 'junk', '::1, 10.0.0.1'), 6),
    'x-forwarded-host': opt(fc.constantFrom('evil.example', ''), 8),
  });
}

/** Pipe signing headers: mostly valid over the exact bytes, sometimes wrong in one way. */
const signing = (f: Fixtures, bytes: Buffer) =>
  fc.oneof(
    {
      weight: 5,
      arbitrary: fc.constant({
        'x-pipe-institution': f.institutionId,
        'x-pipe-timestamp': nowIso(),
        'x-pipe-signature': signBody(f.secret, bytes),
        valid: 'yes',
      }),
    },
    {
      weight: 2,
      arbitrary: fc.record({
        'x-pipe-institution': fc.constantFrom(f.institutionId, 'inst-nope', ''),
        'x-pipe-timestamp': fc.constantFrom(nowIso(), nowIso(-3_600_000), nowIso(3_600_000), 'yesterday', '2026-02-30T00:00:00Z', ''),
        'x-pipe-signature': fc.constantFrom(
          signBody('wrong', bytes),
          `sha256=${'0'.repeat(64)}`,
          'sha256=',
          'md5=abc',
          signBody(f.secret, Buffer.concat([bytes, utf8(' ')])),
        ),
        valid: fc.constant('no'),
      }),
    },
  );

/** `focused`: the endpoint's own method and a body of its shape, so deeper code runs (signed events get their 202s). */
export function httpInput(f: Fixtures, e: Endpoint, focused = false): fc.Arbitrary<HttpInput> {
  const otherMethods = fc.constantFrom('GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD');
  return fc
    .record({
      method: focused
        ? fc.constantFrom(...e.methods)
        : fc.oneof({ weight: 8, arbitrary: fc.constantFrom(...e.methods) }, { weight: 1, arbitrary: otherMethods }),
      params: fc.array(focused ? fc.constant(OTHER_SUBJECT) : pathParam(f), { minLength: 3, maxLength: 3 }),
      query,
      body: focused ? shapedBody(f, e) : bodyFor(f, e),
    })
    .chain(({ method, params, query: q, body }) =>
      fc
        .record({
          type: contentType(body, focused),
          headers: headerPool(f, e, body, focused),
          sign: e.edge === 'signed' ? signing(f, body.bytes ?? Buffer.alloc(0)) : fc.constant(undefined),
        })
        .map(({ type, headers, sign }): HttpInput => {
          let i = 0;
          const target = e.path.replace(/:[A-Za-z_]+/g, () => params[i++]!) + q;
          const all: Record<string, string> = {};
          for (const [k, v] of Object.entries({ ...headers, ...(type ? { 'content-type': type } : {}) })) if (v !== undefined) all[k] = v;
          const { valid, ...pipe } = sign ?? { valid: 'no' };
          Object.assign(all, pipe);
          const signedEvent = valid === 'yes' && e.name === 'ingest.pipeV1Events' && method === 'POST' && body.shape === 'event';
          return {
            kind: 'http',
            endpoint: e.name,
            host: e.host,
            method,
            target,
            headers: all,
            ...(body.bytes && method !== 'GET' && method !== 'HEAD' ? { body: body.bytes } : {}),
            shape: body.shape,
            signedEvent,
          };
        }),
    );
}

/** Requests node's HTTP client will not write: framing and header abuse, straight onto a socket. */
export const RAW_CASES: readonly { shape: string; text: (path: string, host: string) => string }[] = [
  {
    shape: 'content-length longer than the body',
    text: (p, h) => `POST ${p} HTTP/1.1\r\nHost: ${h}\r\nContent-Type: application/json\r\nContent-Length: 500\r\nConnection: close\r\n\r\n{"a":1}`,
  },
  {
    shape: 'content-length shorter than the body',
    text: (p, h) =>
      `POST ${p} HTTP/1.1\r\nHost: ${h}\r\nContent-Type: application/json\r\nContent-Length: 3\r\nConnection: close\r\n\r\n{"jsonrpc":"2.0","id":1,"method":"ping"}`,
  },
  {
    shape: 'content-length and chunked',
    text: (p, h) => `POST ${p} HTTP/1.1\r\nHost: ${h}\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n0\r\n\r\n`,
  },
  { shape: 'two content-lengths', text: (p, h) => `POST ${p} HTTP/1.1\r\nHost: ${h}\r\nContent-Length: 2\r\nContent-Length: 7\r\nConnection: close\r\n\r\n{}` },
  {
    shape: 'bad chunk size',
    text: (p, h) =>
      `POST ${p} HTTP/1.1\r\nHost: ${h}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\nzz\r\n{}\r\n0\r\n\r\n`,
  },
  {
    shape: 'chunked json',
    text: (p, h) =>
      `POST ${p} HTTP/1.1\r\nHost: ${h}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n2\r\n{}\r\n0\r\n\r\n`,
  },
  { shape: 'header without a colon', text: (p, h) => `GET ${p} HTTP/1.1\r\nHost: ${h}\r\nthis is not a header\r\nConnection: close\r\n\r\n` },
  { shape: 'absolute-form target, foreign host', text: (p) => `GET http://evil.example${p} HTTP/1.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n` },
  { shape: 'absolute-form target, own host', text: (p, h) => `GET http://${h}${p} HTTP/1.1\r\nHost: ${h}\r\nConnection: close\r\n\r\n` },
  { shape: 'no host header', text: (p) => `GET ${p} HTTP/1.1\r\nConnection: close\r\n\r\n` },
  { shape: 'two host headers', text: (p, h) => `GET ${p} HTTP/1.1\r\nHost: ${h}\r\nHost: evil.example\r\nConnection: close\r\n\r\n` },
  { shape: 'HTTP/1.0 without host', text: (p) => `GET ${p} HTTP/1.0\r\n\r\n` },
  { shape: 'unknown protocol version', text: (p, h) => `GET ${p} HTTP/9.9\r\nHost: ${h}\r\nConnection: close\r\n\r\n` },
  { shape: 'raw space in target', text: (p, h) => `GET ${p} x HTTP/1.1\r\nHost: ${h}\r\nConnection: close\r\n\r\n` },
  { shape: 'header larger than the limit', text: (p, h) => `GET ${p} HTTP/1.1\r\nHost: ${h}\r\nX-Big: ${'b'.repeat(20_000)}\r\nConnection: close\r\n\r\n` },
  {
    shape: 'latin-1 header value',
    text: (p, h) => `GET ${p} HTTP/1.1\r\nHost: ${h}\r\nMcp-Protocol-Version: 2025-\xe9\r\nCookie: cc_session=\xff\r\nConnection: close\r\n\r\n`,
  },
  { shape: 'pipelined requests', text: (p, h) => `GET ${p} HTTP/1.1\r\nHost: ${h}\r\n\r\nGET ${p} HTTP/1.1\r\nHost: ${h}\r\nConnection: close\r\n\r\n` },
  { shape: 'lone LF line endings', text: (p, h) => `GET ${p} HTTP/1.1\nHost: ${h}\nConnection: close\n\n` },
];

export function rawInput(f: Fixtures, endpoints: readonly Endpoint[]): fc.Arbitrary<RawInput> {
  return fc.record({ e: fc.constantFrom(...endpoints), c: fc.constantFrom(...RAW_CASES) }).map(({ e, c }): RawInput => {
    const path = e.path.replace(/:[A-Za-z_]+/g, f.ids[0]!);
    return { kind: 'raw', endpoint: e.name, host: e.host, shape: c.shape, bytes: Buffer.from(c.text(path, new URL(f.origins[e.host]).host), 'latin1') };
  });
}

/** One generated input: mostly well-formed HTTP to one endpoint, now and then raw bytes. */
export function fuzzInput(f: Fixtures, endpoints: readonly Endpoint[]): fc.Arbitrary<FuzzInput> {
  const signed = endpoints.filter((e) => e.edge === 'signed');
  const mcp = endpoints.filter((e) => e.edge === 'mcp');
  return fc.oneof(
    { weight: 12, arbitrary: fc.constantFrom(...endpoints).chain((e) => httpInput(f, e)) },
    { weight: 6, arbitrary: fc.constantFrom(...signed, ...signed.filter((e) => e.methods.includes('POST'))).chain((e) => httpInput(f, e, true)) },
    { weight: 4, arbitrary: fc.constantFrom(...mcp).chain((e) => httpInput(f, e, true)) },
    { weight: 1, arbitrary: rawInput(f, endpoints) },
  );
}
