// Confirmations asked in the assistant for 2025-era clients, through the real gateway: a client that
// declared elicitation at initialize is sent elicitation/create on the tools/call's event stream, its
// answer (posted separately, routed over the bus to the waiting call) applies or drops the write,
// only the caller who was asked can answer, and no answer in time changes nothing.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema, type ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { MEDICATIONS } from '../src/family/medications.js';
import { KeyStore } from '../src/keys/keys.js';
import { AuditLog } from '../src/workspace/audit.js';
import { family, TEST_DATA_KEY, type Family } from './ingest.fixtures.js';
import { postJson, rpc, startTestService, type TestService } from './harness/service.js';
import { freshDatabaseUrl } from './harness/servers.js';

/** Short enough for the test of no answer; far longer than a loopback answer takes. */
const WAIT_MS = 3_000;

let svc: TestService;
let mcp: string;
beforeAll(async () => {
  svc = await startTestService({ env: { DATA_KEY: TEST_DATA_KEY, MCP_ELICITATION_TIMEOUT_MS: String(WAIT_MS) } });
  mcp = `${svc.config.appUrl}/api/mcp`;
});
afterAll(async () => {
  await svc?.stop();
});

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/** A caregiver's family with a read-and-write key and one medication on the list. */
async function caregiver(): Promise<Family & { apiKey: string; medicationId: string }> {
  const fam = await family(svc.store.db, svc.credentials, svc.config);
  const apiKey = (await new KeyStore(svc.store.db, svc.credentials).mint(fam.uid, 'Claude', 'read-write')).plaintext;
  const added = await postJson(
    mcp,
    rpc('tools/call', {
      name: 'update_medication',
      arguments: {
        lovedOneId: fam.lovedOneId,
        action: 'add',
        medication: { name: 'Metformin', strength: '500 mg', times: ['08:00'], timeZone: 'Europe/London' },
      },
    }),
    bearer(apiKey),
  );
  const medicationId = JSON.parse(added.json.result.content.at(-1).text).medication.medicationId as string;
  return { ...fam, apiKey, medicationId };
}

const statusOf = async (medicationId: string) =>
  (
    await svc.store.db
      .collection<{ medicationId: string; version: number; status: string }>(MEDICATIONS)
      .find({ medicationId })
      .sort({ version: -1 })
      .limit(1)
      .next()
  )?.status;

/** An SDK 1.x client on the 2025 era; with `answer`, it declares elicitation and answers with it. */
async function sdkClient(token: string, answer?: (message: string) => Promise<ElicitResult>) {
  const asked: { message: string; schema: unknown }[] = [];
  const client = new Client({ name: 'elicitation-test', version: '1.0.0' }, { capabilities: answer ? { elicitation: {} } : {} });
  if (answer)
    client.setRequestHandler(ElicitRequestSchema, async (req) => {
      asked.push({ message: req.params.message, schema: (req.params as { requestedSchema?: unknown }).requestedSchema });
      return answer(req.params.message);
    });
  const transport = new StreamableHTTPClientTransport(new URL(mcp), { requestInit: { headers: bearer(token) } });
  await client.connect(transport);
  return { client, asked, transport };
}

const stop = (fam: { lovedOneId: string; medicationId: string }) => ({
  name: 'update_medication',
  arguments: { lovedOneId: fam.lovedOneId, action: 'stop', medicationId: fam.medicationId, reason: 'Side effects' },
});

const confirmations = async (uid: string) =>
  (await new AuditLog(svc.timelines).recent(uid, 50)).filter((r) => r.tool === 'update_medication' && r.confirmation).map((r) => r.confirmation);

describe('confirmation in the assistant (2025 elicitation)', () => {
  it('when a client that declared elicitation stops a medication and the person accepts, then the question comes on the call stream and the medication is stopped once', async () => {
    const fam = await caregiver();
    const { client, asked, transport } = await sdkClient(fam.apiKey, async () => ({ action: 'accept', content: { confirm: true } }));
    try {
      expect(transport.sessionId).toBeTruthy();
      const done = await client.callTool(stop(fam));
      expect(asked).toEqual([
        {
          message: 'Stop Metformin 500 mg for Rose Test?',
          schema: expect.objectContaining({ properties: { confirm: expect.objectContaining({ type: 'boolean' }) }, required: ['confirm'] }),
        },
      ]);
      expect(done.isError).toBeUndefined();
      expect(done.structuredContent).toMatchObject({ action: 'stop', medication: { medicationId: fam.medicationId, status: 'stopped' } });
      expect(await statusOf(fam.medicationId)).toBe('stopped');
      // The same call again is the first result, without a second question or a second version.
      const again = await client.callTool(stop(fam));
      expect(again.structuredContent).toEqual(done.structuredContent);
      expect(asked).toHaveLength(1);
      expect(await svc.store.db.collection(MEDICATIONS).countDocuments({ medicationId: fam.medicationId })).toBe(2);
      await vi.waitFor(async () => expect((await confirmations(fam.uid)).sort()).toEqual(['asked', 'confirmed', 'not_needed', 'not_needed']));
    } finally {
      await client.close();
    }
  });

  it('when the person declines in the assistant, then nothing changes and the result says so plainly', async () => {
    const fam = await caregiver();
    const { client, asked } = await sdkClient(fam.apiKey, async () => ({ action: 'decline' }));
    try {
      const res = await client.callTool(stop(fam));
      expect(asked).toHaveLength(1);
      expect(res.isError).toBe(true);
      expect((res.content as { text: string }[])[0]!.text).toBe('Not done: the person declined this change. Nothing was changed.');
      expect(await statusOf(fam.medicationId)).toBe('active');
      await vi.waitFor(async () => expect(await confirmations(fam.uid)).toContain('declined'));
    } finally {
      await client.close();
    }
  });

  it('when the person does not answer in time, then nothing changes and the result says so', async () => {
    const fam = await caregiver();
    let later!: (r: ElicitResult) => void;
    const { client } = await sdkClient(fam.apiKey, () => new Promise<ElicitResult>((resolve) => (later = resolve)));
    try {
      const res = await client.callTool(stop(fam));
      expect(res.isError).toBe(true);
      expect((res.content as { text: string }[])[0]!.text).toMatch(/did not answer in time\. Nothing was changed/);
      expect(await statusOf(fam.medicationId)).toBe('active');
      await vi.waitFor(async () => expect(await confirmations(fam.uid)).toContain('unanswered'));
    } finally {
      later?.({ action: 'cancel' });
      await client.close();
    }
  });

  it('when a client did not declare elicitation, then it gets no session and the change waits in the app', async () => {
    const fam = await caregiver();
    const { client, transport } = await sdkClient(fam.apiKey);
    try {
      expect(transport.sessionId).toBeUndefined();
      const res = await client.callTool(stop(fam));
      expect((res.content as { text: string }[])[0]!.text).toMatch(/^Waiting for the person to approve: "Stop Metformin 500 mg for Rose Test\?"/);
      expect(await statusOf(fam.medicationId)).toBe('active');
    } finally {
      await client.close();
    }
  });
});

/** The events of an SSE body, one at a time. */
async function* sseMessages(body: ReadableStream<Uint8Array>): AsyncGenerator<any> {
  const decoder = new TextDecoder();
  let buffered = '';
  const reader = body.getReader();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffered += decoder.decode(value, { stream: true });
    let end;
    while ((end = buffered.indexOf('\n\n')) >= 0) {
      const block = buffered.slice(0, end);
      buffered = buffered.slice(end + 2);
      const data = block
        .split('\n')
        .filter((l) => l.startsWith('data: '))
        .map((l) => l.slice(6))
        .join('\n');
      if (data) yield JSON.parse(data);
    }
  }
}

/** initialize declaring elicitation, then a tools/call stopping the medication: its event stream and first event. */
async function askedOnStream(url: string, apiKey: string, fam: { lovedOneId: string; medicationId: string }, id = 41) {
  const init = await postJson(
    url,
    rpc('initialize', { protocolVersion: '2025-06-18', capabilities: { elicitation: {} }, clientInfo: { name: 'raw', version: '1' } }),
    bearer(apiKey),
  );
  const session = init.headers.get('mcp-session-id')!;
  const res = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...bearer(apiKey),
      'mcp-session-id': session,
      'mcp-protocol-version': '2025-06-18',
    },
    body: JSON.stringify(rpc('tools/call', stop(fam), id)),
  });
  const events = sseMessages(res.body!);
  return { session, res, events, question: (await events.next()).value };
}

describe('confirmation in the assistant - who may answer', () => {
  it('when someone else, or an id not issued, answers the question, then it is refused and the asked caller can still answer once', async () => {
    const fam = await caregiver();
    const other = await caregiver();
    const { session, res, events, question } = await askedOnStream(mcp, fam.apiKey, fam);
    expect(session).toBeTruthy();
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(question).toMatchObject({ jsonrpc: '2.0', method: 'elicitation/create', params: { message: 'Stop Metformin 500 mg for Rose Test?' } });
    const answer = (id: unknown, who: Record<string, string>) =>
      postJson(mcp, { jsonrpc: '2.0', id, result: { action: 'accept', content: { confirm: true } } }, { ...who, 'mcp-protocol-version': '2025-06-18' });

    // Another person's key, with the right id: refused, and the question still waits.
    const stranger = await answer(question.id, bearer(other.apiKey));
    expect(stranger.status).toBe(404);
    expect(stranger.json.error.message).toMatch(/No question is waiting/);
    // An id this server never issued.
    expect((await answer('made-up', bearer(fam.apiKey))).status).toBe(404);
    // The same session id under another credential does not make it able to answer either.
    expect((await answer(question.id, { ...bearer(other.apiKey), 'mcp-session-id': session })).status).toBe(404);
    expect(await statusOf(fam.medicationId)).toBe('active');

    const accepted = await answer(question.id, bearer(fam.apiKey));
    expect(accepted.status).toBe(202);
    const result = (await events.next()).value;
    expect(result).toMatchObject({ jsonrpc: '2.0', id: 41, result: { structuredContent: { medication: { status: 'stopped' } } } });
    expect(await statusOf(fam.medicationId)).toBe('stopped');
    // The same answer again finds nothing waiting.
    expect((await answer(question.id, bearer(fam.apiKey))).status).toBe(404);
  });
});

/** A form post from one of the app's pages. */
const formPost = (cookie: string, path: string, form: Record<string, string> = {}) =>
  fetch(`${svc.config.appUrl}${path}`, {
    method: 'POST',
    redirect: 'manual',
    headers: { cookie, origin: new URL(svc.config.appUrl).origin, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(form).toString(),
  });

/** The form action of the one change waiting in Settings. */
async function waitingAction(cookie: string, decision: 'approve' | 'decline'): Promise<string> {
  const page = await (await fetch(`${svc.config.appUrl}/settings`, { headers: { cookie } })).text();
  return new RegExp(`action="(/settings/waiting/[^"]+/${decision})"`).exec(page)![1]!;
}

describe('a change approved in the app', () => {
  it("when the person approves a waiting change in Settings, then it is made there, its audit row names who approved it, and the assistant's identical call gets that result", async () => {
    const fam = await caregiver();
    const asked = await postJson(mcp, rpc('tools/call', stop(fam)), bearer(fam.apiKey));
    expect(asked.json.result.content[0].text).toMatch(/^Waiting for the person to approve/);
    const approved = await formPost(fam.cookie, await waitingAction(fam.cookie, 'approve'));
    expect(approved.status).toBe(303);
    // Made on approval, before the assistant calls again.
    expect(await statusOf(fam.medicationId)).toBe('stopped');
    const page = await (await fetch(`${svc.config.appUrl}/settings`, { headers: { cookie: fam.cookie } })).text();
    expect(page).not.toContain('Approve: Stop Metformin');

    const again = await postJson(mcp, rpc('tools/call', stop(fam), 2), bearer(fam.apiKey));
    expect(again.json.result.isError).toBeUndefined();
    expect(again.json.result.structuredContent).toMatchObject({ action: 'stop', medication: { medicationId: fam.medicationId, status: 'stopped' } });
    // Added, then stopped once: no second version from the assistant's call.
    expect(await svc.store.db.collection(MEDICATIONS).countDocuments({ medicationId: fam.medicationId })).toBe(2);
    await vi.waitFor(async () => {
      const rows = (await new AuditLog(svc.timelines).recent(fam.uid, 50)).filter((r) => r.confirmation === 'approved_in_app');
      expect(rows).toEqual([
        expect.objectContaining({ tool: 'update_medication', success: true, approvedBy: `${fam.uid}@example.com`, targets: expect.any(Array) }),
      ]);
    });
  });

  it('when the medication was changed after the assistant asked, then approving is refused with the reason and nothing is changed', async () => {
    const fam = await caregiver();
    const change = {
      ...stop(fam),
      arguments: { lovedOneId: fam.lovedOneId, action: 'change', medicationId: fam.medicationId, medication: { strength: '1000 mg' } },
    };
    await postJson(mcp, rpc('tools/call', change), bearer(fam.apiKey));
    const action = await waitingAction(fam.cookie, 'approve');
    // Meanwhile someone stops it in the app.
    expect((await formPost(fam.cookie, `/care/${fam.lovedOneId}/medication-list/${fam.medicationId}/stop`, { version: '1' })).status).toBe(303);
    const refused = await formPost(fam.cookie, action);
    expect(refused.status).toBe(409);
    expect(await refused.text()).toMatch(/has changed since your assistant asked/);
    const versions = await svc.store.db.collection<{ version: number; strength?: string }>(MEDICATIONS).find({ medicationId: fam.medicationId }).toArray();
    expect(versions.map((v) => v.strength)).toEqual(['500 mg', '500 mg']);
    // Gone from the list; approving it again finds nothing.
    expect((await formPost(fam.cookie, action)).status).toBe(404);
  });

  it('when the person declines a waiting change, then it leaves the list and nothing is made', async () => {
    const fam = await caregiver();
    await postJson(mcp, rpc('tools/call', stop(fam)), bearer(fam.apiKey));
    expect((await formPost(fam.cookie, await waitingAction(fam.cookie, 'decline'))).status).toBe(303);
    const page = await (await fetch(`${svc.config.appUrl}/settings`, { headers: { cookie: fam.cookie } })).text();
    expect(page).not.toContain('Approve: Stop Metformin');
    expect(await statusOf(fam.medicationId)).toBe('active');
  });
});

describe('confirmation in the assistant - across gateways', () => {
  it('when the answer is posted to another gateway than the one holding the stream, then it reaches the waiting call over NATS and the change is made', async () => {
    const mongoUrl = freshDatabaseUrl(inject('mongoUrl'));
    const env = { DATA_KEY: TEST_DATA_KEY, BUS_NAMESPACE: `elicit${process.pid}` };
    const started: TestService[] = [];
    try {
      for (const role of ['worker', 'gateway', 'gateway'] as const) started.push(await startTestService({ nats: true, role, mongoUrl, env }));
      const [worker, one, two] = started as [TestService, TestService, TestService];
      const fam = await family(worker.store.db, worker.credentials, worker.config);
      const apiKey = (await new KeyStore(worker.store.db, worker.credentials).mint(fam.uid, 'Claude', 'read-write')).plaintext;
      const added = await postJson(
        `${one.urls.app}/api/mcp`,
        rpc('tools/call', {
          name: 'update_medication',
          arguments: { lovedOneId: fam.lovedOneId, action: 'add', medication: { name: 'Metformin', strength: '500 mg', times: ['08:00'], timeZone: 'UTC' } },
        }),
        bearer(apiKey),
      );
      const medicationId = JSON.parse(added.json.result.content.at(-1).text).medication.medicationId as string;
      const { events, question } = await askedOnStream(`${one.urls.app}/api/mcp`, apiKey, { lovedOneId: fam.lovedOneId, medicationId });
      expect(question.method).toBe('elicitation/create');
      const answered = await postJson(
        `${two.urls.app}/api/mcp`,
        { jsonrpc: '2.0', id: question.id, result: { action: 'accept', content: { confirm: true } } },
        { ...bearer(apiKey), 'mcp-protocol-version': '2025-06-18' },
      );
      expect(answered.status).toBe(202);
      expect((await events.next()).value).toMatchObject({ id: 41, result: { structuredContent: { medication: { status: 'stopped' } } } });
    } finally {
      for (const s of started.reverse()) await s.stop();
    }
  });
});
