// list_care_events' time, type and cursor arguments, and the two read shapes behind them (month
// pages on FerretDB, the record's index on MongoDB): stable paging while events arrive,
// batches written once per page, concurrent appends, and purges that leave nothing listed.
import { passThroughCredentials } from '../src/auth/credentials.js';
import { MongoClient, type Db } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RPC } from '../src/rpc/codes.js';
import { databaseName } from '../src/store/mongo.js';
import { appendCareEvent, appendCareEvents, careEventStored, deleteLovedOneCareEvents, purgePartnerCareEvents, WorkspaceStore, WORKSPACE_COLLECTIONS, type CareEventRecord } from '../src/family/records.js';
import { setTimelinePages, settledCollection, startTimeline, timelineCollection } from '../src/family/timeline.js';
import { caregiverWithKey } from './harness/identity.js';
import { postJson, rpc, startTestService, type TestService } from './harness/service.js';

let svc: TestService;
const clients: MongoClient[] = [];
let db: Db;
let mcp: string;
/** Each read shape on its own connections, both on the test server. */
const shapes: Record<'pages' | 'query', { db: Db; other: Db; store: WorkspaceStore }> = {} as never;

beforeAll(async () => {
  svc = await startTestService();
  mcp = `${svc.urls.app}/api/mcp`;
  const connect = async (pages: boolean) => {
    const client = await new MongoClient(svc.mongoUrl).connect();
    clients.push(client);
    const d = client.db(databaseName(svc.mongoUrl));
    setTimelinePages(d, pages);
    return d;
  };
  for (const [name, pages] of [['pages', true], ['query', false]] as const) {
    const main = await connect(pages);
    shapes[name] = { db: main, other: await connect(pages), store: new WorkspaceStore(main, passThroughCredentials(main), svc.config.inboxDomain) };
  }
  db = shapes.pages.db;
});
afterAll(async () => {
  for (const c of clients) await c.close();
  await svc?.stop();
});

const callTool = (key: string, args: Record<string, unknown> = {}) => postJson(mcp, rpc('tools/call', { name: 'list_care_events', arguments: args }), { authorization: `Bearer ${key}` });
const toolJson = (res: { json: any }) => res.json.result.structuredContent ?? JSON.parse(res.json.result.content.at(-1).text);
const ids = (res: { json: any }) => toolJson(res).events.map((e: any) => e.id);

let seq = 0;
function event(who: { lovedOneId: string; workspaceId: string }, at: string, extra: Partial<CareEventRecord> = {}): CareEventRecord {
  return {
    _id: `evt_t${String(seq++).padStart(5, '0')}`,
    lovedOneId: who.lovedOneId,
    workspaceId: who.workspaceId,
    source: 'partner',
    institutionId: 'inst_test',
    subjectRef: 'subj-1',
    eventType: 'vital_recorded',
    occurredAt: new Date(at),
    receivedAt: new Date(),
    payload: { value: seq },
    ...extra,
  };
}
const at = (base: string, minutes: number) => new Date(Date.parse(base) + minutes * 60_000).toISOString();
const newestFirst = (events: CareEventRecord[]) => [...events].sort((a, b) => b.occurredAt.getTime() - a.occurredAt.getTime() || (a._id < b._id ? 1 : -1)).map((e) => e._id);

describe('list_care_events arguments', () => {
  it('when since and until are given, then only events at or after since and before until', async () => {
    const me = await caregiverWithKey(svc, 'window@example.com');
    const events = ['2026-09-30T23:59:59Z', '2026-10-01T00:00:00Z', '2026-10-15T12:00:00Z', '2026-10-31T23:59:59Z', '2026-11-01T00:00:00Z'].map((t) => event(me, t));
    await appendCareEvents(db, events);
    expect(ids(await callTool(me.apiKey, { lovedOneId: me.lovedOneId, since: '2026-10-01T00:00:00Z', until: '2026-11-01T00:00:00Z' }))).toEqual([events[3]!._id, events[2]!._id, events[1]!._id]);
    expect(ids(await callTool(me.apiKey, { lovedOneId: me.lovedOneId, since: '2026-10-16T02:00:00+02:00' }))).toEqual([events[4]!._id, events[3]!._id]);
    expect(ids(await callTool(me.apiKey, { lovedOneId: me.lovedOneId, until: '2026-10-01T00:00:00Z' }))).toEqual([events[0]!._id]);
  });

  it('when types are given, then only those types, unknown types included', async () => {
    const me = await caregiverWithKey(svc, 'types@example.com');
    const vital = event(me, '2026-10-02T08:00:00Z');
    const med = event(me, '2026-10-02T09:00:00Z', { eventType: 'medication_given' });
    const novel = event(me, '2026-10-02T10:00:00Z', { eventType: 'hydration_logged_v2' });
    await appendCareEvents(db, [vital, med, novel]);
    expect(ids(await callTool(me.apiKey, { lovedOneId: me.lovedOneId, types: ['medication_given', 'hydration_logged_v2'] }))).toEqual([novel._id, med._id]);
    expect(ids(await callTool(me.apiKey, { lovedOneId: me.lovedOneId, types: ['not_sent_yet'] }))).toEqual([]);
  });

  it('when paging with cursor while events arrive, then no event twice, none skipped, newer arrivals not mixed in', async () => {
    const me = await caregiverWithKey(svc, 'pages@example.com');
    // 25 events over three months, two of them at the same instant (ties go by id).
    const events = Array.from({ length: 25 }, (_, i) => event(me, at('2026-08-20T00:00:00Z', i === 13 ? 12 * 3 * 24 * 60 : i * 3 * 24 * 60)));
    await appendCareEvents(db, events);
    const expected = newestFirst(events);

    const first = toolJson(await callTool(me.apiKey, { lovedOneId: me.lovedOneId, limit: 10 }));
    expect(first.events.map((e: any) => e.id)).toEqual(expected.slice(0, 10));
    expect(first.nextCursor).toEqual(expect.any(String));
    // Between pages: one newer than everything, one older than the cursor, one redelivered.
    const newer = event(me, '2026-12-01T00:00:00Z');
    const older = event(me, '2026-08-01T00:00:00Z');
    await appendCareEvent(db, newer);
    await appendCareEvents(db, [older, events[3]!]);

    const second = toolJson(await callTool(me.apiKey, { lovedOneId: me.lovedOneId, limit: 10, cursor: first.nextCursor }));
    const third = toolJson(await callTool(me.apiKey, { lovedOneId: me.lovedOneId, limit: 10, cursor: second.nextCursor }));
    expect([...second.events, ...third.events].map((e: any) => e.id)).toEqual([...expected.slice(10), older._id]);
    expect(third.nextCursor).toBeUndefined();
    expect(third.count).toBe(6);
  });

  it('when the workspace is listed without lovedOneId, then each loved one carries its own nextCursor', async () => {
    const me = await caregiverWithKey(svc, 'aggregate@example.com');
    await appendCareEvents(db, [0, 1, 2].map((i) => event(me, at('2026-10-05T00:00:00Z', i))));
    const all = toolJson(await callTool(me.apiKey, { limit: 2, types: ['vital_recorded'] }));
    expect(all.byLovedOne).toHaveLength(1);
    expect(all.byLovedOne[0].events).toHaveLength(2);
    const rest = toolJson(await callTool(me.apiKey, { lovedOneId: me.lovedOneId, limit: 2, cursor: all.byLovedOne[0].nextCursor }));
    expect(rest.count).toBe(1);
    expect(rest.nextCursor).toBeUndefined();
  });

  it('when an argument is malformed, then -32602 naming it', async () => {
    const me = await caregiverWithKey(svc, 'malformed@example.com');
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ lovedOneId: me.lovedOneId, since: 'last week' }, /since/],
      [{ lovedOneId: me.lovedOneId, until: '2026-10-01' }, /until/],
      [{ lovedOneId: me.lovedOneId, since: '2026-10-02T00:00:00Z', until: '2026-10-01T00:00:00Z' }, /until/],
      [{ lovedOneId: me.lovedOneId, types: 'vital_recorded' }, /types/],
      [{ lovedOneId: me.lovedOneId, types: [] }, /types/],
      [{ cursor: 'abc' }, /lovedOneId/],
      [{ lovedOneId: me.lovedOneId, cursor: 'not-a-cursor' }, /cursor/],
      [{ lovedOneId: me.lovedOneId, cursor: Buffer.from('{"l":1}').toString('base64url') }, /cursor/],
    ];
    for (const [args, field] of cases) {
      const res = await callTool(me.apiKey, args);
      expect(res.json.error?.code, JSON.stringify(args)).toBe(RPC.INVALID_PARAMS);
      expect(res.json.error.message).toMatch(field);
    }
  });

  it("when a cursor comes with another family's lovedOneId, then -32003 as without one", async () => {
    const me = await caregiverWithKey(svc, 'cursor-me@example.com');
    const other = await caregiverWithKey(svc, 'cursor-other@example.com');
    await appendCareEvents(db, [0, 1, 2].map((i) => event(other, at('2026-10-05T00:00:00Z', i))));
    const theirs = toolJson(await callTool(other.apiKey, { lovedOneId: other.lovedOneId, limit: 1 })).nextCursor;
    expect(theirs).toEqual(expect.any(String));
    const withCursor = await callTool(me.apiKey, { lovedOneId: other.lovedOneId, cursor: theirs });
    const without = await callTool(me.apiKey, { lovedOneId: other.lovedOneId });
    expect(withCursor.json.error.code).toBe(RPC.NOT_AUTHORIZED);
    expect(withCursor.json.error).toEqual(without.json.error);
  });
});

const timelineExists = async (lovedOneId: string) => (await db.listCollections({ name: { $in: [timelineCollection(lovedOneId), settledCollection(lovedOneId)] } }, { nameOnly: true }).toArray()).length > 0;

describe.each(['pages', 'query'] as const)('care event storage read through %s', (shape) => {
  const who = (n: string) => ({ lovedOneId: `lo_${shape}_${n}`, workspaceId: `ws_${shape}_${n}` });

  it('when the same loved one gets events from two connections at once, then every one is listed exactly once', async () => {
    const { db: mine, other, store } = shapes[shape];
    const me = who('concurrent');
    const events = Array.from({ length: 24 }, (_, i) => event(me, at('2026-10-31T12:00:00Z', i * 60)));
    // Each event twice, from both connections, in batches that cross a month boundary.
    const batches = [0, 6, 12, 18].map((i) => events.slice(i, i + 6));
    const results = await Promise.all(batches.flatMap((b) => [appendCareEvents(mine, b), appendCareEvents(other, b)]));
    expect(results.flatMap((r) => r.stored).sort()).toEqual(events.map((e) => e._id).sort());
    expect(results.flatMap((r) => r.duplicates).sort()).toEqual(events.map((e) => e._id).sort());
    expect((await store.listCareEvents(me.lovedOneId, { limit: 50 })).events.map((e) => e._id)).toEqual(newestFirst(events));
    expect(await careEventStored(mine, events[5]!._id)).toBe(true);
    expect(await careEventStored(mine, 'evt_never')).toBe(false);
  });

  it('when events were stored before the pages existed, then the first read lists them and later events join them', async () => {
    const { db: mine, store } = shapes[shape];
    const me = who('legacy');
    const events = Array.from({ length: 5 }, (_, i) => event(me, at('2026-06-28T00:00:00Z', i * 24 * 60)));
    // Written as an older version did: the record only.
    await mine.collection<CareEventRecord>(WORKSPACE_COLLECTIONS.careEvents).insertMany(events);
    expect((await store.listCareEvents(me.lovedOneId, { limit: 3 })).events.map((e) => e._id)).toEqual([events[4]!._id, events[3]!._id, events[2]!._id]);
    const later = event(me, '2026-07-30T00:00:00Z');
    await appendCareEvent(mine, later);
    expect((await store.listCareEvents(me.lovedOneId, { limit: 2 })).events.map((e) => e._id)).toEqual([later._id, events[4]!._id]);
  });

  it('when a partner purges a subject, a loved one is removed or a workspace is purged, then nothing of theirs is listed', async () => {
    const { db: mine, store } = shapes[shape];
    const me = who('purges');
    const kept = event(me, '2026-10-03T00:00:00Z', { subjectRef: 'subj-keep' });
    const purged = [event(me, '2026-09-03T00:00:00Z', { subjectRef: `subj-gone-${shape}` }), event(me, '2026-10-04T00:00:00Z', { subjectRef: `subj-gone-${shape}` })];
    await appendCareEvents(mine, [kept, ...purged]);
    expect(await purgePartnerCareEvents(mine, 'inst_test', `subj-gone-${shape}`)).toBe(2);
    expect((await store.listCareEvents(me.lovedOneId, { limit: 10 })).events.map((e) => e._id)).toEqual([kept._id]);

    expect(await deleteLovedOneCareEvents(mine, me.workspaceId, me.lovedOneId)).toBe(1);
    expect(await timelineExists(me.lovedOneId)).toBe(false);
    expect((await store.listCareEvents(me.lovedOneId, { limit: 10 })).events).toEqual([]);

    const ws = await store.createWorkspace({ name: 'Purged family', owner: { uid: `uid_${shape}`, email: `${shape}@example.com` }, sandbox: false });
    const lovedOne = await store.addLovedOne(ws._id, { firstName: 'Ida', lastName: 'Gone' }, false);
    const theirs = { lovedOneId: lovedOne._id, workspaceId: ws._id };
    await appendCareEvents(mine, [event(theirs, '2026-10-03T00:00:00Z'), event(theirs, '2026-11-03T00:00:00Z')]);
    expect(await timelineExists(lovedOne._id)).toBe(shape === 'pages');
    await store.purgeLovedOnes(ws._id);
    expect(await timelineExists(lovedOne._id)).toBe(false);
    expect(await mine.collection(WORKSPACE_COLLECTIONS.careEvents).countDocuments({ workspaceId: ws._id })).toBe(0);
    expect((await store.listCareEvents(lovedOne._id, { limit: 10 })).events).toEqual([]);
  });

  it('when a cursor is not one a listing returned, then the store starts from the newest', async () => {
    const { db: mine, store } = shapes[shape];
    const me = who('cursor');
    const events = [0, 1, 2].map((i) => event(me, at('2026-10-05T00:00:00Z', i)));
    await appendCareEvents(mine, events);
    expect((await store.listCareEvents(me.lovedOneId, { limit: 1, cursor: '%%%' })).events.map((e) => e._id)).toEqual([events[2]!._id]);
  });
});

describe.each(['pages', 'query'] as const)('a month with more events than one chunk, read through %s', (shape) => {
  const who = (n: string) => ({ lovedOneId: `lo_${shape}_${n}`, workspaceId: `ws_${shape}_${n}` });
  const walk = async (store: WorkspaceStore, lovedOneId: string, limit: number, q: { until?: Date } = {}) => {
    const out: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await store.listCareEvents(lovedOneId, { limit, ...q, ...(cursor ? { cursor } : {}) });
      out.push(...page.events.map((e) => e._id));
      cursor = page.nextCursor;
    } while (cursor);
    return out;
  };

  it('when events arrive out of order from two connections, are redelivered and partly purged, then every listing keeps the newest-first order', async () => {
    const { db: mine, other, store } = shapes[shape];
    const me = who('chunks');
    const gone = `subj-chunk-gone-${shape}`;
    // 260 events in October, times scattered (37 is prime to 260), two at one instant.
    const events = Array.from({ length: 260 }, (_, i) => event(me, at('2026-10-01T00:00:00Z', ((i * 37) % 260) * 90 + (i === 9 ? 0 : 1)), i % 13 === 0 ? { subjectRef: gone } : {}));
    const sizes = [1, 7, 60, 3, 120, 40, 29];
    const batches: CareEventRecord[][] = [];
    for (let i = 0, n = 0; i < events.length; i += sizes[n++ % sizes.length]!) batches.push(events.slice(i, i + sizes[n % sizes.length]!));
    await Promise.all([mine, other].map(async (conn, k) => {
      for (const b of batches.filter((_, i) => i % 2 === k)) await appendCareEvents(conn, b);
    }));
    // A backfill older than all, one newer than all, and 40 redelivered (on sealed chunks by now).
    const oldest = event(me, '2026-10-01T00:00:00Z');
    const newest = event(me, '2026-10-31T23:00:00Z');
    const again = await appendCareEvents(mine, [oldest, ...events.slice(0, 40), newest]);
    expect(again.duplicates).toHaveLength(40);
    const all = [...events, oldest, newest];

    expect(await walk(store, me.lovedOneId, 50)).toEqual(newestFirst(all));
    const until = new Date(Date.parse('2026-10-10T00:00:00Z'));
    expect((await store.listCareEvents(me.lovedOneId, { limit: 20, until })).events.map((e) => e._id)).toEqual(newestFirst(all.filter((e) => e.occurredAt < until)).slice(0, 20));

    expect(await purgePartnerCareEvents(mine, 'inst_test', gone)).toBe(events.filter((e) => e.subjectRef === gone).length);
    const kept = all.filter((e) => e.subjectRef !== gone);
    expect(await walk(store, me.lovedOneId, 20)).toEqual(newestFirst(kept));

    if (shape === 'pages') {
      // No chunk past its bound (a write rewrites at most one chunk of 100 events), and the
      // sealed ones rest apart from the open one.
      const open = await mine.collection<{ _id: string; state?: { events?: string } }>(timelineCollection(me.lovedOneId)).find({ _id: { $regex: /^2026-10(\.\d+)?$/ } }).toArray();
      const sealed = await mine.collection<{ _id: string; events: string }>(settledCollection(me.lovedOneId)).find({}).toArray();
      expect(open).toHaveLength(1);
      expect(sealed.length).toBeGreaterThanOrEqual(2);
      for (const events of [...open.map((h) => h.state!.events!), ...sealed.map((d) => d.events)]) expect((JSON.parse(events) as unknown[]).length).toBeLessThanOrEqual(100);
    }
  });
});

describe('a month page written whole by an earlier version', () => {
  it('when it holds more than a chunk and events keep arriving, then it is listed as it is and closed for the newer ones', async () => {
    const { db: mine, store } = shapes.pages;
    const me = { lovedOneId: 'lo_pages_whole_month', workspaceId: 'ws_pages_whole_month' };
    const earlier = Array.from({ length: 150 }, (_, i) => event(me, at('2026-09-01T00:00:00Z', i * 60)));
    await mine.collection<CareEventRecord>(WORKSPACE_COLLECTIONS.careEvents).insertMany(earlier);
    // The shape an earlier version kept: one page per month under the month's own key.
    const tags = { lovedOneId: me.lovedOneId, workspaceId: me.workspaceId };
    const page = { events: JSON.stringify(newestFirst(earlier).map((id) => earlier.find((e) => e._id === id))) };
    await mine.collection(timelineCollection(me.lovedOneId)).insertMany([
      { _id: 'months#1', key: 'months', v: 1, state: { months: ['2026-09'] }, at: new Date(), ...tags },
      { _id: 'months', v: 1, state: { months: ['2026-09'] }, ...tags },
      { _id: '2026-09#1', key: '2026-09', v: 1, state: page, at: new Date(), ...tags },
      { _id: '2026-09', v: 1, state: page, ...tags },
    ] as never[]);
    expect((await store.listCareEvents(me.lovedOneId, { limit: 3 })).events.map((e) => e._id)).toEqual(newestFirst(earlier).slice(0, 3));

    const later = Array.from({ length: 30 }, (_, i) => event(me, at('2026-09-20T00:00:00Z', i * 7)));
    await appendCareEvents(mine, later.slice(0, 10));
    await appendCareEvents(mine, later.slice(10));
    const all = [...earlier, ...later];
    expect((await store.listCareEvents(me.lovedOneId, { limit: 200 })).events.map((e) => e._id)).toEqual(newestFirst(all));
    // The old page was sealed and moved to rest with the sealed chunks.
    expect(await mine.collection<{ _id: string }>(timelineCollection(me.lovedOneId)).findOne({ _id: '2026-09' })).toBeNull();
    expect((await mine.collection<{ _id: string; sealed?: unknown }>(settledCollection(me.lovedOneId)).findOne({ _id: '2026-09' }))?.sealed).toBeDefined();
  });
});

describe('chunks sealed by the first write and read back', () => {
  const stored = (events: CareEventRecord[]) => newestFirst(events);

  it('when the first append to a loved one with no pages yet holds more than a chunk, then each event is listed once', async () => {
    const { db: mine, store } = shapes.pages;
    const me = { lovedOneId: 'lo_pages_first_build', workspaceId: 'ws_pages_first_build' };
    const events = Array.from({ length: 250 }, (_, i) => event(me, at('2026-08-01T00:00:00Z', i * 60)));
    // No month list yet: the write builds the pages from the records, which hold these events already.
    await appendCareEvents(mine, events);
    expect((await store.listCareEvents(me.lovedOneId, { limit: 300 })).events.map((e) => e._id)).toEqual(stored(events));
  });

  it('when the working collection still holds an older state of a chunk the index lists as sealed, then listings and purges use the sealed chunk', async () => {
    const { db: mine, store } = shapes.pages;
    const me = { lovedOneId: 'lo_pages_stale_copy', workspaceId: 'ws_pages_stale_copy' };
    await startTimeline(mine, me.lovedOneId, me.workspaceId);
    const gone = 'subj-stale-gone';
    const events = Array.from({ length: 250 }, (_, i) => event(me, at('2026-08-01T00:00:00Z', i * 60), i % 10 === 0 ? { subjectRef: gone } : {}));
    await appendCareEvents(mine, events);
    // Chunks 0 and 1 (the 200 oldest) were sealed and moved; an older state of chunk 1 with 9
    // events fewer comes back under its key, as a writer's late head could once make it.
    const sealedChunk = await mine.collection<{ _id: string; events: string }>(settledCollection(me.lovedOneId)).findOne({ _id: '2026-08.1' });
    const stale = { events: JSON.stringify((JSON.parse(sealedChunk!.events) as unknown[]).slice(0, 91)) };
    await mine.collection(timelineCollection(me.lovedOneId)).insertOne({ _id: '2026-08.1', v: 1, state: stale, lovedOneId: me.lovedOneId, workspaceId: me.workspaceId } as never);
    expect((await store.listCareEvents(me.lovedOneId, { limit: 300 })).events.map((e) => e._id)).toEqual(stored(events));

    expect(await purgePartnerCareEvents(mine, 'inst_test', gone)).toBe(25);
    expect((await store.listCareEvents(me.lovedOneId, { limit: 300 })).events.map((e) => e._id)).toEqual(stored(events.filter((e) => e.subjectRef !== gone)));
  });
});
