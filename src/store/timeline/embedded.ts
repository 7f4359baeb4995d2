// The timeline on the embedded FerretDB, which scans a collection for every query and decodes
// each document it looks at (about 0.1 ms for a small document), and which copies and sorts the
// list of its database's collections for every `find` (about 1 µs per collection). So each owner's
// records are copied, as they are appended, into a collection per owner and month (or day, for a
// stream that declares it), `tl_<stream>_<yyyymm>_<owner>`, one small document per record: the fields a listing filters and
// sorts on, and the record as one EJSON string. The months an owner has are documents of its own
// collection `tlm_<stream>_<owner>`, `_id` = `yyyy-mm`. These collections live in one of SHARDS
// databases beside the store's own, `<database>_tl<nn>`, chosen by the owner, so that no database's
// list of collections grows with every family. A read looks at the month list and then at the
// newest months only, so it costs what one owner's recent data costs; a read bounded on both sides
// that spans a few months reads those by name, without the list.
//
// Nothing is ever rewritten, and every write is an insert on a unique `_id` (the one write FerretDB
// v1 makes atomic across connections): a month is listed before any of its records is copied, a
// record is stored in the records collection before it is copied, and a copy already there is a
// duplicate, ignored. So two writers, or a redelivery, or a retry after a crash, leave each
// record listed once. Deletions go the other way: copies first, then records.
import { BSON, type Collection, type Db, type Document, type Filter } from 'mongodb';
import { createHash } from 'node:crypto';
import {
  decodeCursor,
  encodeCursor,
  insertReporting,
  newerFirst,
  TimelineBase,
  type Appended,
  type Stream,
  type TimelinePage,
  type TimelineQuery,
  type TimelineRecord,
} from './port.js';

/** A record's copy in its owner's month. */
interface Copy {
  _id: string;
  /** The record's time. */
  t: Date;
  /** Its type, when the stream has types. */
  k?: string;
  /** The record that superseded it. */
  x?: string;
  /** The record, EJSON. */
  j: string;
}

const COPY_ATTEMPTS = 3;
/** Months read at first: most listings end within the newest one or two; each later round reads
 *  twice as many as the one before, so a sparse timeline takes few round trips. */
const READ_AHEAD = 2;
/** Partitions a read bounded on both sides reads by name, without the owner's list, at most. */
const DIRECT_PARTITIONS = 3;
/** Databases the copies are spread over. */
export const SHARDS = 32;

const shardOf = (database: string, n: number) => `${database}_tl${String(n).padStart(2, '0')}`;

/** The database holding an owner's collections: `<database>_tl<nn>`. */
export function shardName(database: string, owner: string): string {
  return shardOf(database, createHash('sha256').update(owner).digest().readUInt32BE(0) % SHARDS);
}

/** Every database the copies of `database` may live in. */
export function shardNames(database: string): string[] {
  return Array.from({ length: SHARDS }, (_, n) => shardOf(database, n));
}

/** An owner id as it appears in a collection name; hashed when it has other characters. */
const ownerPart = (owner: string) => (/^[A-Za-z0-9_-]{1,100}$/.test(owner) ? owner : `h${createHash('sha256').update(owner).digest('hex').slice(0, 40)}`);

export class EmbeddedTimeline<T extends TimelineRecord> extends TimelineBase<T> {
  private readonly records: Collection<T>;
  constructor(db: Db, stream: Stream<T>) {
    super(db, stream);
    this.records = db.collection<T>(stream.records);
  }

  /** The partition a record falls in: its month (`yyyy-mm`), or its day (`yyyy-mm-dd`) for a
   *  stream declared `period: 'day'` (one that a single owner fills fast, such as MCP activity). */
  private monthOf = (d: Date): string => d.toISOString().slice(0, this.stream.period === 'day' ? 10 : 7);

  /** The database of an owner's collections. */
  private shard = (owner: string): Db => this.db.client.db(shardName(this.db.databaseName, owner));
  private monthsOf = (owner: string): Collection<{ _id: string }> => this.shard(owner).collection(`tlm_${this.stream.name}_${ownerPart(owner)}`);
  private month = (owner: string, month: string): Collection<Copy> =>
    this.shard(owner).collection(`tl_${this.stream.name}_${month.replaceAll('-', '')}_${ownerPart(owner)}`);

  /** The owner's months, newest first. */
  private async months(owner: string): Promise<string[]> {
    return (await this.monthsOf(owner).find({}).toArray())
      .map((m) => m._id)
      .sort()
      .reverse();
  }

  async append(records: readonly T[]): Promise<Appended> {
    const result = await insertReporting(this.db.collection(this.stream.records), records);
    // Duplicates too: a redelivery after a crash between the two writes completes the first.
    await this.copy(records);
    return result;
  }

  adopt(records: readonly T[]): Promise<void> {
    return this.copy(records);
  }

  /** Copy stored records into their owners' months: each month listed, then its copies inserted.
   *  An insert that meets a removal's drop of the same collection fails on FerretDB (it closes the
   *  connection, or finds its table gone): the copy is tried again, which its `_id`s make harmless. */
  private async copy(records: readonly T[]): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.copyOnce(records);
      } catch (err) {
        if (attempt >= COPY_ATTEMPTS) throw err;
      }
    }
  }

  private async copyOnce(records: readonly T[]): Promise<void> {
    const byOwner = groupBy(records, (r) => r[this.stream.owner] as string);
    await Promise.all(
      [...byOwner].map(async ([owner, mine]) => {
        const byMonth = groupBy(mine, (r) => this.monthOf(this.timeOf(r)));
        await insertReporting(
          this.monthsOf(owner),
          [...byMonth.keys()].map((m) => ({ _id: m })),
        );
        await Promise.all(
          [...byMonth].map(([m, list]) =>
            insertReporting(
              this.month(owner, m),
              list.map((r) => this.copyOf(r)),
            ),
          ),
        );
      }),
    );
  }

  private copyOf(r: T): Copy {
    const { supersededBy, ...rest } = r;
    const type = this.stream.type ? r[this.stream.type] : undefined;
    return {
      _id: r._id,
      t: this.timeOf(r),
      ...(typeof type === 'string' ? { k: type } : {}),
      ...(supersededBy ? { x: supersededBy } : {}),
      j: BSON.EJSON.stringify(rest, { relaxed: true }),
    };
  }

  private recordOf(c: Pick<Copy, 'j' | 'x'>): T {
    const r = fromEJSON(c.j) as T;
    return c.x ? { ...r, supersededBy: c.x } : r;
  }

  async list(owner: string, q: TimelineQuery): Promise<TimelinePage<T>> {
    const after = decodeCursor(this.stream.name, owner, q);
    const upper = Math.min(q.until ? q.until.getTime() - 1 : Infinity, after ? after.at.getTime() : Infinity);
    const newest = Number.isFinite(upper) ? this.monthOf(new Date(upper)) : '9999-12';
    const oldest = q.since ? this.monthOf(q.since) : '0000-00';
    // A range of a few partitions reads them by name: one command fewer than reading the owner's
    // list first, and a partition nobody wrote to reads empty (FerretDB, like MongoDB, finds nothing
    // in a collection that does not exist).
    const months =
      (q.since && Number.isFinite(upper) ? this.partitionsBetween(oldest, newest) : undefined) ??
      (await this.months(owner)).filter((m) => m <= newest && m >= oldest);
    const and: Document[] = [{ x: { $exists: false } }];
    if (q.since) and.push({ t: { $gte: q.since } });
    if (q.until) and.push({ t: { $lt: q.until } });
    if (this.stream.type && q.types?.length) and.push({ k: { $in: [...q.types] } });
    if (after) and.push({ $or: [{ t: { $lt: after.at } }, { t: after.at, _id: { $lt: after.id } }] });
    const found: Copy[] = [];
    // Months are disjoint in time and read newest first, each for what is still missing.
    for (let i = 0, ahead = READ_AHEAD; i < months.length && found.length <= q.limit; i += ahead, ahead *= 2) {
      const want = q.limit + 1 - found.length;
      const read = await Promise.all(
        months.slice(i, i + ahead).map((m) =>
          this.month(owner, m)
            .find({ $and: and } as Filter<Copy>, { projection: { t: 1, j: 1 } })
            .sort({ t: -1, _id: -1 })
            .limit(want)
            .toArray(),
        ),
      );
      for (const copies of read) found.push(...copies.slice(0, q.limit + 1 - found.length));
    }
    found.sort((a, b) => newerFirst({ at: a.t.getTime(), id: a._id }, { at: b.t.getTime(), id: b._id }));
    const page = found.slice(0, q.limit).map((c) => this.recordOf(c));
    const last = found[q.limit - 1];
    return found.length > q.limit && last
      ? { records: page, nextCursor: encodeCursor(this.stream.name, owner, q, { at: last.t, id: last._id }) }
      : { records: page };
  }

  /** The partitions from `oldest` to `newest`, newest first; undefined when there are more than DIRECT_PARTITIONS. */
  private partitionsBetween(oldest: string, newest: string): string[] | undefined {
    const out: string[] = [];
    const day = this.stream.period === 'day';
    for (let at = new Date(`${newest}${day ? '' : '-01'}T00:00:00Z`); ;) {
      const p = this.monthOf(at);
      if (p < oldest) return out;
      if (out.length === DIRECT_PARTITIONS) return undefined;
      out.push(p);
      if (day) at = new Date(at.getTime() - 86_400_000);
      else at.setUTCMonth(at.getUTCMonth() - 1);
    }
  }

  /** Where a record's copy is: looked for in the owner's months by `_id`, newest first. */
  private async find(owner: string, id: string): Promise<{ month: string; copy: Copy } | null> {
    for (const month of await this.months(owner)) {
      const copy = await this.month(owner, month).findOne({ _id: id });
      if (copy) return { month, copy };
    }
    return null;
  }

  async get(owner: string, id: string): Promise<T | null> {
    const found = await this.find(owner, id);
    return found ? this.recordOf(found.copy) : null;
  }

  protected async mark(owner: string, id: string, by: string): Promise<void> {
    const found = await this.find(owner, id);
    if (found) await this.month(owner, found.month).updateOne({ _id: id }, { $set: { x: by } });
    await this.records.updateOne({ _id: id } as Filter<T>, { $set: { supersededBy: by } as never });
  }

  async purge(match: Readonly<Record<string, string>>): Promise<number> {
    const { owner: o } = this.stream;
    const found = await this.records.find({ ...match } as Filter<T>, { projection: { _id: 1, [o]: 1, [this.stream.time]: 1 } }).toArray();
    if (!found.length) return 0;
    const byPlace = groupBy(found as T[], (r) => JSON.stringify([r[o], this.monthOf(this.timeOf(r))]));
    for (const [place, list] of byPlace) {
      const [owner, month] = JSON.parse(place) as [string, string];
      await this.month(owner, month).deleteMany({ _id: { $in: list.map((r) => r._id) } });
    }
    return (await this.records.deleteMany({ _id: { $in: found.map((r) => r._id) } } as Filter<T>)).deletedCount;
  }

  /** Drop the owner's collections, found by name (so a copy written while an earlier removal ran is found too). */
  private async drop(owner: string): Promise<void> {
    const part = ownerPart(owner);
    const names = await this.shard(owner)
      .listCollections({ name: { $regex: `^(tl_${this.stream.name}_\\d{6}(\\d{2})?_${part}|tlm_${this.stream.name}_${part})$` } }, { nameOnly: true })
      .toArray();
    // The month list last: while any month is left, a reader still finds the owner's list.
    for (const { name } of names.sort((a, b) => (a.name.startsWith('tlm_') ? 1 : b.name.startsWith('tlm_') ? -1 : 0))) {
      await this.shard(owner)
        .collection(name)
        .drop()
        .catch((err: unknown) => {
          // NamespaceNotFound: dropped by a removal running beside this one.
          if ((err as { code?: unknown }).code !== 26) throw err;
        });
    }
  }

  async remove(owner: string): Promise<number> {
    await this.drop(owner);
    const n = (await this.records.deleteMany({ [this.stream.owner]: owner } as Filter<T>)).deletedCount;
    await this.forgetClaims([owner]);
    return n;
  }

  async removeWhere(match: Readonly<Record<string, string>>, owners: readonly string[]): Promise<void> {
    const all = new Set([...owners, ...((await this.records.distinct(this.stream.owner, { ...match } as Filter<T>)) as string[])]);
    for (const owner of all) await this.drop(owner);
    await this.records.deleteMany({ ...match } as Filter<T>);
    await this.forgetClaims([...all]);
  }

  async count(owner: string): Promise<number> {
    const counts = await Promise.all((await this.months(owner)).map((m) => this.month(owner, m).countDocuments({})));
    return counts.reduce((a, b) => a + b, 0);
  }
}

function groupBy<T>(items: readonly T[], keyOf: (item: T) => string): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const item of items) {
    const key = keyOf(item);
    const list = out.get(key);
    if (list) list.push(item);
    else out.set(key, [item]);
  }
  return out;
}

const NOT_PLAIN = Symbol('not plain');

/** A copy's record: most are plain JSON but for their dates, which JSON.parse and a walk read in a
 *  third of the time EJSON.parse takes (a week's read parses every record of it); anything else
 *  in extended JSON (a `$`-key other than a date's ISO string) is read by EJSON.parse. */
function fromEJSON(j: string): unknown {
  const r = plainDates(JSON.parse(j));
  return r === NOT_PLAIN ? BSON.EJSON.parse(j, { relaxed: true }) : r;
}

function plainDates(v: unknown): unknown {
  if (typeof v !== 'object' || v === null) return v;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      const w = plainDates(v[i]);
      if (w === NOT_PLAIN) return NOT_PLAIN;
      if (w !== v[i]) v[i] = w;
    }
    return v;
  }
  const o = v as Record<string, unknown>;
  for (const k in o) {
    if (k.charCodeAt(0) === 36 /* $ */) return k === '$date' && typeof o.$date === 'string' && Object.keys(o).length === 1 ? new Date(o.$date) : NOT_PLAIN;
    const w = plainDates(o[k]);
    if (w === NOT_PLAIN) return NOT_PLAIN;
    if (w !== o[k]) o[k] = w;
  }
  return o;
}
