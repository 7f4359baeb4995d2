// What appending a batch of care events costs a loved one's timeline on the store: on FerretDB v1
// every update, delete and missed lookup reads through the whole collection, so the number of
// commands a batch sends is the cost. Command monitoring on the test's own clients counts them.
import { MongoClient, type CommandStartedEvent, type Db } from 'mongodb';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { appendCareEvents, type CareEventRecord } from '../src/family/records.js';
import { listTimeline, setTimelinePages, settledCollection, startTimeline, timelineCollection } from '../src/family/timeline.js';
import { databaseName } from '../src/store/mongo.js';
import { freshDatabaseUrl } from './harness/servers.js';

const clients: MongoClient[] = [];
const commands: { name: string; collection: string; deleting?: unknown[] }[] = [];
let db: Db;
let other: Db;

beforeAll(async () => {
  const url = new URL(freshDatabaseUrl(inject('mongoUrl')));
  url.searchParams.set('monitorCommands', 'true');
  const connect = async () => {
    const client = await new MongoClient(url.toString()).connect();
    clients.push(client);
    client.on('commandStarted', (e: CommandStartedEvent) =>
      commands.push({ name: e.commandName, collection: String(e.command[e.commandName]), ...(e.commandName === 'delete' ? { deleting: (e.command.deletes as { q: { _id?: unknown } }[]).map((d) => d.q._id) } : {}) }),
    );
    const d = client.db(databaseName(url.toString()));
    setTimelinePages(d, true);
    return d;
  };
  db = await connect();
  other = await connect();
});
afterAll(async () => {
  await db?.dropDatabase();
  for (const c of clients) await c.close();
});

let seq = 0;
const event = (who: { lovedOneId: string; workspaceId: string }, at: number): CareEventRecord => ({
  _id: `evt_c${String(seq++).padStart(6, '0')}`,
  ...who,
  source: 'partner',
  institutionId: 'inst_test',
  subjectRef: 'subj-1',
  eventType: 'visit_started',
  occurredAt: new Date(Date.parse('2026-10-01T00:00:00Z') + at * 1000),
  receivedAt: new Date(),
  payload: { n: seq },
});
const newestFirst = (events: CareEventRecord[]) => [...events].sort((a, b) => b.occurredAt.getTime() - a.occurredAt.getTime() || (a._id < b._id ? 1 : -1)).map((e) => e._id);
const listed = async (lovedOneId: string) => (await listTimeline(db, lovedOneId, { limit: 10_000 })).map((e) => e._id);

describe('appending a batch to a loved one timeline', () => {
  it('when a batch fills several chunks, then it costs a dozen commands besides deleting what moved, and every event is listed once', async () => {
    const who = { lovedOneId: 'lo_commands', workspaceId: 'ws_commands' };
    await startTimeline(db, who.lovedOneId, who.workspaceId);
    const first = Array.from({ length: 250 }, (_, i) => event(who, (i * 37) % 250));
    await appendCareEvents(db, first);
    const second = Array.from({ length: 250 }, (_, i) => event(who, 250 + ((i * 41) % 250)));
    commands.length = 0;
    await appendCareEvents(db, second);
    const pages = new Set([timelineCollection(who.lovedOneId), settledCollection(who.lovedOneId)]);
    const onPages = commands.filter((c) => pages.has(c.collection));
    // Two and a half chunks: one read and write of the open chunk, two chunks made whole, one
    // insert of the sealed ones where they rest, the index's read and write, and after each
    // compare-and-set a look at the head (a writer that stalled must not write into versions
    // removed or pruned meanwhile: test/keyed-states.race.test.ts).
    const deletes = onPages.filter((c) => c.name === 'delete');
    expect(onPages.length - deletes.length).toBeLessThanOrEqual(12);
    // The three chunks moved, each head and version by its `_id` (for `$in` or any field,
    // FerretDB v1 decodes every document of the collection), all in one command.
    expect(deletes.length).toBeLessThanOrEqual(1);
    for (const id of deletes.flatMap((d) => d.deleting!)) expect(id).toMatch(/^2026-10(\.\d+)?(#\d+)?$/);
    expect(await listed(who.lovedOneId)).toEqual(newestFirst([...first, ...second]));
  });

  it('when two connections append the same large batches at once, then every event is listed once and no chunk outgrows its bound', async () => {
    const who = { lovedOneId: 'lo_commands_race', workspaceId: 'ws_commands_race' };
    await startTimeline(db, who.lovedOneId, who.workspaceId);
    const events = Array.from({ length: 1_000 }, (_, i) => event(who, (i * 7) % 1_000));
    const batches = [130, 170, 99, 101, 250, 250].reduce<CareEventRecord[][]>((out, size) => [...out, events.slice(out.flat().length, out.flat().length + size)], []);
    // Each batch from both connections together: seals and new chunks race each other.
    for (const batch of batches) await Promise.all([appendCareEvents(db, batch), appendCareEvents(other, [...batch].reverse())]);
    expect(await listed(who.lovedOneId)).toEqual(newestFirst(events));
    const open = await db.collection<{ state: { events: string } }>(timelineCollection(who.lovedOneId)).find({ _id: { $regex: /^2026-10(\.\d+)?$/ } as never }).toArray();
    const sealed = await db.collection<{ events: string }>(settledCollection(who.lovedOneId)).find({}).toArray();
    expect(sealed.length).toBeGreaterThanOrEqual(9);
    for (const chunk of [...open.map((h) => h.state.events), ...sealed.map((d) => d.events)]) expect((JSON.parse(chunk) as unknown[]).length).toBeLessThanOrEqual(100);
  });
});
