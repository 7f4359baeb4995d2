// Inputs the fuzz suite replays before it generates any: what earlier runs shrank to, and the
// findings of the hostile review it guards, each as the exact request.
import { signBody } from '../src/partner/signature.js';
import type { Fixtures, FuzzInput } from './fuzz.inputs.js';

const json = (v: unknown) => Buffer.from(JSON.stringify(v));
const MCP = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

const signedEvent = (f: Fixtures, payload: Record<string, unknown>, shape: string): FuzzInput => {
  const at = new Date(Date.now() - 60_000).toISOString();
  const body = json({
    institution_id: f.institutionId,
    subject_ref: f.linkedSubject,
    event_type: 'note_added',
    occurred_at: at,
    payload: { caregiver_id: 'cg-1', note_text: 'x', ...payload },
  });
  return {
    kind: 'http',
    endpoint: 'ingest.pipeV1Events',
    host: 'pipe',
    method: 'POST',
    target: '/pipe/v1/events',
    headers: {
      'content-type': 'application/json',
      'x-pipe-institution': f.institutionId,
      'x-pipe-timestamp': new Date().toISOString(),
      'x-pipe-signature': signBody(f.secret, body),
    },
    body,
    shape,
    signedEvent: true,
  };
};

const nest = (levels: number): unknown => {
  let v: unknown = 1;
  for (let i = 0; i < levels; i++) v = { a: v };
  return v;
};

export const FUZZ_REGRESSIONS: readonly ((f: Fixtures) => FuzzInput)[] = [
  // A batch whose reply is larger than NATS carries used to kill every worker in turn.
  () => ({
    kind: 'http',
    endpoint: 'directory.mcp',
    host: 'site',
    method: 'POST',
    target: '/api/mcp',
    headers: { ...MCP, 'mcp-protocol-version': '2025-03-26' },
    body: json(
      Array.from({ length: 100 }, (_, i) => ({
        jsonrpc: '2.0',
        id: i + 1,
        method: 'tools/call',
        params: { name: 'search_care_resources', arguments: { query: `care ${i}`, limit: 25 } },
      })),
    ),
    shape: 'batch 100 searches',
  }),
  // JSON nested 5000 deep was a 503 "retry" instead of a 400.
  () => ({
    kind: 'http',
    endpoint: 'directory.mcp',
    host: 'site',
    method: 'POST',
    target: '/api/mcp',
    headers: MCP,
    body: Buffer.from(`${'['.repeat(5000)}${']'.repeat(5000)}`),
    shape: 'deep 5000',
  }),
  // A payload nested about 95 deep got 202 and was never stored.
  (f) => signedEvent(f, { extra: nest(95) }, 'payload 95 deep'),
  // A "__proto__" payload field got 202 and was left out of the stored event.
  (f) => signedEvent(f, JSON.parse('{"__proto__": {"admin": true}}') as Record<string, unknown>, 'payload with __proto__'),
  // Shrunk: a path parameter with broken percent-encoding was a 500 (URIError in the worker's router).
  (f) => ({
    kind: 'http',
    endpoint: 'app.settingsAppsRevoke',
    host: 'app',
    method: 'POST',
    target: '/settings/apps/%ZZ/revoke?',
    headers: { accept: 'application/json', origin: f.origins.app, cookie: f.cookie, 'content-type': 'application/json' },
    body: Buffer.from('{}'),
    shape: 'random json',
  }),
  // Shrunk: a session cookie with broken percent-encoding was a 500 on every cookie-reading route.
  // Found: a development sign-in form over its 16 KB limit was a 500 (the auth host's own body reader).
  () => ({
    kind: 'http',
    endpoint: 'auth /dev/login',
    host: 'auth',
    method: 'POST',
    target: '/dev/login',
    headers: { 'content-type': 'application/json' },
    body: Buffer.from(`{"query":"${'x'.repeat(98_304)}"}`),
    shape: 'huge 98304',
  }),
  () => ({
    kind: 'http',
    endpoint: 'session.apiAuthMe',
    host: 'site',
    method: 'GET',
    target: '/api/auth/me',
    headers: { cookie: 'cc_session=%E0%A4%A' },
    shape: 'none',
  }),
];
