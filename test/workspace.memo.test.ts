// What a steady-state workspace call reads from the store: the loved one's own timeline and
// nothing else. The driver's command monitoring on the service's own client shows that the
// caller's membership, workspace and loved one come from memory once the process has read them;
// the listing reads the loved one's month list and newest months (a few small collections of its
// own), and the audit row, written off the reply path, still reaches the store.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { appendCareEvents, type CareEventRecord } from '../src/family/records.js';
import { MCP_AUDIT_LOG } from '../src/workspace/auditRow.js';
import { caregiverWithKey } from './harness/identity.js';
import { sentCommands, watchedDatabaseUrl, type SentCommand } from './harness/servers.js';
import { startTestService, type TestService } from './harness/service.js';

const READS = new Set(['find', 'aggregate', 'count', 'distinct', 'getMore']);
/** The audit write's own collections: the log, and its caller's activity timeline. */
const auditWrite = (collection: string) => collection === MCP_AUDIT_LOG || /^tlm?_activity_/.test(collection);
/** The loved one's own care timeline on the embedded store (the indexed one reads `care_events`). */
const ownTimeline = (lovedOneId: string) => (collection: string) =>
  new RegExp(`^tlm?_care_(\\d{6}_)?${lovedOneId}$`).test(collection) || collection === 'care_events';

let svc: TestService;
let commands: SentCommand[] = [];

beforeAll(async () => {
  const url = watchedDatabaseUrl(inject('mongoUrl'));
  svc = await startTestService({ mongoUrl: url, env: { RATE_MCP_KEY_PER_MIN: '100000' } });
  // The requests' commands only: the cron's minute run (leases, the alert sweeps) reads the store
  // on its own clock, and once it ticked within the window counted here.
  await svc.cron?.stop();
  commands = sentCommands(svc.store.client);
});
afterAll(async () => {
  await svc?.stop();
});

const listing = (credential: { authorization?: string; cookie?: string }, lovedOneId: string) =>
  fetch(`${svc.urls.app}/api/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...credential },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'list_care_events', arguments: { lovedOneId, limit: 3 } } }),
  }).then(async (res) => {
    expect(res.status).toBe(200);
    const json = (await res.json()) as { result: { isError?: boolean; content: { text: string }[] } };
    expect(json.result.isError).toBeFalsy();
    return (JSON.parse(json.result.content.at(-1)!.text) as { events: { id: string }[] }).events.map((e) => e.id);
  });

const event = (who: { lovedOneId: string; workspaceId: string }, n: number): CareEventRecord => ({
  _id: `evt_steady${n}`,
  lovedOneId: who.lovedOneId,
  workspaceId: who.workspaceId,
  source: 'partner',
  institutionId: 'inst_steady',
  subjectRef: 'subj-1',
  eventType: 'vital_recorded',
  occurredAt: new Date(Date.UTC(2026, 8 + (n % 3), 1 + n)),
  receivedAt: new Date(),
  payload: { value: n },
});

describe('workspace calls - no store read per request', () => {
  it("when a key or a session cookie lists a loved one's care events again, then no command reads the store but the loved one's timeline and the audit write's own", async () => {
    const fam = await caregiverWithKey(svc, 'steady-reads@example.com');
    // Events over three months: the listing reads the month list and more than one page.
    await appendCareEvents(
      svc.timelines,
      Array.from({ length: 6 }, (_, n) => event(fam, n)),
    );
    for (const credential of [{ authorization: `Bearer ${fam.apiKey}` }, { cookie: fam.cookie }]) {
      const first = await listing(credential, fam.lovedOneId);
      expect(first).toEqual(['evt_steady5', 'evt_steady2', 'evt_steady4']);
      commands.length = 0;
      for (let i = 0; i < 10; i++) expect(await listing(credential, fam.lovedOneId)).toEqual(first);
      // The requests did reach the store (their audit rows), so monitoring saw them.
      await expect.poll(() => commands.some((c) => c.name === 'insert' && c.collection === MCP_AUDIT_LOG)).toBe(true);
      const sent = commands.splice(0);
      expect(sent.filter((c) => READS.has(c.name) && !auditWrite(c.collection) && !ownTimeline(fam.lovedOneId)(c.collection))).toEqual([]);
      expect(sent.some((c) => ownTimeline(fam.lovedOneId)(c.collection))).toBe(true);
    }
  });
});
