// Small documents read and replaced by key alone, with a compare-and-set that holds on FerretDB v1.
//
// The embedded FerretDB answers a lookup by `_id` by scanning its collection in SQLite until the
// first match (cheap per row), decodes documents slowly in Go, and its conditional updates are not
// atomic across connections. So each
// state of a key is inserted as `<key>#<v>` (the insert on a unique `_id` decides who wrote
// version v), a head per key says roughly where the newest version is, and every read, write
// and prune is by `_id`. Tags (loved one, workspace, uid) ride on every document so a purge can
// delete a family's states with one query.
//
// Reads are served from memory per process (src/auth/credentials.ts): a write of a new version, or
// a dropped collection, is told to every process before it returns, so the next read anywhere
// sees it; the compare-and-set itself always reads the store.
import { createHash } from 'node:crypto';
import type { Collection, Db, Document } from 'mongodb';
import { passThroughCredentials, type Credentials } from '../auth/credentials.js';
import { duplicateIndexes, isDuplicateKey } from '../store/errors.js';

/** The care-event timeline reaches keyed states with a database handle only, so the role wiring
 *  registers its process's credentials for its handle here (`keepStatesWith`); a handle nobody
 *  registered keeps nothing, and what it changes still reaches this process's services. */
const registered = new WeakMap<Db, Credentials>();
const passThrough = new WeakMap<Db, Credentials>();

export function keepStatesWith(db: Db, credentials: Credentials): void {
  registered.set(db, credentials);
}

function credentialsOf(db: Db): Credentials {
  let found = registered.get(db) ?? passThrough.get(db);
  if (!found) passThrough.set(db, (found = passThroughCredentials(db)));
  return found;
}

export type Tags = Record<string, string>;

interface Row<T> {
  _id: string;
  key: string;
  v: number;
  state: T;
  at: Date;
}

/** The newest state as far as its writer knows, so a read is one lookup and one probe. Two racing
 *  writers can leave an older state here (FerretDB's conditional update is not atomic), which is
 *  why every read still probes for the version after it. */
interface Head<T> {
  _id: string;
  v: number;
  state?: T;
}

/** Superseded versions kept behind the newest: a reader holding an older head still finds a row.
 *  A writer that re-creates a pruned number (this many writes raced past it between its read and
 *  its insert) learns so from the head and writes again (`overtaken`). */
const KEEP = 8;
const MAX_ATTEMPTS = 40;

/** A state's id in the per-process memory; a collection's own prefix is `stateId(collection, '')`. */
const stateId = (collection: string, key: string) => `${collection}\u0000${key}`;

/** Call after dropping a collection of states: no process serves any of its keys again. */
export function statesDropped(db: Db, collection: string): Promise<void> {
  return credentialsOf(db).changed('state', [stateId(collection, '')], true);
}

export class KeyedStates<T extends Document> {
  private readonly rows: Collection<Row<T>>;
  private readonly heads: Collection<Head<T>>;

  /** Heads live in `<collection>_heads` unless `headsIn` names another collection (the rows'
   *  own collection works too: a head's `_id` is the bare key, a row's has `#<v>`). `keep`: the
   *  superseded versions kept per key (fewer keeps a collection of large states small); `last`:
   *  states after which the key is removed right away (a sealed chunk), which get neither a head
   *  nor a prune; `gone`: whether a key was removed for good (its state moved elsewhere), asked
   *  only when a first version went in where no head was before or after. */
  constructor(
    private readonly db: Db,
    readonly collection: string,
    headsIn = `${collection}_heads`,
    private readonly keep = KEEP,
    private readonly opts: { last?: (state: T) => boolean; gone?: (key: string) => Promise<boolean> } = {},
  ) {
    this.rows = db.collection<Row<T>>(collection);
    this.heads = db.collection<Head<T>>(headsIn);
  }

  /** The newest state of `key` and its version, or null when it was never written. Shared with
   *  every other reader in this process: never change what it returns. */
  latest(key: string): Promise<{ v: number; state: T } | null> {
    return credentialsOf(this.db).records.lookup('state', stateId(this.collection, key), async () => (await this.read(key)).current);
  }

  /** The newest state as the store has it, and the version the head named (none: no head yet). */
  private async read(key: string): Promise<{ current: { v: number; state: T } | null; headV?: number }> {
    const head = await this.heads.findOne({ _id: key });
    const headV = head ? { headV: head.v } : {};
    if (head?.state !== undefined) {
      const next = (await this.rows.findOne({ _id: `${key}#${head.v + 1}` })) as Row<T> | null;
      if (!next) return { current: { v: head.v, state: head.state }, ...headV };
    }
    let row: Row<T> | null = (await this.rows.findOne({ _id: `${key}#${head?.v ?? 1}` })) as Row<T> | null;
    if (!row && head) {
      // The head lagged behind a prune: the newer versions are just ahead of it.
      for (let v = head.v + 1; !row && v <= head.v + 2 * this.keep; v++) row = (await this.rows.findOne({ _id: `${key}#${v}` })) as Row<T> | null;
      // Far behind (a crashed writer, a head regressed by a racing upsert): the slow way, once.
      row ??= (await this.rows.find({ key }).sort({ v: -1 }).limit(1).next()) as Row<T> | null;
    }
    if (!row) return { current: null, ...headV };
    for (;;) {
      const next: Row<T> | null = (await this.rows.findOne({ _id: `${key}#${row.v + 1}` })) as Row<T> | null;
      if (!next) break;
      row = next;
    }
    return { current: { v: row.v, state: row.state }, ...headV };
  }

  /**
   * Apply `change` to the newest state of `key` and store the result as the next version; on a
   * collision, re-read and apply again. `init` makes the first state when there is none (it is
   * stored even when `change` then has nothing to do). `change` returns null for "nothing to
   * change", so repeating an update is free.
   */
  async update(key: string, tags: Tags, init: () => Promise<T>, change: (state: T) => T | null): Promise<T> {
    return (await this.apply(key, tags, init, change)).state;
  }

  /** `update`, saying which version is now the newest and whether this call wrote it. With `told`,
   *  the change is added there instead of announced: the caller announces it (`announceStates`)
   *  before it returns, one message for a whole batch of writes. */
  async apply(key: string, tags: Tags, init: () => Promise<T>, change: (state: T) => T | null, told?: string[]): Promise<{ v: number; state: T; wrote: boolean }> {
    for (let attempt = 1; ; attempt++) {
      const { current, headV } = await this.read(key);
      const base = current ? current.state : await init();
      const changed = change(base);
      if (current && changed === null) return { ...current, wrote: false };
      const state = changed ?? base;
      const v = (current?.v ?? 0) + 1;
      try {
        await this.rows.insertOne({ _id: `${key}#${v}`, key, v, state, at: new Date(), ...tags } as Row<T>);
      } catch (err) {
        if (!isDuplicateKey(err) || attempt >= MAX_ATTEMPTS) throw err;
        await new Promise((resolve) => setTimeout(resolve, Math.random() * 3 * attempt));
        continue;
      }
      let behind = false;
      try {
        behind = await this.overtaken(key, v, headV);
        if (behind) await this.rows.deleteOne({ _id: `${key}#${v}` });
        else if (!this.opts.last?.(state)) {
          await this.advanceHead(key, v, state, tags, headV);
          if (v > this.keep) await this.rows.deleteOne({ _id: `${key}#${v - this.keep}` }).catch(() => undefined);
        }
      } finally {
        // Version v is stored whatever happened to the head: no process may keep serving v - 1.
        if (told) told.push(stateId(this.collection, key));
        else await credentialsOf(this.db).changed('state', [stateId(this.collection, key)]);
      }
      if (!behind) return { v, state, wrote: true };
      if (attempt >= MAX_ATTEMPTS) throw new Error(`state ${key}: other writers kept overtaking this one`);
    }
  }

  /** Whether version v, just inserted, is off to the side of the newest state: its number was free
   *  only because the key was removed (no head where the read saw one) or v had been pruned (the
   *  head is at v or past it) while this writer waited between its read and its insert. The row is
   *  then taken back and the change applied again to what is newest (a change already there is a
   *  no-op); a successor that built on v meanwhile holds its change already. A read that saw no
   *  head either (it came between a creator's row and its head) learns of a removal from the
   *  version it built on being gone, or, for a first version, from `gone`. */
  private async overtaken(key: string, v: number, headV: number | undefined): Promise<boolean> {
    const head = await this.heads.findOne({ _id: key }, { projection: { v: 1 } });
    if (head) return head.v >= v;
    if (headV !== undefined) return true;
    if (v > 1) return !(await this.rows.findOne({ _id: `${key}#${v - 1}` }, { projection: { _id: 1 } }));
    return (await this.opts.gone?.(key)) ?? false;
  }

  /** Write the first version of a key the caller knows nobody has written (it took the number
   *  through an earlier compare-and-set): the row and its head in one command. False when someone
   *  did write it: read and decide again. */
  async create(key: string, tags: Tags, state: T, told: string[]): Promise<boolean> {
    const row = { _id: `${key}#1`, key, v: 1, state, at: new Date(), ...tags } as Row<T>;
    const docs: Document[] = this.opts.last?.(state) ? [row] : [row, { _id: key, v: 1, state, ...tags }];
    try {
      // Ordered: a refused row stops before its head.
      await this.rows.insertMany(docs as Row<T>[], { ordered: true });
    } catch (err) {
      const refused = duplicateIndexes(err);
      if (!refused) throw err;
      // A head left behind by an earlier key of the same name only lags: reads probe past it.
      if (refused.includes(0)) return false;
    }
    told.push(stateId(this.collection, key));
    return true;
  }

  /** Point the head at version v. By `_id` alone: FerretDB v1 decodes every document of the
   *  collection for any other filter (the version condition cost 9× the update at a few hundred
   *  pages). A racing writer may set an older version after ours; reads probe past it. */
  private async advanceHead(key: string, v: number, state: T, tags: Tags, headV: number | undefined): Promise<void> {
    if (headV !== undefined) {
      if (headV < v) await this.heads.updateOne({ _id: key }, { $set: { v, state } });
      return;
    }
    try {
      await this.heads.insertOne({ _id: key, v, state, ...tags } as Head<T>);
    } catch (err) {
      // A racing first writer made the head: newer than ours, or ours is the one to keep.
      if (!isDuplicateKey(err)) throw err;
      const head = await this.heads.findOne({ _id: key }, { projection: { v: 1 } });
      if (head && head.v < v) await this.heads.updateOne({ _id: key }, { $set: { v, state } });
      return;
    }
    // The key may have been written on and removed (a chunk sealed and moved away) between our
    // version and this head: then our version is gone with it, and the head just made would bring
    // the removed state back for every reader. Take it away again. A version pruned behind newer
    // ones is not this case: their writers moved the head past v before pruning, so the delete,
    // which needs the head still at v, leaves it.
    if (!(await this.rows.findOne({ _id: `${key}#${v}` }, { projection: { _id: 1 } }))) await this.heads.deleteOne({ _id: key, v });
  }

  /** Delete keys whose newest version the caller has just seen (their states moved elsewhere),
   *  with every version kept. One delete by `_id` each, all in one command per collection:
   *  FerretDB v1 looks an `_id` up without decoding the rest of the collection, but decodes every
   *  document for `$in`, and each command costs it a round of its own besides. */
  async removeAll(keys: readonly { key: string; v: number }[], told: string[]): Promise<void> {
    if (!keys.length) return;
    const rows = keys.flatMap(({ key, v }) => Array.from({ length: Math.min(v, this.keep + 1) }, (_, i) => `${key}#${v - i}`));
    const heads = keys.map(({ key }) => key);
    const byId = (ids: string[]) => ids.map((_id) => ({ deleteOne: { filter: { _id } } }));
    // Heads first: a stalled writer whose insert lands on a version number freed here must find
    // the head gone (overtaken), which it would not while a head outlived the rows.
    if (this.rows.collectionName === this.heads.collectionName) await this.rows.bulkWrite(byId([...heads, ...rows]) as never[], { ordered: true });
    else {
      await this.heads.bulkWrite(byId(heads) as never[], { ordered: true });
      await this.rows.bulkWrite(byId(rows) as never[], { ordered: true });
    }
    told.push(...keys.map(({ key }) => stateId(this.collection, key)));
  }
}

/** Tell every process, in one message, about the states written with a `told` list. */
export function announceStates(db: Db, told: readonly string[]): Promise<void> {
  return credentialsOf(db).changed('state', [...new Set(told)]);
}

/** Run `write` with a `told` list, then announce what it wrote in one message before returning,
 *  whether it succeeded or not (a version stored before a failure is still news). */
export async function writeTelling<R>(db: Db, write: (told: string[]) => Promise<R>): Promise<R> {
  const told: string[] = [];
  try {
    return await write(told);
  } finally {
    await announceStates(db, told);
  }
}

/** Documents that never change once written (a sealed chunk of care events), read by `_id` from the
 *  same per-process memory as keyed states. The rare rewrite (a purge) tells every process. */
export class SettledDocuments<T extends Document & { _id: string }> {
  private readonly docs: Collection<T>;
  constructor(
    private readonly db: Db,
    readonly collection: string,
  ) {
    this.docs = db.collection<T>(collection);
  }

  get(id: string): Promise<T | null> {
    return credentialsOf(this.db).records.lookup('state', stateId(this.collection, id), () => this.docs.findOne({ _id: id } as never) as Promise<T | null>);
  }

  /** Write a document once; a second writer of the same document finds it there, which is fine. */
  async put(doc: T): Promise<void> {
    try {
      await this.docs.insertOne(doc as never);
    } catch (err) {
      if (!isDuplicateKey(err)) throw err;
    }
  }

  /** `put` for several documents, in one command. */
  async putAll(docs: readonly T[]): Promise<void> {
    if (!docs.length) return;
    try {
      await this.docs.insertMany(docs as never[], { ordered: false });
    } catch (err) {
      if (!duplicateIndexes(err)) throw err;
    }
  }

  async replace(doc: T): Promise<void> {
    await this.docs.replaceOne({ _id: doc._id } as never, doc);
    await credentialsOf(this.db).changed('state', [stateId(this.collection, doc._id)]);
  }
}

/** A collection of one owner's own (a loved one, a user): `<prefix><id>`, the id hashed when it
 *  has characters a collection name should not. */
export function ownCollection(prefix: string, id: string): string {
  return /^[A-Za-z0-9_-]{1,100}$/.test(id) ? `${prefix}${id}` : `${prefix}h${createHash('sha256').update(id).digest('hex').slice(0, 40)}`;
}

/** A short list under one key, kept as one JSON string (FerretDB decodes one value, not every
 *  field of every item); `revive` turns what JSON made of an item back into one. */
export function keptList<T>(db: Db, collection: string, key: string, revive: (raw: unknown) => T) {
  const states = new KeyedStates<{ items: string }>(db, collection, collection);
  const parse = (items: string) => (JSON.parse(items) as unknown[]).map(revive);
  return {
    read: async (): Promise<T[] | null> => {
      const s = await states.latest(key);
      return s ? parse(s.state.items) : null;
    },
    /** `init` makes the first list; `change` returns null for "nothing to change". */
    update: async (tags: Tags, init: () => Promise<T[]>, change: (items: T[]) => T[] | null): Promise<void> => {
      await states.update(key, tags, async () => ({ items: JSON.stringify(await init()) }), (s) => {
        const next = change(parse(s.items));
        return next ? { items: JSON.stringify(next) } : null;
      });
    },
  };
}
