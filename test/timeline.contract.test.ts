// One behaviour suite for the timeline port, run against both adapters on the test store (the
// indexed one runs on FerretDB too, as production's shape): append, list, cursors, get,
// supersede, purge, remove, count, and the concurrency that lost or doubled records before,
// round after round with the CPU kept busy. TIMELINE_ROUNDS raises the rounds for a long run.
import { Worker } from 'node:worker_threads';
import { MongoClient, type Db } from 'mongodb';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { databaseName } from '../src/store/mongo.js';
import { EmbeddedTimeline } from '../src/store/timeline/embedded.js';
import {
  AlreadySuperseded,
  CursorRefused,
  RecordNotFound,
  type Stream,
  type Timeline,
  type TimelineQuery,
  type TimelineRecord,
} from '../src/store/timeline/port.js';
import { timelinesOf, type TimelineShape } from '../src/store/timeline/timelines.js';
import { freshDatabaseUrl } from './harness/servers.js';

interface Rec extends TimelineRecord {
  owner: string;
  workspaceId: string;
  kind: string;
  at: Date;
  institutionId: string;
  subjectRef: string;
  payload: { n: number; note?: string };
}
const STREAM: Stream<Rec> = { name: 'probe', records: 'probe_records', owner: 'owner', time: 'at', type: 'kind' };
/** The same kind partitioned by day on the embedded store (as MCP activity is). */
const DAILY: Stream<Rec> = { ...STREAM, name: 'daily', records: 'daily_records', period: 'day' };
const DAYS: Stream<Rec> = { ...STREAM, name: 'days', records: 'days_records', period: 'day' };
const ROUNDS = Number(process.env.TIMELINE_ROUNDS ?? 3);
/** Each round takes well under a second on a quiet machine; a busy one gets room. */
const STRESS_MS = 30_000 + ROUNDS * 8_000;

let seq = 0;
const rec = (owner: string, at: string | number, extra: Partial<Rec> = {}): Rec => ({
  _id: `r${String(seq++).padStart(6, '0')}`,
  owner,
  workspaceId: `ws_${owner}`,
  kind: 'vital',
  at: typeof at === 'number' ? new Date(Date.UTC(2026, 0, 1) + at * 3_600_000) : new Date(at),
  institutionId: 'inst_a',
  subjectRef: 'subj-1',
  payload: { n: seq },
  ...extra,
});
const newestFirst = (rs: readonly Rec[]) => [...rs].sort((a, b) => b.at.getTime() - a.at.getTime() || (a._id < b._id ? 1 : -1)).map((r) => r._id);

/** Every record listed for `owner`, page after page (so cursors are exercised too). */
async function listAll(t: Timeline<Rec>, owner: string, q: Omit<TimelineQuery, 'limit' | 'cursor'> = {}, limit = 37): Promise<string[]> {
  const out: string[] = [];
  for (let cursor: string | undefined, pages = 0; pages < 1000; pages++) {
    const page = await t.list(owner, { ...q, limit, ...(cursor ? { cursor } : {}) });
    out.push(...page.records.map((r) => r._id));
    if (!page.nextCursor) return out;
    cursor = page.nextCursor;
  }
  throw new Error('listing did not end');
}
const doubled = (ids: readonly string[]) => ids.length - new Set(ids).size;

const shapes: TimelineShape[] = ['indexed', 'embedded'];

describe.each(shapes)('timeline (%s)', (shape) => {
  const clients: MongoClient[] = [];
  let url: string;
  let db: Db;
  let t: Timeline<Rec>;
  /** The same store through another connection, as a second process has it. */
  let t2: Timeline<Rec>;
  beforeAll(async () => {
    url = freshDatabaseUrl(inject('mongoUrl'));
    const connect = async () => {
      const c = await new MongoClient(url).connect();
      clients.push(c);
      return c.db(databaseName(url));
    };
    db = await connect();
    t = timelinesOf(db, shape).of(STREAM);
    t2 = timelinesOf(await connect(), shape).of(STREAM);
  });
  afterAll(async () => {
    await db?.dropDatabase();
    for (const c of clients) await c.close();
  });

  it('appends idempotently by id, reporting what was stored and what was there already', async () => {
    const [a, b, c] = [rec('o_app', 1), rec('o_app', 2), rec('o_app', 3)];
    expect(await t.append([])).toEqual({ stored: [], duplicates: [] });
    expect(await t.append([a, b])).toEqual({ stored: [a._id, b._id], duplicates: [] });
    const again = await t.append([b, c, a, c]);
    expect(again.stored).toEqual([c._id]);
    expect(again.duplicates.sort()).toEqual([a._id, b._id, c._id].sort());
    expect(await listAll(t, 'o_app')).toEqual([c._id, b._id, a._id]);
    expect(await t.count('o_app')).toBe(3);
    expect(await t.get('o_app', b._id)).toMatchObject({ _id: b._id, at: b.at, payload: b.payload });
    expect(await t.get('o_other', b._id)).toBeNull();
  });

  it('gives records back with the values they were stored with, dates anywhere in them', async () => {
    const when = new Date('2026-01-02T03:04:05.678Z');
    const odd = {
      // Extended JSON writes these in its long forms.
      before1970: new Date('1969-07-20T20:17:40Z'),
      big: 2 ** 40,
      fraction: 61.5,
    };
    const plain = rec('o_values', 5, { payload: { n: 1, note: 'a "quoted" note, with $ and \\ in it', at: [when, { when }] } as never });
    const other = rec('o_values', 6, { payload: { n: 2, ...odd } as never });
    await t.append([plain, other]);
    for (const r of [plain, other]) expect(await t.get('o_values', r._id)).toEqual(r);
    expect((await t.list('o_values', { limit: 5 })).records).toEqual([other, plain]);
  });

  it('a stream partitioned by day lists, filters and removes like any other', async () => {
    const daily = timelinesOf(db, shape).of(DAILY);
    const owner = 'o_day';
    const all = Array.from({ length: 30 }, (_, i) => rec(owner, i * 8, { kind: i % 2 ? 'vital' : 'med' }));
    await daily.append([...all].reverse());
    expect(await listAll(daily, owner, {}, 4)).toEqual(newestFirst(all));
    const since = new Date('2026-01-03T12:00:00Z');
    const until = new Date('2026-01-07T00:00:00Z');
    expect(await listAll(daily, owner, { since, until, types: ['med'] }, 3)).toEqual(
      newestFirst(all.filter((r) => r.at >= since && r.at < until && r.kind === 'med')),
    );
    // Three days, the last before any record: read by name on the embedded store.
    const fewDays = { since: new Date('2025-12-30T00:00:00Z'), until: new Date('2026-01-01T12:00:00Z') };
    expect(await listAll(daily, owner, fewDays, 2)).toEqual(newestFirst(all.filter((r) => r.at < fewDays.until)));
    expect(await daily.count(owner)).toBe(30);
    expect(await daily.remove(owner)).toBe(30);
    expect(await listAll(daily, owner)).toEqual([]);
    expect(await daily.count(owner)).toBe(0);
  });

  it('lists newest first across months, filtered by time and type, a page at a time', async () => {
    const owner = 'o_list';
    const all = [
      ...Array.from({ length: 30 }, (_, i) => rec(owner, i * 20, { kind: i % 3 ? 'vital' : 'med' })),
      // Ties on the instant are ordered by id.
      rec(owner, '2026-02-10T00:00:00Z'),
      rec(owner, '2026-02-10T00:00:00Z'),
      rec(owner, '2025-11-30T23:59:59.999Z'),
    ];
    await t.append([...all].reverse());
    expect(await listAll(t, owner, {}, 4)).toEqual(newestFirst(all));
    const since = new Date('2026-01-05T00:00:00Z');
    const until = new Date('2026-01-20T00:00:00Z');
    const window = all.filter((r) => r.at >= since && r.at < until);
    expect(await listAll(t, owner, { since, until }, 3)).toEqual(newestFirst(window));
    expect(await listAll(t, owner, { types: ['med'] }, 2)).toEqual(newestFirst(all.filter((r) => r.kind === 'med')));
    expect(await listAll(t, owner, { types: ['none'] })).toEqual([]);
    expect((await t.list(owner, { limit: 5 })).records.map((r) => r._id)).toEqual(newestFirst(all).slice(0, 5));
    expect((await t.list('o_nobody', { limit: 5 })).records).toEqual([]);
  });

  it('a range bounded on both sides lists what it holds, across months with and without records', async () => {
    const owner = 'o_range';
    // January and March have records; February and the months after none.
    const all = [
      rec(owner, '2026-01-30T10:00:00Z'),
      rec(owner, '2026-01-31T23:59:59.999Z'),
      rec(owner, '2026-03-01T00:00:00Z'),
      rec(owner, '2026-03-02T08:00:00Z'),
    ];
    await t.append(all);
    const between = (since: string, until: string) => all.filter((r) => r.at >= new Date(since) && r.at < new Date(until));
    for (const [since, until] of [
      ['2026-01-31T00:00:00Z', '2026-03-02T00:00:00Z'],
      ['2026-01-01T00:00:00Z', '2026-03-31T00:00:00Z'],
      ['2025-12-01T00:00:00Z', '2026-03-02T08:00:00.001Z'],
      ['2026-02-01T00:00:00Z', '2026-03-01T00:00:00Z'],
      ['2026-04-01T00:00:00Z', '2026-06-01T00:00:00Z'],
      ['2025-01-01T00:00:00Z', '2027-01-01T00:00:00Z'],
    ] as const)
      expect(await listAll(t, owner, { since: new Date(since), until: new Date(until) }, 1), `${since} to ${until}`).toEqual(
        newestFirst(between(since, until)),
      );
    expect((await t.list('o_range_nobody', { since: new Date('2026-01-01T00:00:00Z'), until: new Date('2026-02-01T00:00:00Z'), limit: 5 })).records).toEqual(
      [],
    );
  });

  it('keeps a page where it was while newer records arrive', async () => {
    const owner = 'o_stable';
    const first = Array.from({ length: 10 }, (_, i) => rec(owner, i));
    await t.append(first);
    const p1 = await t.list(owner, { limit: 4 });
    await t.append([rec(owner, 100), rec(owner, 101)]);
    const p2 = await t.list(owner, { limit: 4, cursor: p1.nextCursor! });
    expect([...p1.records, ...p2.records].map((r) => r._id)).toEqual(newestFirst(first).slice(0, 8));
  });

  it('refuses a cursor made by another query, naming the cursor', async () => {
    const owner = 'o_cursor';
    await t.append(Array.from({ length: 6 }, (_, i) => rec(owner, i, { kind: i % 2 ? 'vital' : 'med' })));
    await t.append([rec('o_cursor2', 1), rec('o_cursor2', 2)]);
    const { nextCursor } = await t.list(owner, { limit: 2 });
    expect(nextCursor).toBeDefined();
    for (const [who, q] of [
      ['o_cursor2', {}],
      [owner, { types: ['med'] }],
      [owner, { since: new Date('2025-01-01T00:00:00Z') }],
      [owner, { until: new Date('2027-01-01T00:00:00Z') }],
    ] as const) {
      const refused = await t.list(who, { ...q, limit: 2, cursor: nextCursor! }).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(CursorRefused);
      expect((refused as CursorRefused).field).toBe('cursor');
    }
    for (const bad of ['%%%', '', Buffer.from('["2026-01-01T00:00:00.000Z","r1"]').toString('base64url')])
      await expect(t.list(owner, { limit: 2, cursor: bad })).rejects.toBeInstanceOf(CursorRefused);
    // The same query with the types in another order is the same query.
    const typed = await t.list(owner, { limit: 1, types: ['med', 'vital'] });
    expect((await t.list(owner, { limit: 1, types: ['vital', 'med'], cursor: typed.nextCursor! })).records).toHaveLength(1);
  });

  it('supersedes a record by a newer one, keeping the history', async () => {
    const owner = 'o_sup';
    const [orig, other] = [rec(owner, 1, { payload: { n: 1, note: 'first' } }), rec(owner, 2)];
    await t.append([orig, other]);
    const amended = rec(owner, 1, { payload: { n: 1, note: 'amended' } });
    await t.supersede(owner, orig._id, amended);
    await t.supersede(owner, orig._id, amended); // a repeat changes nothing
    expect(await listAll(t, owner)).toEqual(newestFirst([other, amended]));
    const withdrawn = rec(owner, 1, { kind: 'withdrawn' });
    await t.supersede(owner, amended._id, withdrawn);
    expect(await listAll(t, owner)).toEqual(newestFirst([other, withdrawn]));
    const history = await t.history(owner, amended._id);
    expect(history.map((r) => r._id)).toEqual([orig._id, amended._id, withdrawn._id]);
    expect(history.map((r) => [r.supersedes, r.supersededBy])).toEqual([
      [undefined, amended._id],
      [orig._id, withdrawn._id],
      [amended._id, undefined],
    ]);
    await expect(t.supersede(owner, orig._id, rec(owner, 1))).rejects.toBeInstanceOf(AlreadySuperseded);
    await expect(t.supersede(owner, 'r_none', rec(owner, 1))).rejects.toBeInstanceOf(RecordNotFound);
    expect(await t.count(owner)).toBe(4);
  });

  it('purges what one partner sent about one subject, and nothing else', async () => {
    const owner = 'o_purge';
    const kept = [rec(owner, 1, { subjectRef: 'keep' }), rec(owner, 2, { institutionId: 'inst_b', subjectRef: 'gone' })];
    const gone = [rec(owner, 3, { subjectRef: 'gone' }), rec(owner, 900, { subjectRef: 'gone' }), rec('o_purge2', 4, { subjectRef: 'gone' })];
    await t.append([...kept, ...gone]);
    expect(await t.purge({ institutionId: 'inst_a', subjectRef: 'gone' })).toBe(3);
    expect(await listAll(t, owner)).toEqual(newestFirst(kept));
    expect(await listAll(t, 'o_purge2')).toEqual([]);
    expect(await t.purge({ institutionId: 'inst_a', subjectRef: 'gone' })).toBe(0);
    expect(await t.count(owner)).toBe(2);
  });

  it('removes one owner, or a workspace, and starts afresh after', async () => {
    await t.append([rec('o_rm', 1), rec('o_rm', 2000), rec('o_keep', 1), rec('o_ws1', 1, { workspaceId: 'ws_x' }), rec('o_ws2', 5, { workspaceId: 'ws_x' })]);
    expect(await t.count('o_rm')).toBe(2);
    expect(await t.remove('o_rm')).toBe(2);
    expect(await listAll(t, 'o_rm')).toEqual([]);
    expect(await t.count('o_rm')).toBe(0);
    expect(await t.remove('o_rm')).toBe(0);
    const later = rec('o_rm', 3);
    await t.append([later]);
    expect(await listAll(t, 'o_rm')).toEqual([later._id]);
    await t.removeWhere({ workspaceId: 'ws_x' }, ['o_ws1']);
    expect([...(await listAll(t, 'o_ws1')), ...(await listAll(t, 'o_ws2'))]).toEqual([]);
    expect(await listAll(t, 'o_keep')).toHaveLength(1);
  });

  describe('under concurrency, with the CPU kept busy', () => {
    let busy: Worker;
    const totals = { rounds: 0, appended: 0, lost: 0, doubled: 0 };
    beforeAll(() => {
      busy = new Worker('for (;;) {}', { eval: true });
    });
    afterAll(async () => {
      await busy.terminate();
      process.stdout.write(
        `timeline (${shape}) concurrency: ${totals.rounds} rounds, ${totals.appended} records, ${totals.lost} lost, ${totals.doubled} doubled\n`,
      );
    });
    /** What the store holds for an owner: every record must be listed once. */
    const stored = async (owner: string) =>
      (
        await db
          .collection<Rec>(STREAM.records)
          .find({ owner }, { projection: { _id: 1 } })
          .toArray()
      ).map((r) => r._id);
    const batchesOf = (owner: string, n: number, size: number, month = 0) =>
      Array.from({ length: n }, (_, b) => Array.from({ length: size }, (_, i) => rec(owner, month * 744 + ((b * size + i) % 700))));

    it(
      'two connections appending overlapping batches to one owner: each record listed once',
      async () => {
        for (let round = 0; round < ROUNDS; round++) {
          const owner = `c_two_${round}`;
          const batches = batchesOf(owner, 6, 15, round % 3);
          const results = await Promise.all(batches.flatMap((b, i) => [t.append(b), t2.append(i % 2 ? [...b].reverse() : b.slice(3))]));
          const all = batches.flat();
          const listed = await listAll(t2, owner, {}, 200);
          const storedIds = results.flatMap((r) => r.stored);
          totals.rounds++;
          totals.appended += all.length;
          totals.lost += all.filter((r) => !listed.includes(r._id)).length;
          totals.doubled += doubled(listed) + doubled(storedIds);
          expect(listed).toEqual(newestFirst(all));
          expect(storedIds.sort()).toEqual(all.map((r) => r._id).sort());
          await t.remove(owner); // each round on a small store, as the first did
        }
      },
      STRESS_MS,
    );

    it(
      'appends during a purge: the purged subject gone, every other record listed once',
      async () => {
        for (let round = 0; round < ROUNDS; round++) {
          const owner = `c_purge_${round}`;
          const subject = `subj-p${round}`;
          const before = batchesOf(owner, 3, 12).flat();
          const doomed = before.filter((_, i) => i % 3 === 0).map((r) => ({ ...r, subjectRef: subject }));
          const early = before.filter((_, i) => i % 3 !== 0);
          await t.append([...doomed, ...early]);
          const during = batchesOf(owner, 4, 10);
          await Promise.all([t.purge({ institutionId: 'inst_a', subjectRef: subject }), ...during.map((b) => t2.append(b))]);
          const keep = [...early, ...during.flat()];
          const listed = await listAll(t, owner, {}, 200);
          totals.rounds++;
          totals.appended += doomed.length + keep.length;
          totals.lost += keep.filter((r) => !listed.includes(r._id)).length;
          totals.doubled += doubled(listed);
          expect(listed).toEqual(newestFirst(keep));
          await t.remove(owner);
        }
      },
      STRESS_MS,
    );

    it(
      'removal during appends: other owners untouched, nothing stored left unlisted, nothing removed coming back',
      async () => {
        for (let round = 0; round < ROUNDS; round++) {
          const [gone, other] = [`c_rm_${round}`, `c_rmk_${round}`];
          const old = batchesOf(gone, 2, 10).flat();
          await t.append(old);
          const racing = batchesOf(gone, 3, 8);
          const others = batchesOf(other, 3, 8);
          await Promise.all([t.remove(gone), ...racing.map((b) => t2.append(b)), ...others.map((b) => t2.append(b))]);
          const after = batchesOf(gone, 1, 5).flat();
          await t2.append(after);
          const listed = await listAll(t, gone, {}, 200);
          const listedOther = await listAll(t, other, {}, 200);
          const holds = await stored(gone);
          totals.rounds++;
          totals.appended += old.length + racing.flat().length + others.flat().length + after.length;
          // Lost: held by the store (or appended after the removal) yet not listed.
          const lost =
            [...new Set([...holds, ...after.map((r) => r._id)])].filter((id) => !listed.includes(id)).length +
            others.flat().filter((r) => !listedOther.includes(r._id)).length;
          totals.lost += lost;
          totals.doubled += doubled(listed) + doubled(listedOther);
          expect(lost).toBe(0);
          expect(doubled(listed) + doubled(listedOther)).toBe(0);
          expect(listed.filter((id) => old.some((r) => r._id === id))).toEqual([]);
          expect(listedOther).toEqual(newestFirst(others.flat()));
          // With nothing in flight, a removal leaves nothing behind.
          await t.remove(gone);
          expect(await listAll(t, gone)).toEqual([]);
          expect(await t.count(gone)).toBe(0);
          await t.remove(other);
        }
      },
      STRESS_MS,
    );
  });

  if (shape === 'embedded') {
    it('reads one owner: a listing looks at the month list and the newest months only', async () => {
      const owner = 'o_scan';
      await t.append(Array.from({ length: 24 }, (_, m) => rec(owner, new Date(Date.UTC(2026, m, 15)).toISOString())));
      const watched = await new MongoClient(url, { monitorCommands: true }).connect();
      clients.push(watched);
      const looked = new Set<string>();
      watched.on('commandStarted', (e) => {
        if (e.commandName === 'find') looked.add(String((e.command as { find: string }).find));
      });
      const page = await timelinesOf(watched.db(databaseName(url)), shape)
        .of(STREAM)
        .list(owner, { limit: 1 });
      expect(page.records).toHaveLength(1);
      expect([...looked].sort()).toEqual(['tl_probe_202712_o_scan', 'tl_probe_202711_o_scan', 'tlm_probe_o_scan'].sort());
      // A stream partitioned by day reads its newest days only.
      const days = timelinesOf(db, shape).of(DAYS);
      await days.append(Array.from({ length: 10 }, (_, d) => rec(owner, new Date(Date.UTC(2026, 4, 1 + d, 9)).toISOString())));
      looked.clear();
      const newest = await timelinesOf(watched.db(databaseName(url)), shape)
        .of(DAYS)
        .list(owner, { limit: 1 });
      expect(newest.records).toHaveLength(1);
      expect([...looked].sort()).toEqual(['tl_days_20260510_o_scan', 'tl_days_20260509_o_scan', 'tlm_days_o_scan'].sort());
      expect(t).toBeInstanceOf(EmbeddedTimeline);
    });
  }
});
