// Write tools on the workspace MCP endpoint: who may see and call them, applied once, and asked of
// the person (input_required in 2026-07-28, a change waiting in the app for 2025 clients).
import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { createInterface } from 'node:readline';
import { once } from 'node:events';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import * as oauth from 'oauth4webapi';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { createLogger } from '../src/log.js';
import { openLimiter } from '../src/limits/index.js';
import { RPC } from '../src/rpc/codes.js';
import { defineTool } from '../src/rpc/tool.js';
import { AuditLog } from '../src/workspace/audit.js';
import { workspaceEndpoint } from '../src/workspace/handler.js';
import { workspaceTools } from '../src/workspace/tools.js';
import { MCP_WRITES, writeSweepJobs } from '../src/workspace/writeStore.js';
import { appCall, caregiverWithKey } from './harness/identity.js';
import { repoRoot } from './harness/servers.js';
import { postJson, rpc, startTestService, type TestService } from './harness/service.js';
import { authorizationRequest, authorizeOverHttp, discover, insecure, register, type Tokens } from './oauth.fixtures.js';

let svc: TestService;
let http: Server;
let mcp: string;
/** The endpoint's clock: real time plus what a test skips ahead. */
let skipped = 0;
/** Every write our tools applied, in order: what "applied once" is checked against. */
const applied: { tool: string; args: unknown }[] = [];

/** A write tool with no question: adds a note. */
const addNote = defineTool({
  name: 'add_test_note',
  title: 'Add a test note',
  description: 'Adds a note.',
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
  scope: 'care_circle:write',
  input: z.object({ text: z.string().min(1) }),
  output: z.object({ id: z.string(), text: z.string() }),
  handler: async (args) => {
    applied.push({ tool: 'add_test_note', args });
    return { structured: { id: `note_${applied.length}`, text: args.text }, summary: `Added the note (${applied.length}).` };
  },
});

/** A consequential write: stopping a medication asks the person first. */
const stopMedication = defineTool({
  name: 'stop_test_medication',
  title: 'Stop a test medication',
  description: 'Stops a medication.',
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true },
  scope: 'care_circle:write',
  input: z.object({ medicationId: z.string(), name: z.string() }),
  output: z.object({ medicationId: z.string(), stopped: z.boolean() }),
  confirm: (args) => `Stop ${args.name} for Ada?`,
  handler: async (args) => {
    applied.push({ tool: 'stop_test_medication', args });
    return { structured: { medicationId: args.medicationId, stopped: true }, targets: [args.medicationId] };
  },
});

beforeAll(async () => {
  svc = await startTestService();
  const log = createLogger('silent');
  // The real endpoint (authentication, scopes, write machinery on the store, audit), with two write tools beside the workspace's own.
  const handler = workspaceEndpoint(
    svc.config,
    svc.store.db,
    svc.credentials,
    svc.timelines,
    log,
    svc.bus,
    openLimiter(svc.bus, svc.config.busNamespace, log),
    { clock: () => Date.now() + skipped, tools: (store, medications) => [...workspaceTools(store, medications), addNote, stopMedication] },
  );
  let n = 0;
  http = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const headers = Object.fromEntries(Object.entries(req.headers).flatMap(([k, v]) => (typeof v === 'string' ? [[k, v]] : [])));
      void handler(
        {
          v: 1,
          method: req.method!,
          path: '/api/mcp',
          query: {},
          headers,
          body: text ? JSON.parse(text) : undefined,
          clientIp: '127.0.0.1',
          requestId: `r${++n}`,
        },
        {},
        log,
      ).then((reply) => {
        res.writeHead(reply.status, { 'content-type': 'application/json', ...reply.headers });
        res.end(reply.body === undefined ? '' : JSON.stringify(reply.body));
      });
    });
  });
  http.listen(0, '127.0.0.1');
  await once(http, 'listening');
  mcp = `http://127.0.0.1:${(http.address() as { port: number }).port}/api/mcp`;
});
afterAll(async () => {
  http?.close();
  await svc?.stop();
});

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const call = (token: string, name: string, args: Record<string, unknown>, meta?: Record<string, unknown>, id: number | string = 1) =>
  postJson(mcp, rpc('tools/call', { name, arguments: args, ...(meta ? { _meta: meta } : {}) }, id), bearer(token));
const toolNames = async (token: string) => ((await postJson(mcp, rpc('tools/list'), bearer(token))).json.result.tools as { name: string }[]).map((t) => t.name);

/** A caregiver with a read-and-write key, minted in Settings as a person would. */
async function writer(email: string) {
  const who = await caregiverWithKey(svc, email, undefined, 'read');
  const key = await appCall(svc, who.cookie, 'POST', '/api/keys', { name: 'writes', access: 'read-write' });
  expect(key.status).toBe(201);
  expect(key.json.key.access).toBe('read-write');
  return { ...who, readOnlyKey: who.apiKey, writeKey: key.json.apiKey as string, writeKeyId: key.json.key.id as string };
}

/** A 2026-07-28 tools/call over raw HTTP: the per-request envelope and its routing headers. */
const MODERN = '2026-07-28';
function modernCall(token: string, name: string, params: Record<string, unknown>, capabilities: Record<string, unknown> = { elicitation: {} }) {
  return postJson(
    mcp,
    {
      jsonrpc: '2.0',
      id: 7,
      method: 'tools/call',
      params: {
        name,
        ...params,
        _meta: { 'io.modelcontextprotocol/protocolVersion': MODERN, 'io.modelcontextprotocol/clientCapabilities': capabilities },
      },
    },
    { ...bearer(token), 'mcp-protocol-version': MODERN, 'mcp-method': 'tools/call', 'mcp-name': name },
  );
}

const auditRows = (uid: string) => new AuditLog(svc.timelines).recent(uid, 50);
/** The person a key belongs to. */
const uidOf = async (keyId: string) => (await svc.store.db.collection<{ _id: string; uid: string }>('api_keys').findOne({ _id: keyId }))!.uid;

describe('write tools - who may see and call them', () => {
  it('when a key is minted read-only (the default), then it is shown no write tool and calling one is refused for the care_circle:write scope', async () => {
    const w = await writer('ro@example.com');
    const listed = await toolNames(w.readOnlyKey);
    expect(listed).toContain('list_care_events');
    expect(listed).not.toContain('add_test_note');
    expect(listed).not.toContain('stop_test_medication');
    const res = await call(w.readOnlyKey, 'add_test_note', { text: 'slept badly' });
    expect(res.status).toBe(403);
    expect(res.json.error).toMatchObject({ code: RPC.UNAUTHORIZED, data: { scope: 'care_circle:write' } });
    expect(res.headers.get('www-authenticate')).toContain('scope="care_circle:write"');
    expect(applied.some((a) => (a.args as { text?: string }).text === 'slept badly')).toBe(false);

    expect(await toolNames(w.writeKey)).toEqual(expect.arrayContaining(['list_care_events', 'add_test_note', 'stop_test_medication']));
  });

  it('when a key was stored before keys had an access field, then it stays read-only', async () => {
    const w = await writer('old-key@example.com');
    const minted = await appCall(svc, w.cookie, 'POST', '/api/keys', { name: 'old', access: 'read-write' });
    // As an earlier version stored it: no `access` at all.
    await svc.store.db.collection('api_keys').updateOne({ _id: minted.json.key.id }, { $unset: { access: '' } });
    expect(await toolNames(minted.json.apiKey)).not.toContain('add_test_note');
    expect((await appCall(svc, w.cookie, 'GET', '/api/keys')).json.keys.find((k: { id: string }) => k.id === minted.json.key.id).access).toBe('read');
  });

  it('when a key is minted with an access that is not offered, then 400 names the access field', async () => {
    const w = await caregiverWithKey(svc, 'bad-access@example.com');
    const res = await appCall(svc, w.cookie, 'POST', '/api/keys', { access: 'admin' });
    expect(res.status).toBe(400);
    expect(res.json.message).toMatch(/access/);
  });

  it('when the consent page asks for writing, then it is a separate box, and allowing reading alone grants no write tool', async () => {
    const { as } = await discover(svc);
    const reg = (await register(svc, { scope: 'profile:read care_circle:read care_circle:write' })).registered!;
    const req = await authorizationRequest(as, reg, {
      resource: `${svc.config.appUrl}/api/mcp`,
      scope: 'profile:read care_circle:read care_circle:write',
    });
    const done = await authorizeOverHttp(svc, req.url, 'consent-read@example.com', { approve: ['profile:read', 'care_circle:read'] });
    expect(done.lastConsent).toMatch(/id="write-scopes"[\s\S]*value="care_circle:write"/);
    // The write box is not ticked for a first connection.
    expect(done.lastConsent).not.toMatch(/value="care_circle:write" checked/);
    const params = oauth.validateAuthResponse(as, reg.client, done.redirect!, req.state);
    const tokens = (await oauth.processAuthorizationCodeResponse(
      as,
      reg.client,
      await oauth.authorizationCodeGrantRequest(as, reg.client, oauth.None(), params, reg.redirectUri, req.verifier, {
        additionalParameters: { resource: `${svc.config.appUrl}/api/mcp` },
        ...insecure,
      }),
    )) as Tokens;
    expect(tokens.scope?.split(' ')).not.toContain('care_circle:write');
    expect(await toolNames(tokens.access_token)).not.toContain('add_test_note');
    const res = await call(tokens.access_token, 'add_test_note', { text: 'from an app that may only read' });
    expect(res.status).toBe(403);
    expect(res.json.error.data.scope).toBe('care_circle:write');
  });
});

describe('write tools - applied once', () => {
  it('when the same write is sent again by the same caller, then it is applied once and the retry gets the first result', async () => {
    const w = await writer('retry@example.com');
    const before = applied.length;
    const first = await call(w.writeKey, 'add_test_note', { text: 'Mum slept badly' });
    const again = await call(w.writeKey, 'add_test_note', { text: 'Mum slept badly' }, undefined, 2);
    expect(JSON.parse(first.json.result.content.at(-1).text)).toMatchObject({ text: 'Mum slept badly' });
    expect(again.json.result).toEqual(first.json.result);
    expect(applied.length).toBe(before + 1);
    // Another caller's identical write is its own.
    await call((await writer('retry-sibling@example.com')).writeKey, 'add_test_note', { text: 'Mum slept badly' });
    expect(applied.length).toBe(before + 2);
    // Ten minutes later the same words are a new note.
    skipped += 11 * 60_000;
    try {
      const later = await call(w.writeKey, 'add_test_note', { text: 'Mum slept badly' });
      expect(later.json.result.content.at(-1).text).not.toBe(first.json.result.content.at(-1).text);
      expect(applied.length).toBe(before + 3);
    } finally {
      skipped -= 11 * 60_000;
    }
  });

  it('when the same write arrives several times at once, then it is applied once and each call gets its result or is told it is under way', async () => {
    const w = await writer('burst@example.com');
    const before = applied.length;
    const replies = await Promise.all([1, 2, 3, 4].map((id) => call(w.writeKey, 'add_test_note', { text: 'Four taps on send' }, undefined, id)));
    expect(applied.length).toBe(before + 1);
    const results = replies.filter((r) => r.json.result).map((r) => r.json.result);
    expect(results.length).toBeGreaterThan(0);
    for (const r of results) expect(r).toEqual(results[0]);
    for (const r of replies.filter((r) => r.json.error))
      expect(r.json.error).toMatchObject({ code: RPC.WRITE_IN_PROGRESS, data: { error: 'write_in_progress' } });
  });

  it('when the cron sweep runs, then claims past their ten minutes are removed and live ones stay', async () => {
    const w = await writer('sweep@example.com');
    await call(w.writeKey, 'add_test_note', { text: 'kept a while' });
    const rows = svc.store.db.collection<{ _id: string; expiresAt: Date }>(MCP_WRITES);
    const mine = { _id: { $regex: `^${await uidOf(w.writeKeyId)}/` } };
    expect(await rows.countDocuments(mine)).toBe(1);
    const [job] = writeSweepJobs(svc.store.db, () => Date.now());
    await job!.run();
    expect(await rows.countDocuments(mine)).toBe(1);
    await writeSweepJobs(svc.store.db, () => Date.now() + 11 * 60_000)[0]!.run();
    expect(await rows.countDocuments(mine)).toBe(0);
  });

  it('when an idempotency key in _meta comes again with other arguments, then it is refused by name; with the same arguments it gets the first result', async () => {
    const w = await writer('meta-key@example.com');
    const meta = { 'io.carecircle/idempotency-key': 'note-2026-11-27-1' };
    const first = await call(w.writeKey, 'add_test_note', { text: 'Evening dose given' }, meta);
    expect(first.json.result.isError).toBeUndefined();
    const reused = await call(w.writeKey, 'add_test_note', { text: 'Something else' }, meta, 2);
    expect(reused.json.error).toMatchObject({ code: RPC.IDEMPOTENCY_KEY_REUSED, data: { error: 'idempotency_key_reused' } });
    expect(applied.some((a) => (a.args as { text?: string }).text === 'Something else')).toBe(false);
    const same = await call(w.writeKey, 'add_test_note', { text: 'Evening dose given' }, meta, 3);
    expect(same.json.result).toEqual(first.json.result);
    const bad = await call(w.writeKey, 'add_test_note', { text: 'x' }, { 'io.carecircle/idempotency-key': 42 });
    expect(bad.json.error.code).toBe(RPC.INVALID_PARAMS);
    expect(bad.json.error.message).toContain('io.carecircle/idempotency-key');
  });

  it("when a write is applied, then its audit row names the records it changed and how it was confirmed, and a retry's row says it was replayed", async () => {
    const w = await writer('audit-writes@example.com');
    const uid = await uidOf(w.writeKeyId);
    await call(w.writeKey, 'add_test_note', { text: 'audited' }, undefined, 'a1');
    await call(w.writeKey, 'add_test_note', { text: 'audited' }, undefined, 'a2');
    await vi.waitFor(async () => {
      const rows = (await auditRows(uid)).filter((r) => r.tool === 'add_test_note');
      expect(rows).toHaveLength(2);
      expect(rows.every((r) => r.targets?.[0]?.startsWith('note_') && r.confirmation === 'not_needed' && r.keyId === w.writeKeyId)).toBe(true);
      expect(rows.filter((r) => r.replayed)).toHaveLength(1);
    });
  });
});

describe('write tools - confirmation in 2026-07-28 (input_required)', () => {
  const args = { medicationId: 'med_1', name: 'Metformin 500 mg' };

  it('when a write needs the person, then input_required asks the question, and the call with the answer and requestState applies it once', async () => {
    const w = await writer('mrtr@example.com');
    const uid = await uidOf(w.writeKeyId);
    const before = applied.length;
    const asked = await modernCall(w.writeKey, 'stop_test_medication', { arguments: args });
    expect(asked.status).toBe(200);
    const result = asked.json.result;
    expect(result.resultType).toBe('input_required');
    expect(result.inputRequests.confirm).toMatchObject({ method: 'elicitation/create', params: { message: 'Stop Metformin 500 mg for Ada?' } });
    expect(typeof result.requestState).toBe('string');
    expect(applied.length).toBe(before);

    const answered = await modernCall(w.writeKey, 'stop_test_medication', {
      arguments: args,
      inputResponses: { confirm: { action: 'accept', content: { approve: true } } },
      requestState: result.requestState,
    });
    expect(answered.json.result).toMatchObject({ resultType: 'complete', structuredContent: { medicationId: 'med_1', stopped: true } });
    expect(applied.length).toBe(before + 1);

    // The same answer again is refused by name, and nothing more is applied.
    const replayed = await modernCall(w.writeKey, 'stop_test_medication', {
      arguments: args,
      inputResponses: { confirm: { action: 'accept', content: { approve: true } } },
      requestState: result.requestState,
    });
    expect(replayed.json.error).toMatchObject({ code: RPC.REQUEST_STATE_REFUSED, data: { error: 'request_state_replayed' } });
    expect(applied.length).toBe(before + 1);
    await vi.waitFor(async () => {
      const rows = (await auditRows(uid)).filter((r) => r.tool === 'stop_test_medication');
      expect(rows.map((r) => r.confirmation).sort()).toEqual(['asked', 'confirmed', 'refused']);
      expect(rows.find((r) => r.success && r.confirmation === 'confirmed')?.targets).toEqual(['med_1']);
    });
  });

  it('when requestState is altered, bound to other arguments or expired, then each is refused by name and nothing is applied', async () => {
    const w = await writer('mrtr-bad@example.com');
    const before = applied.length;
    const accept = { confirm: { action: 'accept', content: { approve: true } } };
    const state = (await modernCall(w.writeKey, 'stop_test_medication', { arguments: args })).json.result.requestState as string;
    const [h, p, sig] = state.split('.');
    const forgedPayload = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(p!, 'base64url').toString()), d: 'other' })).toString('base64url');
    for (const tampered of [`${h}.${forgedPayload}.${sig}`, `${h}.${p}.${sig!.slice(0, -2)}AA`, 'not-a-state']) {
      const res = await modernCall(w.writeKey, 'stop_test_medication', { arguments: args, inputResponses: accept, requestState: tampered });
      expect(res.json.error).toMatchObject({ code: RPC.REQUEST_STATE_REFUSED, data: { error: 'request_state_invalid' } });
    }
    const elsewhere = await modernCall(w.writeKey, 'stop_test_medication', {
      arguments: { ...args, name: 'Insulin' },
      inputResponses: accept,
      requestState: state,
    });
    expect(elsewhere.json.error.data.error).toBe('request_state_mismatch');
    skipped += 11 * 60_000;
    try {
      const late = await modernCall(w.writeKey, 'stop_test_medication', { arguments: args, inputResponses: accept, requestState: state });
      expect(late.json.error).toMatchObject({ code: RPC.REQUEST_STATE_REFUSED, data: { error: 'request_state_expired' } });
    } finally {
      skipped -= 11 * 60_000;
    }
    expect(applied.length).toBe(before);
  });

  it('when the person declines, then nothing is applied and the result says so', async () => {
    const w = await writer('mrtr-decline@example.com');
    const before = applied.length;
    const state = (await modernCall(w.writeKey, 'stop_test_medication', { arguments: args })).json.result.requestState;
    const res = await modernCall(w.writeKey, 'stop_test_medication', {
      arguments: args,
      inputResponses: { confirm: { action: 'decline' } },
      requestState: state,
    });
    expect(res.json.result).toMatchObject({ resultType: 'complete', isError: true });
    expect(res.json.result.content[0].text).toMatch(/Not done/);
    expect(applied.length).toBe(before);
  });
});

describe('write tools - confirmation for 2025 clients (a change waiting in the app)', () => {
  const args = { medicationId: 'med_2', name: 'Lisinopril 10 mg' };

  /** An SDK 1.x client that did not declare elicitation: it cannot ask the person itself. */
  async function sdkClient(token: string) {
    const client = new Client({ name: 'writes-test', version: '1.0.0' }, { capabilities: {} });
    await client.connect(new StreamableHTTPClientTransport(new URL(mcp), { requestInit: { headers: bearer(token) } }));
    return { client };
  }

  // A client that declared elicitation is asked in the assistant instead (mcp.elicitation.test.ts).
  it('when a 2025 client without elicitation asks for a change, then it waits for the person in Settings, and once approved the next call applies it once', async () => {
    const w = await writer('pending-false@example.com');
    const { client } = await sdkClient(w.writeKey);
    const before = applied.length;
    try {
      const waiting = await client.callTool({ name: 'stop_test_medication', arguments: args });
      expect(waiting.isError).toBe(true);
      expect((waiting.content as { text: string }[])[0]!.text).toMatch(
        /Waiting for the person to approve: "Stop Lisinopril 10 mg for Ada\?" Nothing is changed yet/,
      );
      // Asking again does not make a second waiting change.
      await client.callTool({ name: 'stop_test_medication', arguments: args });
      expect(applied.length).toBe(before);

      const settings = await fetch(`${svc.urls.app}/settings`, { headers: { cookie: w.cookie } });
      const page = await settings.text();
      expect(page.match(/Approve: Stop Lisinopril 10 mg for Ada\?/g)).toHaveLength(1);
      const action = /action="(\/settings\/waiting\/[^"]+\/approve)"/.exec(page)![1]!;
      const approve = await fetch(`${svc.urls.app}${action}`, {
        method: 'POST',
        redirect: 'manual',
        headers: { cookie: w.cookie, origin: new URL(svc.config.appUrl).origin, 'content-type': 'application/x-www-form-urlencoded' },
        body: '',
      });
      expect(approve.status).toBe(303);
      const after = await (await fetch(`${svc.urls.app}/settings`, { headers: { cookie: w.cookie } })).text();
      expect(after).not.toContain('Approve: Stop Lisinopril');
      // The assistant's two calls are in the recent activity as waiting for the person (rows land within a moment).
      await vi.waitFor(async () => {
        const page = await (await fetch(`${svc.urls.app}/settings`, { headers: { cookie: w.cookie } })).text();
        expect(page.match(/Waiting for you<\/td>/g)).toHaveLength(2);
      });

      const done = await client.callTool({ name: 'stop_test_medication', arguments: args });
      expect(done.structuredContent).toEqual({ medicationId: 'med_2', stopped: true });
      const again = await client.callTool({ name: 'stop_test_medication', arguments: args });
      expect(again.structuredContent).toEqual(done.structuredContent);
      expect(applied.length).toBe(before + 1);
      // An answer posted again finds nothing waiting.
      const twice = await fetch(`${svc.urls.app}${action}`, {
        method: 'POST',
        redirect: 'manual',
        headers: { cookie: w.cookie, origin: new URL(svc.config.appUrl).origin, 'content-type': 'application/x-www-form-urlencoded' },
        body: '',
      });
      expect(twice.status).toBe(404);
    } finally {
      await client.close();
    }
  });

  it('when the person declines in Settings, then the next call is told so and nothing is applied', async () => {
    const w = await writer('pending-decline@example.com');
    const before = applied.length;
    await call(w.writeKey, 'stop_test_medication', args);
    const page = await (await fetch(`${svc.urls.app}/settings`, { headers: { cookie: w.cookie } })).text();
    const action = /action="(\/settings\/waiting\/[^"]+\/decline)"/.exec(page)![1]!;
    // Another person cannot answer it.
    const stranger = await caregiverWithKey(svc, 'stranger@example.com');
    const refused = await fetch(`${svc.urls.app}${action}`, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie: stranger.cookie, origin: new URL(svc.config.appUrl).origin, 'content-type': 'application/x-www-form-urlencoded' },
      body: '',
    });
    expect(refused.status).toBe(404);
    await fetch(`${svc.urls.app}${action}`, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie: w.cookie, origin: new URL(svc.config.appUrl).origin, 'content-type': 'application/x-www-form-urlencoded' },
      body: '',
    });
    const told = await call(w.writeKey, 'stop_test_medication', args, undefined, 2);
    expect(told.json.result.isError).toBe(true);
    expect(told.json.result.content[0].text).toMatch(/declined "Stop Lisinopril 10 mg for Ada\?" in carecircle/);
    expect(applied.length).toBe(before);
  });
});

describe('write tools - through the stdio bridge', () => {
  it('when a 2026-07-28 assistant calls a write through the bridge, then input_required reaches it and its answer comes back through to apply the write once', async () => {
    const w = await writer('bridge-writes@example.com');
    const before = applied.length;
    const bridge = spawn(process.execPath, ['bridge/bin.js'], {
      cwd: repoRoot,
      env: { PATH: process.env.PATH ?? '', CARECIRCLE_URL: mcp, CARECIRCLE_API_KEY: w.writeKey },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const lines = createInterface({ input: bridge.stdout })[Symbol.asyncIterator]();
    const exchange = async (message: unknown) => {
      bridge.stdin.write(`${JSON.stringify(message)}\n`);
      return JSON.parse((await lines.next()).value as string);
    };
    const envelope = { 'io.modelcontextprotocol/protocolVersion': MODERN, 'io.modelcontextprotocol/clientCapabilities': { elicitation: {} } };
    const args = { medicationId: 'med_3', name: 'Warfarin 5 mg' };
    try {
      const asked = await exchange({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'stop_test_medication', arguments: args, _meta: envelope } });
      expect(asked.result).toMatchObject({ resultType: 'input_required', inputRequests: { confirm: { params: { message: 'Stop Warfarin 5 mg for Ada?' } } } });
      const done = await exchange({
        jsonrpc: '2.0',
        id: 2,
        method: 'tools/call',
        params: {
          name: 'stop_test_medication',
          arguments: args,
          inputResponses: { confirm: { action: 'accept', content: { approve: true } } },
          requestState: asked.result.requestState,
          _meta: envelope,
        },
      });
      expect(done.result).toMatchObject({ resultType: 'complete', structuredContent: { medicationId: 'med_3', stopped: true } });
      expect(applied.length).toBe(before + 1);
    } finally {
      bridge.kill();
    }
  });
});
