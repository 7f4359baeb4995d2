// The family records a workspace call reads (served from memory in every worker) and its care
// events, and changes that still hold on the very next request everywhere: two gateways and two
// worker processes over NATS, a stream of calls on gateway B (reads racing the change included)
// while gateway A changes what they read.
import { describe, expect, it, vi } from 'vitest';
import { appendCareEvents, type CareEventRecord } from '../src/family/records.js';
import { RPC } from '../src/rpc/codes.js';
import { caregiverWithKey, signIn } from './harness/identity.js';
import type { TestService } from './harness/service.js';
import { twoGatewaysForFile } from './harness/twoGateways.js';

const deployment = twoGatewaysForFile('memo');

interface Outcome {
  startedAt: number;
  /** The event ids listed, or the JSON-RPC error code. */
  seen: string;
}

/** list_care_events of one loved one on gateway B from `clients` callers at once, each sending
 *  the next when its last is answered, until `stop()`. */
function streamOn(gateway: TestService, credential: { authorization?: string; cookie?: string }, lovedOneId: string, clients = 4) {
  const outcomes: Outcome[] = [];
  let running = true;
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'list_care_events', arguments: { lovedOneId, limit: 5 } } });
  const loops = Array.from({ length: clients }, async () => {
    while (running) {
      const startedAt = performance.now();
      const res = await fetch(`${gateway.urls.app}/api/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', ...credential }, body });
      const json = (await res.json()) as {
        error?: { code: number };
        result: { structuredContent?: { events: { id: string }[] }; content: { text: string }[] };
      };
      const listed = json.error ? null : (json.result.structuredContent ?? (JSON.parse(json.result.content.at(-1)!.text) as { events: { id: string }[] }));
      outcomes.push({ startedAt, seen: listed ? listed.events.map((e) => e.id).join(',') : String(json.error!.code) });
    }
  });
  return {
    outcomes,
    stop: async () => {
      running = false;
      await Promise.all(loops);
    },
  };
}

/** Until `check` holds: under load each call of the stream may wait for the bus (see the timeout below). */
const until = (check: () => boolean) => vi.waitFor(() => expect(check()).toBe(true), { timeout: 60_000, interval: 10 });

const handled = () => deployment().workers.map((w) => w.lines.filter((l) => l.includes('"msg":"handled"')).length);

/** What the calls on B saw after `change` returned, once both workers had served the stream
 *  before it; also checks that both workers served calls made after it. */
async function acrossChange(
  credential: { authorization?: string; cookie?: string },
  lovedOneId: string,
  change: () => Promise<void>,
): Promise<{ before: string[]; after: string[] }> {
  const stream = streamOn(deployment().b, credential, lovedOneId);
  await until(() => stream.outcomes.length >= 40);
  await change();
  const returnedAt = performance.now();
  const served = handled();
  await until(() => stream.outcomes.filter((o) => o.startedAt > returnedAt).length >= 40);
  await stream.stop();
  // More than the calls in flight when the change returned: each worker served calls made after it.
  handled().forEach((n, i) => expect(n - served[i]!).toBeGreaterThan(4));
  return {
    before: stream.outcomes.filter((o) => o.startedAt < returnedAt).map((o) => o.seen),
    after: stream.outcomes.filter((o) => o.startedAt > returnedAt).map((o) => o.seen),
  };
}

const form = (cookie: string, path: string, body: Record<string, string> = {}) =>
  fetch(`${deployment().a.urls.app}${path}`, {
    method: 'POST',
    redirect: 'manual',
    headers: { cookie, origin: new URL(deployment().a.config.appUrl).origin, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(body).toString(),
  });

let seq = 0;
const event = (who: { lovedOneId: string; workspaceId: string }, at: string): CareEventRecord => ({
  _id: `evt_memo${String(seq++).padStart(4, '0')}`,
  lovedOneId: who.lovedOneId,
  workspaceId: who.workspaceId,
  source: 'partner',
  institutionId: 'inst_memo',
  subjectRef: 'subj-1',
  eventType: 'vital_recorded',
  occurredAt: new Date(at),
  receivedAt: new Date(),
  payload: { value: seq },
});

// Under load a call may wait up to the deployment's 20 s bus budget (test/harness/twoGateways.ts).
describe('family records in memory - changes across gateways and workers under load', { timeout: 90_000 }, () => {
  it("when a care event is added on gateway A while gateway B serves its loved one's listing, then every call on B that starts after the append returned lists it", async () => {
    const fam = await caregiverWithKey(deployment().a, 'memo-events@example.com');
    const old = [event(fam, '2026-10-01T08:00:00Z'), event(fam, '2026-10-02T08:00:00Z')];
    await appendCareEvents(deployment().a.timelines, old);
    const added = event(fam, '2026-10-03T08:00:00Z');
    const seen = await acrossChange({ authorization: `Bearer ${fam.apiKey}` }, fam.lovedOneId, () =>
      appendCareEvents(deployment().a.timelines, [added]).then(() => undefined),
    );
    expect(seen.before.length).toBeGreaterThanOrEqual(40);
    expect(new Set(seen.before.slice(0, 30))).toEqual(new Set([`${old[1]!._id},${old[0]!._id}`]));
    expect(new Set(seen.after)).toEqual(new Set([`${added._id},${old[1]!._id},${old[0]!._id}`]));
  });

  it('when a loved one is removed on gateway A while gateway B serves their listing, then every call on B that starts after the removal returned is not authorized', async () => {
    const fam = await caregiverWithKey(deployment().a, 'memo-removal@example.com');
    const seen = await acrossChange({ authorization: `Bearer ${fam.apiKey}` }, fam.lovedOneId, async () => {
      expect((await form(fam.cookie, `/workspace/loved-ones/${fam.lovedOneId}/remove`)).status).toBe(303);
    });
    expect(new Set(seen.before.slice(0, 30))).toEqual(new Set(['']));
    expect(new Set(seen.after)).toEqual(new Set([String(RPC.NOT_AUTHORIZED)]));
  });

  it('when a member is removed on gateway A while gateway B serves their calls, then every call on B that starts after the removal returned is not authorized', async () => {
    const cg = await caregiverWithKey(deployment().a, 'memo-manager@example.com');
    await appendCareEvents(deployment().a.timelines, [event(cg, '2026-10-04T08:00:00Z')]);
    const invited = await form(cg.cookie, '/family/invites', { email: 'memo-member@example.com' });
    const link = new RegExp(`${deployment().a.config.appUrl}/join/[A-Za-z0-9._%-]+`).exec(await invited.text())![0];
    const member = await signIn(deployment().a, 'memo-member@example.com');
    expect((await form(member, new URL(link).pathname)).status).toBe(303);
    const uid = (await deployment().a.store.db.collection<{ _id: string; email: string }>('users').findOne({ email: 'memo-member@example.com' }))!._id;

    const seen = await acrossChange({ cookie: member }, cg.lovedOneId, async () => {
      expect((await form(cg.cookie, `/family/members/${uid}/remove`)).status).toBe(303);
    });
    expect(seen.before.slice(0, 30).every((s) => s.startsWith('evt_memo'))).toBe(true);
    expect(new Set(seen.after)).toEqual(new Set([String(RPC.NOT_AUTHORIZED)]));
  });
});
