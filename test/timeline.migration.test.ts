// A store written by the earlier version (care events, inbox and activity as month pages and
// lists in collections of each loved one and uid, beside the records) taken into the timelines on
// the first start: nothing a family stored lost, the old collections gone, a second start a no-op,
// progress logged, and a run stopped half-way run again without doubling anything.
import { Writable } from 'node:stream';
import { MongoClient, type Db } from 'mongodb';
import { pino } from 'pino';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { CARE_EVENT_STREAM, listCareEvents, type CareEventRecord } from '../src/family/careEvents.js';
import { INBOX_ITEMS, INBOX_STREAM, recentInboxItems, type InboxItem } from '../src/inbox/records.js';
import { databaseName } from '../src/store/mongo.js';
import { migrateTimelines, MIGRATIONS } from '../src/store/timeline/migrate.js';
import type { Timelines } from '../src/store/timeline/port.js';
import { timelinesOf } from '../src/store/timeline/timelines.js';
import { ACTIVITY_STREAM, recentActivity } from '../src/workspace/activity.js';
import { MCP_AUDIT_LOG, type AuditRow } from '../src/workspace/auditRow.js';
import { freshDatabaseUrl } from './harness/servers.js';
import { startTestService, type TestService } from './harness/service.js';

const STREAMS = [CARE_EVENT_STREAM, INBOX_STREAM, ACTIVITY_STREAM];
const clients: MongoClient[] = [];
let svc: TestService | undefined;
afterAll(async () => {
  await svc?.stop();
  for (const c of clients) await c.close();
});

const LOVED_ONES = ['lo_m1', 'lo_m2', 'lo_m3', 'lo_m4', 'lo_m5'];
const UIDS = ['uid_m1', 'uid_m2'];

/** The earlier version's documents: records, and each key's version row and head. */
async function writeEarlierStore(db: Db): Promise<{ events: CareEventRecord[]; mail: InboxItem[]; rows: AuditRow[] }> {
  const events: CareEventRecord[] = LOVED_ONES.flatMap((lovedOneId, k) =>
    Array.from({ length: 40 + 70 * k }, (_, i) => ({
      _id: `evt_m_${lovedOneId}_${i}`,
      lovedOneId,
      workspaceId: `ws_${lovedOneId}`,
      source: 'partner' as const,
      institutionId: 'inst_m',
      subjectRef: 'subj-1',
      eventType: i % 3 ? 'vital_recorded' : 'med_administered',
      // Over four months, ties included.
      occurredAt: new Date(Date.UTC(2026, 6, 1) + Math.floor((i * 97) % (120 * 24)) * 3_600_000),
      receivedAt: new Date(Date.UTC(2026, 10, 1)),
      payload: { n: i, note: 'taken with water' },
    })),
  );
  const mail: InboxItem[] = LOVED_ONES.flatMap((lovedOneId) =>
    Array.from({ length: 3 }, (_, i) => ({
      _id: `mail_m_${lovedOneId}_${i}`,
      lovedOneId,
      workspaceId: `ws_${lovedOneId}`,
      from: 'clinic@example.com',
      subject: `Summary ${i}`,
      receivedAt: new Date(Date.UTC(2026, 9, 1 + i)),
      excerpt: 'Stable.',
      attachmentNames: [],
    })),
  );
  const rows: AuditRow[] = UIDS.flatMap((uid) =>
    Array.from({ length: 7 }, (_, i) => ({
      _id: `aud_m_${uid}_${i}`,
      uid,
      tenant: 'family',
      method: 'tools/call',
      tool: 'list_care_events',
      success: true,
      durationMs: 3,
      authMethod: 'api-key' as const,
      at: new Date(Date.UTC(2026, 9, 1, 8, i)),
    })),
  );
  await db.collection<CareEventRecord>(CARE_EVENT_STREAM.records).insertMany(events);
  await db.collection<InboxItem>(INBOX_ITEMS).insertMany(mail);
  await db.collection<AuditRow>(MCP_AUDIT_LOG).insertMany(rows);
  const at = new Date();
  const keyed = (key: string, state: object, tags: object) => [
    { _id: `${key}#1`, key, v: 1, state, at, ...tags },
    { _id: key, v: 1, state, ...tags },
  ];
  for (const lovedOneId of LOVED_ONES) {
    const tags = { lovedOneId, workspaceId: `ws_${lovedOneId}` };
    const mine = events.filter((e) => e.lovedOneId === lovedOneId);
    const months = [...new Set(mine.map((e) => e.occurredAt.toISOString().slice(0, 7)))].sort().reverse();
    const docs = [
      ...keyed('months', { months }, tags),
      ...months.flatMap((m) => keyed(m, { events: JSON.stringify(mine.filter((e) => e.occurredAt.toISOString().startsWith(m))) }, tags)),
      ...keyed('inbox', { items: JSON.stringify(mail.filter((x) => x.lovedOneId === lovedOneId)) }, tags),
    ];
    await db.collection(`care_timeline_${lovedOneId}`).insertMany(docs as never[]);
    await db.collection(`care_settled_${lovedOneId}`).insertOne({ _id: `${months[0]}.1`, events: '[]', sealed: { oldest: at, newest: at }, ...tags } as never);
  }
  for (const uid of UIDS)
    await db.collection(`mcp_activity_${uid}`).insertMany(keyed('recent', { items: JSON.stringify(rows.filter((r) => r.uid === uid)) }, { uid }) as never[]);
  return { events, mail, rows };
}

async function connect(url: string): Promise<Db> {
  const client = await new MongoClient(url).connect();
  clients.push(client);
  return client.db(databaseName(url));
}

const newestFirst = <T extends { _id: string }>(list: T[], at: (x: T) => Date) =>
  [...list].sort((a, b) => at(b).getTime() - at(a).getTime() || (a._id < b._id ? 1 : -1)).map((x) => x._id);

/** Everything a family stored, read back through the timelines. */
async function expectAllListed(timelines: Timelines, stored: Awaited<ReturnType<typeof writeEarlierStore>>): Promise<void> {
  for (const lovedOneId of LOVED_ONES) {
    const listed: string[] = [];
    for (let cursor: string | undefined, first = true; first || cursor; first = false) {
      const page = await listCareEvents(timelines, lovedOneId, { limit: 25, ...(cursor ? { cursor } : {}) });
      listed.push(...page.events.map((e) => e._id));
      cursor = page.nextCursor;
    }
    expect(listed).toEqual(
      newestFirst(
        stored.events.filter((e) => e.lovedOneId === lovedOneId),
        (e) => e.occurredAt,
      ),
    );
    const mail = await recentInboxItems(timelines, lovedOneId, 50);
    expect(mail).toEqual(
      newestFirst(
        stored.mail.filter((m) => m.lovedOneId === lovedOneId),
        (m) => m.receivedAt,
      ).map((id) => stored.mail.find((m) => m._id === id)),
    );
  }
  for (const uid of UIDS)
    expect((await recentActivity(timelines, uid, 50)).map((r) => r._id)).toEqual(
      newestFirst(
        stored.rows.filter((r) => r.uid === uid),
        (r) => r.at,
      ),
    );
}

const legacyLeft = async (db: Db) =>
  (await db.listCollections({ name: { $regex: '^(care_timeline_|care_settled_|mcp_activity_)' } }, { nameOnly: true }).toArray()).length;

function capturingLog() {
  const lines: Record<string, unknown>[] = [];
  const log = pino(
    { level: 'info' },
    new Writable({
      write(chunk: Buffer, _enc, done) {
        lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
        done();
      },
    }),
  );
  return { log, lines };
}

/** The first timeline shape: each owner's month copies and month list in the store's own database. */
async function writeFirstTimelineShape(db: Db, stored: Awaited<ReturnType<typeof writeEarlierStore>>): Promise<void> {
  for (const lovedOneId of LOVED_ONES) {
    const mine = stored.events.filter((e) => e.lovedOneId === lovedOneId);
    const months = [...new Set(mine.map((e) => e.occurredAt.toISOString().slice(0, 7)))];
    await db.collection(`tlm_care_${lovedOneId}`).insertMany(months.map((m) => ({ _id: m })) as never[]);
    for (const m of months)
      await db
        .collection(`tl_care_${m.replace('-', '')}_${lovedOneId}`)
        .insertMany(
          mine
            .filter((e) => e.occurredAt.toISOString().startsWith(m))
            .map((e) => ({ _id: e._id, t: e.occurredAt, k: e.eventType, j: JSON.stringify(e) })) as never[],
        );
  }
  await db.collection(MIGRATIONS).insertOne({ _id: 'timelines-1', at: new Date() } as never);
}

const firstShapeLeft = async (db: Db) => (await db.listCollections({ name: { $regex: '^(tl_|tlm_)' } }, { nameOnly: true }).toArray()).length;

describe('a store written by the earlier version', () => {
  it('when the service first starts on it, then every care event, inbox item and activity row is listed, and the old collections are gone', async () => {
    const url = freshDatabaseUrl(inject('mongoUrl'));
    const db = await connect(url);
    const stored = await writeEarlierStore(db);
    expect(await legacyLeft(db)).toBe(LOVED_ONES.length * 2 + UIDS.length);
    svc = await startTestService({ mongoUrl: url });
    await expectAllListed(svc.timelines, stored);
    expect(await legacyLeft(db)).toBe(0);
    expect(await db.collection(MIGRATIONS).countDocuments()).toBe(1);
    // A second start finds it done.
    expect(await migrateTimelines(db, svc.timelines, STREAMS, capturingLog().log)).toBe('done already');
  });

  it('when a run is logged and stopped half-way, then the next run completes it without doubling anything', async () => {
    const db = await connect(freshDatabaseUrl(inject('mongoUrl')));
    const stored = await writeEarlierStore(db);
    const timelines = timelinesOf(db, 'embedded');
    const { log, lines } = capturingLog();
    expect(await migrateTimelines(db, timelines, STREAMS, log, 2)).toBe('migrated');
    const progress = lines.filter((l) => l.msg === 'timelines: migrating' && l.stream === 'care').map((l) => l.owners);
    expect(progress).toEqual([2, 4]);
    expect(lines.find((l) => l.msg === 'timelines: migrated' && l.stream === 'care')).toMatchObject({
      owners: LOVED_ONES.length,
      records: stored.events.length,
    });
    // As if it had stopped before marking itself done: run again over what is there.
    await db.collection(MIGRATIONS).deleteMany({});
    expect(await migrateTimelines(db, timelines, STREAMS, log)).toBe('migrated');
    await expectAllListed(timelines, stored);
    for (const lovedOneId of LOVED_ONES)
      expect(await timelines.of(CARE_EVENT_STREAM).count(lovedOneId)).toBe(stored.events.filter((e) => e.lovedOneId === lovedOneId).length);
  });
  it('when the store holds the first timeline shape (month collections in its own database), then they move beside it and nothing is lost', async () => {
    const url = freshDatabaseUrl(inject('mongoUrl'));
    const db = await connect(url);
    const stored = await writeEarlierStore(db);
    for (const name of (await db.listCollections({}, { nameOnly: true }).toArray()).map((c) => c.name))
      if (/^(care_timeline_|care_settled_|mcp_activity_)/.test(name)) await db.collection(name).drop();
    await writeFirstTimelineShape(db, stored);
    expect(await firstShapeLeft(db)).toBeGreaterThan(LOVED_ONES.length);
    const timelines = timelinesOf(db, 'embedded');
    expect(await migrateTimelines(db, timelines, STREAMS, capturingLog().log)).toBe('migrated');
    await expectAllListed(timelines, stored);
    // The store's own database keeps the records only; the copies are in the databases beside it.
    expect(await firstShapeLeft(db)).toBe(0);
    const beside = (await db.admin().listDatabases({ nameOnly: true })).databases.map((d) => d.name).filter((n) => n.startsWith(`${db.databaseName}_tl`));
    expect(beside.length).toBeGreaterThan(0);
    expect(await migrateTimelines(db, timelines, STREAMS, capturingLog().log)).toBe('done already');
  });

  it('when several processes start at once on a fresh store, then each finds the timelines ready and none fails', async () => {
    // Separate clients, as separate processes have: each marks the store migrated at the same moment.
    // A few fresh stores, since the race is a matter of the same few milliseconds.
    for (let round = 0; round < 4; round++) {
      const url = freshDatabaseUrl(inject('mongoUrl'));
      const dbs = await Promise.all(Array.from({ length: 12 }, () => connect(url)));
      const outcomes = await Promise.all(dbs.map((db) => migrateTimelines(db, timelinesOf(db, 'embedded'), STREAMS, capturingLog().log)));
      expect(outcomes.every((o) => o === 'migrated' || o === 'done already')).toBe(true);
      expect(await dbs[0]!.collection(MIGRATIONS).countDocuments()).toBe(1);
    }
  });
});
