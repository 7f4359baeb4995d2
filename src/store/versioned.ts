// Compare-and-set that is atomic on MongoDB and on FerretDB v1 alike.
//
// FerretDB v1 applies `updateOne({_id, v}, …)` as read-then-write, so two connections can both
// "win" a version check (measured: 5 of 20 concurrent updates matched). An insert on a unique
// `_id` is atomic on both, so each new state of a key is a new document `<key>#<version>`:
// whoever inserts version n+1 first owns that transition; everyone else re-reads and retries.
import type { Collection, Db, Document, IndexDescription } from 'mongodb';
import { isDuplicateKey } from './errors.js';

export interface Versioned<T> {
  key: string;
  v: number;
  state: T;
  /** Milliseconds since the epoch when this version was written (for sweeping). */
  at: number;
}

type Row<T> = Versioned<T> & { _id: string };

/** Where the newest version of a key is: read by `_id`, because FerretDB v1 scans for
 *  `find({key}).sort({v: -1})`. It may lag behind the newest version (it is written after
 *  it, without a check) but never leads; `latest` steps forward from it. */
interface Head {
  _id: string;
  v: number;
  at: number;
}

/** How many superseded versions of a key to keep before pruning. */
const KEEP = 8;

export class VersionedStore<T extends Document> {
  private readonly rows: Collection<Row<T>>;
  private readonly heads: Collection<Head>;

  constructor(db: Db, collection: string) {
    this.rows = db.collection<Row<T>>(collection);
    this.heads = db.collection<Head>(`${collection}_heads`);
  }

  /** The newest version of `key`, or null. Reads are by primary key; the scan is a fallback. */
  async latest(key: string): Promise<Versioned<T> | null> {
    const head = await this.heads.findOne({ _id: key });
    let row: Row<T> | null = await this.rows.findOne({ _id: `${key}#${head?.v ?? 1}` });
    // No usable head (never written, or pruned past): ask the slow way once.
    if (!row) row = await this.rows.find({ key }).sort({ v: -1 }).limit(1).next();
    if (!row) return null;
    for (;;) {
      const next: Row<T> | null = await this.rows.findOne({ _id: `${key}#${row.v + 1}` });
      if (!next) break;
      row = next;
    }
    return { key: row.key, v: row.v, state: row.state, at: row.at };
  }

  /**
   * Write version `v` of `key` if nobody has. False means another writer got there first:
   * re-read with latest() and decide again.
   */
  async tryWrite(key: string, v: number, state: T, at: number): Promise<boolean> {
    try {
      await this.rows.insertOne({ _id: `${key}#${v}`, key, v, state, at } as Row<T>);
    } catch (err) {
      if (isDuplicateKey(err)) return false;
      throw err;
    }
    // Advance the head for the next reader; never awaited, never behind a slower writer for long.
    void this.heads.updateOne({ _id: key }, { $max: { v }, $set: { at } }, { upsert: true }).catch(() => undefined);
    if (v % KEEP === 0 && v > KEEP) void this.rows.deleteMany({ key, v: { $lt: v - KEEP } }).catch(() => undefined);
    return true;
  }

  /** Remove every version of keys whose newest write is older than `before`. */
  async sweep(before: number): Promise<number> {
    const res = await this.rows.deleteMany({ at: { $lt: before } });
    await this.heads.deleteMany({ at: { $lt: before } });
    return res.deletedCount;
  }

  /** Remove every version of one key. */
  async remove(key: string): Promise<void> {
    await this.heads.deleteOne({ _id: key });
    await this.rows.deleteMany({ key });
  }
}

/** The index every versioned collection needs: newest version of a key first. */
export const versionedIndexes: IndexDescription[] = [
  { key: { key: 1, v: -1 }, name: 'by_key_version' },
  { key: { at: 1 }, name: 'by_time' },
];
