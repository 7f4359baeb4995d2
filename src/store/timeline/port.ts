// The timeline port: what the service does with one owner's records (a loved one's care events or
// inbox mail, a person's MCP activity), whatever the store. Adapters: ./indexed.ts, ./embedded.ts.
import { createHash } from 'node:crypto';
import type { Collection, Db, Document } from 'mongodb';
import { duplicateIndexes, isDuplicateKey } from '../errors.js';

/** One kind of record kept as timelines: declared once by the slice that owns it. */
export interface Stream<T extends TimelineRecord> {
  /** Short name (lower-case letters): part of the embedded store's collection names and of every cursor. */
  name: string;
  /** The collection holding every record of the kind; its `_id` de-duplicates an append. */
  records: string;
  /** The owner of a timeline (a loved one, a uid): every record carries it. */
  owner: keyof T & string;
  /** The instant a listing orders by (a Date on every record). */
  time: keyof T & string;
  /** The field `types` filters on, when the kind has types. */
  type?: keyof T & string;
  /** How the embedded store partitions one owner's records: by month (the default), or by day for
   *  a kind one owner fills fast (a read scans the newest partitions whole). */
  period?: 'month' | 'day';
}

/** What every record carries: its id, and the links of a supersession (set by the timeline). */
export interface TimelineRecord {
  _id: string;
  /** The record this one corrects or withdraws. */
  supersedes?: string;
  /** The record that corrected or withdrew this one: it is no longer listed. */
  supersededBy?: string;
}

export interface TimelineQuery {
  /** At or after this instant. */
  since?: Date;
  /** Before this instant. */
  until?: Date;
  /** Only these types (any string: partners may send types this version does not know). */
  types?: readonly string[];
  limit: number;
  /** Where the previous page of the same query ended (its `nextCursor`). */
  cursor?: string;
}

export interface TimelinePage<T> {
  records: T[];
  /** Present when more records match: pass it back as `cursor`, with the same query. */
  nextCursor?: string;
}

export interface Appended {
  stored: string[];
  /** Ids already stored (a redelivery), or given twice in the batch. */
  duplicates: string[];
}

export interface Timeline<T extends TimelineRecord> {
  /** Store a batch in any order; an id already stored is reported, never stored twice. Any other
   *  refusal throws and says nothing about the rest: a caller retries the whole batch. */
  append(records: readonly T[]): Promise<Appended>;
  /** Newest first (time, then `_id`, descending), superseded records left out. */
  list(owner: string, q: TimelineQuery): Promise<TimelinePage<T>>;
  get(owner: string, id: string): Promise<T | null>;
  /** `newer` replaces record `id` in listings; both stay readable through `history`. */
  supersede(owner: string, id: string, newer: T): Promise<void>;
  /** Every version of the record `id` belongs to, oldest first. */
  history(owner: string, id: string): Promise<T[]>;
  /** Delete the records matching these fields (a partner's purge of one of its subjects); the number deleted. */
  purge(match: Readonly<Record<string, string>>): Promise<number>;
  /** Delete one owner's timeline; the number of records deleted. */
  remove(owner: string): Promise<number>;
  /** Delete every record matching these fields (a workspace), with the timelines of `owners` and of any owner they name. */
  removeWhere(match: Readonly<Record<string, string>>, owners: readonly string[]): Promise<void>;
  /** Records of one owner, superseded ones included: what `remove` would delete. */
  count(owner: string): Promise<number>;
  /** Take in records already in the records collection (a store an earlier version wrote): the
   *  embedded shape copies them to their owners' months; repeating it changes nothing. */
  adopt(records: readonly T[]): Promise<void>;
}

/** The adapter chosen for this store, handing out one timeline per stream. */
export interface Timelines {
  readonly shape: 'indexed' | 'embedded';
  of<T extends TimelineRecord>(stream: Stream<T>): Timeline<T>;
}

/** A cursor made by another query (another owner or filter), or no cursor at all. */
export class CursorRefused extends Error {
  readonly field = 'cursor';
  constructor() {
    super('cursor: not a cursor of this query; start without one');
  }
}

/** The record was superseded already, by another record. */
export class AlreadySuperseded extends Error {
  constructor(
    readonly id: string,
    readonly by: string,
  ) {
    super(`record ${id} is already superseded by ${by}`);
  }
}

export class RecordNotFound extends Error {
  constructor(readonly id: string) {
    super(`no record ${id} on this timeline`);
  }
}

/** The position a listing continues after. */
export interface Position {
  at: Date;
  id: string;
}

const bindingOf = (stream: string, owner: string, q: TimelineQuery) =>
  createHash('sha256')
    .update(JSON.stringify([stream, owner, q.since?.toISOString() ?? null, q.until?.toISOString() ?? null, [...(q.types ?? [])].sort()]))
    .digest('base64url')
    .slice(0, 16);

/** A cursor names its position and the query it belongs to (owner, stream, filters). */
export function encodeCursor(stream: string, owner: string, q: TimelineQuery, last: Position): string {
  return Buffer.from(JSON.stringify([last.at.toISOString(), last.id, bindingOf(stream, owner, q)])).toString('base64url');
}

/** The position of `q.cursor`, none without one; throws CursorRefused for one another query made. */
export function decodeCursor(stream: string, owner: string, q: TimelineQuery): Position | undefined {
  if (q.cursor === undefined) return undefined;
  try {
    const [at, id, bound] = JSON.parse(Buffer.from(q.cursor, 'base64url').toString('utf8')) as unknown[];
    const when = typeof at === 'string' ? new Date(at) : null;
    if (when && !Number.isNaN(when.getTime()) && typeof id === 'string' && id && bound === bindingOf(stream, owner, q)) return { at: when, id };
  } catch {
    // not JSON: refused below
  }
  throw new CursorRefused();
}

/** The one order of every listing: newest first, ties broken by id so pages never overlap. */
export const newerFirst = (a: { at: number; id: string }, b: { at: number; id: string }): number => b.at - a.at || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0);

/** Insert unordered; which ids were stored and which were there already. */
export async function insertReporting<D extends { _id: string }>(into: Collection<D> | Collection<Document>, docs: readonly D[]): Promise<Appended> {
  if (!docs.length) return { stored: [], duplicates: [] };
  try {
    // Copies: the driver would set fields on the caller's objects.
    await (into as Collection<D>).insertMany(
      docs.map((d) => ({ ...d }) as never),
      { ordered: false },
    );
    return { stored: docs.map((d) => d._id), duplicates: [] };
  } catch (err) {
    const refused = duplicateIndexes(err);
    if (!refused) throw err;
    const dup = new Set(refused);
    return { stored: docs.filter((_, i) => !dup.has(i)).map((d) => d._id), duplicates: docs.filter((_, i) => dup.has(i)).map((d) => d._id) };
  }
}

/** Supersessions are decided by inserting `<stream>:<id>` here: the first insert wins. */
export const SUPERSESSIONS = 'timeline_supersessions';

/** What both adapters share: supersession and history, built on get, append and a mark. */
export abstract class TimelineBase<T extends TimelineRecord> implements Timeline<T> {
  private readonly claims: Collection<{ _id: string; by: string; stream: string; owner: string }>;
  constructor(
    protected readonly db: Db,
    protected readonly stream: Stream<T>,
  ) {
    this.claims = db.collection(SUPERSESSIONS);
  }

  abstract append(records: readonly T[]): Promise<Appended>;
  abstract list(owner: string, q: TimelineQuery): Promise<TimelinePage<T>>;
  abstract get(owner: string, id: string): Promise<T | null>;
  abstract purge(match: Readonly<Record<string, string>>): Promise<number>;
  abstract remove(owner: string): Promise<number>;
  abstract removeWhere(match: Readonly<Record<string, string>>, owners: readonly string[]): Promise<void>;
  abstract count(owner: string): Promise<number>;
  abstract adopt(records: readonly T[]): Promise<void>;
  /** Record on `id` that `by` superseded it (repeating it changes nothing). */
  protected abstract mark(owner: string, id: string, by: string): Promise<void>;

  protected timeOf = (r: T): Date => r[this.stream.time] as Date;

  /** The claim decides who supersedes a record; then the newer record, then the mark. A call
   *  repeated after a crash finds its own claim and finishes the rest. */
  async supersede(owner: string, id: string, newer: T): Promise<void> {
    if (!(await this.get(owner, id))) throw new RecordNotFound(id);
    try {
      await this.claims.insertOne({ _id: `${this.stream.name}:${id}`, by: newer._id, stream: this.stream.name, owner });
    } catch (err) {
      if (!isDuplicateKey(err)) throw err;
      const claim = await this.claims.findOne({ _id: `${this.stream.name}:${id}` });
      if (claim && claim.by !== newer._id) throw new AlreadySuperseded(id, claim.by);
    }
    await this.append([{ ...newer, supersedes: id }]);
    await this.mark(owner, id, newer._id);
  }

  async history(owner: string, id: string): Promise<T[]> {
    let newest = await this.get(owner, id);
    if (!newest) return [];
    const seen = new Set([newest._id]);
    for (let next = newest.supersededBy; next && !seen.has(next); next = newest.supersededBy) {
      const r = await this.get(owner, next);
      if (!r) break;
      seen.add(r._id);
      newest = r;
    }
    const chain = [newest];
    for (let prev = newest.supersedes; prev;) {
      const r = await this.get(owner, prev);
      if (!r || chain.some((c) => c._id === r._id)) break;
      chain.unshift(r);
      prev = r.supersedes;
    }
    return chain;
  }

  /** An owner's claims go with its timeline. */
  protected forgetClaims(owners: readonly string[]): Promise<unknown> {
    return owners.length ? this.claims.deleteMany({ stream: this.stream.name, owner: { $in: [...owners] } }) : Promise.resolve();
  }
}
