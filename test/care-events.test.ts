// list_care_events' time, type and cursor arguments over MCP, and the care-event functions on
// both timeline shapes: purges, removals and a cursor of another query refused. The timeline's
// own behaviour, concurrency included, is test/timeline.contract.test.ts.
import { passThroughCredentials } from '../src/auth/credentials.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RPC } from '../src/rpc/codes.js';
import {
  appendCareEvents,
  careEventStored,
  countLovedOneCareEvents,
  deleteLovedOneCareEvents,
  purgePartnerCareEvents,
  WorkspaceStore,
  WORKSPACE_COLLECTIONS,
  type CareEventRecord,
} from '../src/family/records.js';
import { CursorRefused } from '../src/store/timeline/port.js';
import { caregiverWithKey } from './harness/identity.js';
import { postJson, rpc, startTestService, type TestService } from './harness/service.js';
import { SHAPES, useBothShapes } from './harness/shapes.js';
import { shardName } from '../src/store/timeline/embedded.js';

let svc: TestService;
let mcp: string;
const shapes = useBothShapes();

beforeAll(async () => {
  svc = await startTestService();
  mcp = `${svc.urls.app}/api/mcp`;
});
afterAll(async () => {
  await svc?.stop();
});

const callTool = (key: string, args: Record<string, unknown> = {}) =>
  postJson(mcp, rpc('tools/call', { name: 'list_care_events', arguments: args }), { authorization: `Bearer ${key}` });
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
const newestFirst = (events: CareEventRecord[]) =>
  [...events].sort((a, b) => b.occurredAt.getTime() - a.occurredAt.getTime() || (a._id < b._id ? 1 : -1)).map((e) => e._id);

describe('list_care_events arguments', () => {
  it('when since and until are given, then only events at or after since and before until', async () => {
    const me = await caregiverWithKey(svc, 'window@example.com');
    const events = ['2026-09-30T23:59:59Z', '2026-10-01T00:00:00Z', '2026-10-15T12:00:00Z', '2026-10-31T23:59:59Z', '2026-11-01T00:00:00Z'].map((t) =>
      event(me, t),
    );
    await appendCareEvents(svc.timelines, events);
    expect(ids(await callTool(me.apiKey, { lovedOneId: me.lovedOneId, since: '2026-10-01T00:00:00Z', until: '2026-11-01T00:00:00Z' }))).toEqual([
      events[3]!._id,
      events[2]!._id,
      events[1]!._id,
    ]);
    expect(ids(await callTool(me.apiKey, { lovedOneId: me.lovedOneId, since: '2026-10-16T02:00:00+02:00' }))).toEqual([events[4]!._id, events[3]!._id]);
    expect(ids(await callTool(me.apiKey, { lovedOneId: me.lovedOneId, until: '2026-10-01T00:00:00Z' }))).toEqual([events[0]!._id]);
  });

  it('when types are given, then only those types, unknown types included', async () => {
    const me = await caregiverWithKey(svc, 'types@example.com');
    const vital = event(me, '2026-10-02T08:00:00Z');
    const med = event(me, '2026-10-02T09:00:00Z', { eventType: 'medication_given' });
    const novel = event(me, '2026-10-02T10:00:00Z', { eventType: 'hydration_logged_v2' });
    await appendCareEvents(svc.timelines, [vital, med, novel]);
    expect(ids(await callTool(me.apiKey, { lovedOneId: me.lovedOneId, types: ['medication_given', 'hydration_logged_v2'] }))).toEqual([novel._id, med._id]);
    expect(ids(await callTool(me.apiKey, { lovedOneId: me.lovedOneId, types: ['not_sent_yet'] }))).toEqual([]);
  });

  it('when paging with cursor while events arrive, then no event twice, none skipped, newer arrivals not mixed in', async () => {
    const me = await caregiverWithKey(svc, 'pages@example.com');
    // 25 events over three months, two of them at the same instant (ties go by id).
    const events = Array.from({ length: 25 }, (_, i) => event(me, at('2026-08-20T00:00:00Z', i === 13 ? 12 * 3 * 24 * 60 : i * 3 * 24 * 60)));
    await appendCareEvents(svc.timelines, events);
    const expected = newestFirst(events);

    const first = toolJson(await callTool(me.apiKey, { lovedOneId: me.lovedOneId, limit: 10 }));
    expect(first.events.map((e: any) => e.id)).toEqual(expected.slice(0, 10));
    expect(first.nextCursor).toEqual(expect.any(String));
    // Between pages: one newer than everything, one older than the cursor, one redelivered.
    const newer = event(me, '2026-12-01T00:00:00Z');
    const older = event(me, '2026-08-01T00:00:00Z');
    await appendCareEvents(svc.timelines, [newer]);
    await appendCareEvents(svc.timelines, [older, events[3]!]);

    const second = toolJson(await callTool(me.apiKey, { lovedOneId: me.lovedOneId, limit: 10, cursor: first.nextCursor }));
    const third = toolJson(await callTool(me.apiKey, { lovedOneId: me.lovedOneId, limit: 10, cursor: second.nextCursor }));
    expect([...second.events, ...third.events].map((e: any) => e.id)).toEqual([...expected.slice(10), older._id]);
    expect(third.nextCursor).toBeUndefined();
    expect(third.count).toBe(6);
  });

  it('when the workspace is listed without lovedOneId, then each loved one carries its own nextCursor', async () => {
    const me = await caregiverWithKey(svc, 'aggregate@example.com');
    await appendCareEvents(
      svc.timelines,
      [0, 1, 2].map((i) => event(me, at('2026-10-05T00:00:00Z', i))),
    );
    const all = toolJson(await callTool(me.apiKey, { limit: 2, types: ['vital_recorded'] }));
    expect(all.byLovedOne).toHaveLength(1);
    expect(all.byLovedOne[0].events).toHaveLength(2);
    // The same query, for that loved one: its cursor is bound to the filters that made it.
    const rest = toolJson(await callTool(me.apiKey, { lovedOneId: me.lovedOneId, limit: 2, types: ['vital_recorded'], cursor: all.byLovedOne[0].nextCursor }));
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

  it('when a cursor comes with another loved one or other filters, then -32602 naming cursor', async () => {
    const me = await caregiverWithKey(svc, 'cursor-bound@example.com');
    const second = await new WorkspaceStore(svc.store.db, svc.credentials, svc.config.inboxDomain, svc.timelines).addLovedOne(
      me.workspaceId,
      { firstName: 'Second', lastName: 'Person' },
      false,
    );
    await appendCareEvents(
      svc.timelines,
      [0, 1, 2].map((i) => event(me, at('2026-10-05T00:00:00Z', i))),
    );
    await appendCareEvents(
      svc.timelines,
      [0, 1, 2].map((i) => event({ lovedOneId: second._id, workspaceId: me.workspaceId }, at('2026-10-05T00:00:00Z', i))),
    );
    const cursor = toolJson(await callTool(me.apiKey, { lovedOneId: me.lovedOneId, limit: 1 })).nextCursor;
    expect(toolJson(await callTool(me.apiKey, { lovedOneId: me.lovedOneId, limit: 1, cursor })).count).toBe(1);
    for (const args of [
      { lovedOneId: second._id },
      { lovedOneId: me.lovedOneId, types: ['vital_recorded'] },
      { lovedOneId: me.lovedOneId, since: '2026-01-01T00:00:00Z' },
    ]) {
      const res = await callTool(me.apiKey, { ...args, limit: 1, cursor });
      expect(res.json.error?.code, JSON.stringify(args)).toBe(RPC.INVALID_PARAMS);
      expect(res.json.error.message).toMatch(/cursor/);
    }
  });

  it("when a cursor comes with another family's lovedOneId, then -32003 as without one", async () => {
    const me = await caregiverWithKey(svc, 'cursor-me@example.com');
    const other = await caregiverWithKey(svc, 'cursor-other@example.com');
    await appendCareEvents(
      svc.timelines,
      [0, 1, 2].map((i) => event(other, at('2026-10-05T00:00:00Z', i))),
    );
    const theirs = toolJson(await callTool(other.apiKey, { lovedOneId: other.lovedOneId, limit: 1 })).nextCursor;
    expect(theirs).toEqual(expect.any(String));
    const withCursor = await callTool(me.apiKey, { lovedOneId: other.lovedOneId, cursor: theirs });
    const without = await callTool(me.apiKey, { lovedOneId: other.lovedOneId });
    expect(withCursor.json.error.code).toBe(RPC.NOT_AUTHORIZED);
    expect(withCursor.json.error).toEqual(without.json.error);
  });
});

/** Whether the loved one's collections exist: in the database beside the store's own that holds them. */
const timelineExists = async (shape: (typeof SHAPES)[number], lovedOneId: string) => {
  const { db } = shapes[shape];
  const shard = db.client.db(shardName(db.databaseName, lovedOneId));
  return (await shard.listCollections({ name: { $regex: `^tlm?_care_(\\d{6}_)?${lovedOneId}$` } }, { nameOnly: true }).toArray()).length > 0;
};

describe.each(SHAPES)('care event storage (%s)', (shape) => {
  const who = (n: string) => ({ lovedOneId: `lo_${shape}_${n}`, workspaceId: `ws_${shape}_${n}` });
  const storeOf = () => new WorkspaceStore(shapes[shape].db, passThroughCredentials(shapes[shape].db), 'inbox.test', shapes[shape].timelines);

  it('when a partner purges a subject, a loved one is removed or a workspace is purged, then nothing of theirs is listed or kept', async () => {
    const { db, timelines } = shapes[shape];
    const store = storeOf();
    const me = who('purges');
    const kept = event(me, '2026-10-03T00:00:00Z', { subjectRef: 'subj-keep' });
    const purged = [
      event(me, '2026-09-03T00:00:00Z', { subjectRef: `subj-gone-${shape}` }),
      event(me, '2026-10-04T00:00:00Z', { subjectRef: `subj-gone-${shape}` }),
    ];
    await appendCareEvents(timelines, [kept, ...purged]);
    expect(await careEventStored(db, purged[0]!._id)).toBe(true);
    expect(await purgePartnerCareEvents(timelines, 'inst_test', `subj-gone-${shape}`)).toBe(2);
    expect(await careEventStored(db, purged[0]!._id)).toBe(false);
    expect((await store.listCareEvents(me.lovedOneId, { limit: 10 })).events.map((e) => e._id)).toEqual([kept._id]);
    expect(await countLovedOneCareEvents(timelines, me.lovedOneId)).toBe(1);

    expect(await deleteLovedOneCareEvents(timelines, me.lovedOneId)).toBe(1);
    expect(await timelineExists(shape, me.lovedOneId)).toBe(false);
    expect((await store.listCareEvents(me.lovedOneId, { limit: 10 })).events).toEqual([]);

    const ws = await store.createWorkspace({ name: 'Purged family', owner: { uid: `uid_${shape}`, email: `${shape}@example.com` }, sandbox: false });
    const lovedOne = await store.addLovedOne(ws._id, { firstName: 'Ida', lastName: 'Gone' }, false);
    const theirs = { lovedOneId: lovedOne._id, workspaceId: ws._id };
    await appendCareEvents(timelines, [event(theirs, '2026-10-03T00:00:00Z'), event(theirs, '2026-11-03T00:00:00Z')]);
    expect(await timelineExists(shape, lovedOne._id)).toBe(shape === 'embedded');
    await store.purgeLovedOnes(ws._id);
    expect(await timelineExists(shape, lovedOne._id)).toBe(false);
    expect(await db.collection(WORKSPACE_COLLECTIONS.careEvents).countDocuments({ workspaceId: ws._id })).toBe(0);
    expect((await store.listCareEvents(lovedOne._id, { limit: 10 })).events).toEqual([]);
  });

  it('when a cursor is not one this query returned, then the store refuses it', async () => {
    const { timelines } = shapes[shape];
    const me = who('cursor');
    await appendCareEvents(
      timelines,
      [0, 1, 2].map((i) => event(me, at('2026-10-05T00:00:00Z', i))),
    );
    const { nextCursor } = await storeOf().listCareEvents(me.lovedOneId, { limit: 1 });
    await expect(storeOf().listCareEvents(me.lovedOneId, { limit: 1, cursor: '%%%' })).rejects.toBeInstanceOf(CursorRefused);
    await expect(storeOf().listCareEvents(me.lovedOneId, { limit: 1, types: ['vital_recorded'], cursor: nextCursor! })).rejects.toBeInstanceOf(CursorRefused);
  });
});
