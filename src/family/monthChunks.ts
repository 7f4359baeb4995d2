// One month of a loved one's care events as chunks of bounded size, so a write costs what its
// batch costs and not what the month already holds.
//
// A month's events go into its open chunk; the write that fills it seals it (its oldest and newest
// instants, final from then on) and the batch goes on into the next. The month's index lists the
// sealed chunks with their ranges, so a listing reads the open chunk and then only the sealed
// chunks that can still hold something newer than what it has. Events arrive in any order
// (partners backfill), which is why a chunk is chosen by its range and not by its number. Chunk 0
// is kept under the month's own key in the shape of the single month page that came before, so
// such a page is read and extended as it is.
//
// A sealed chunk moves to the loved one's second collection, written once and read by `_id`, so
// the collection that takes every write holds only what still changes: on FerretDB v1 every
// update, delete and missed lookup reads through its whole collection.
import type { Db } from 'mongodb';
import { decodeEvents, encodeEvents, newerFirst, type CareEventRecord } from './careEventRecord.js';
import { KeyedStates, SettledDocuments, type Tags } from './keyed.js';

/** Events per chunk at most: a write rewrites one chunk, and a listing of the newest 20 reads one or two. */
export const CHUNK_EVENTS = 100;
/** Superseded versions of an open chunk kept: writes to one loved one queue in each process, so
 *  few race, and fewer large rows keep the collection's scans short. */
const CHUNK_KEEP = 2;

/** A sealed chunk's range (epoch milliseconds of its oldest and newest event). */
interface SealedChunk {
  c: number;
  min: number;
  max: number;
}
interface ChunkState {
  /** JSON of the chunk's events, newest first (occurredAt, then `_id`, descending). */
  events: string;
  sealed?: SealedChunk;
}
/** A sealed chunk where it rests, under its chunk key, with the loved one's tags (purges find it by them). */
interface SettledChunk {
  _id: string;
  events: string;
  sealed: SealedChunk;
  lovedOneId?: string;
  workspaceId?: string;
}

/** The open chunk a writer was told to use is gone: it was sealed and moved meanwhile. */
class Moved extends Error {
  constructor(readonly chunk: SettledChunk) { super('chunk sealed and moved'); }
}

interface MonthIndex {
  sealed: SealedChunk[];
  /** The chunk taking events (chunks after it exist only while a sealing writer is between its two steps). */
  open: number;
}

export interface MonthRead {
  /** Only events this accepts count. */
  wanted: (e: CareEventRecord) => boolean;
  /** Only events at or before this instant (ms) can be wanted: chunks entirely newer are skipped. */
  atMost?: number;
  /** Only events at or after this instant (ms) can be wanted: chunks entirely older are skipped. */
  atLeast?: number;
}

/** The index each month was last seen with in this process, by collection and month: where a
 *  writer starts looking for the open chunk. Only a hint: a writer that finds the chunk sealed
 *  moves on and learns the index again, so a stale one costs a retry, never an event. */
const indexHints = new WeakMap<Db, Map<string, MonthIndex>>();
const HINTS_KEPT = 2_000;

const chunkKey = (month: string, c: number): string => (c === 0 ? month : `${month}.${c}`);
const indexKey = (month: string): string => `${month}.index`;
const EMPTY_INDEX: MonthIndex = { sealed: [], open: 0 };

function rangeOf(c: number, newestFirst: readonly CareEventRecord[]): SealedChunk {
  return { c, max: newestFirst[0]!.occurredAt.getTime(), min: newestFirst[newestFirst.length - 1]!.occurredAt.getTime() };
}

export class MonthChunks {
  private readonly chunks: KeyedStates<ChunkState>;
  private readonly indexes: KeyedStates<MonthIndex>;
  private readonly settled: SettledDocuments<SettledChunk>;
  private readonly hints: Map<string, MonthIndex>;

  /** `collection` takes the open chunks and indexes; `settledIn`, the sealed chunks. */
  constructor(
    db: Db,
    private readonly collection: string,
    settledIn: string,
    private readonly tags: Tags,
  ) {
    // A sealed chunk is moved off right after: it needs no head, and its versions go with it.
    this.chunks = new KeyedStates<ChunkState>(db, collection, collection, CHUNK_KEEP, { last: (s) => s.sealed !== undefined, gone: async (key) => (await this.settled.get(key)) !== null });
    this.indexes = new KeyedStates<MonthIndex>(db, collection, collection);
    this.settled = new SettledDocuments<SettledChunk>(db, settledIn);
    this.hints = indexHints.get(db) ?? indexHints.set(db, new Map()).get(db)!;
  }

  private async index(month: string): Promise<MonthIndex> {
    return this.hinted(month, (await this.indexes.latest(indexKey(month)))?.state ?? EMPTY_INDEX);
  }

  private hinted(month: string, index: MonthIndex): MonthIndex {
    const key = `${this.collection}/${month}`;
    this.hints.delete(key);
    if (this.hints.size >= HINTS_KEPT) this.hints.delete(this.hints.keys().next().value!);
    this.hints.set(key, index);
    return index;
  }

  /** Forget the hints of a dropped collection (its loved one removed). */
  static forget(db: Db, collection: string): void {
    const hints = indexHints.get(db);
    for (const key of hints?.keys() ?? []) if (key.startsWith(`${collection}/`)) hints!.delete(key);
  }

  /** Put events on the month's chunks; a repeat changes nothing. `maybeKnown` names events that
   *  may be on a sealed chunk already (the store reported them stored): those are looked for first.
   *  The states written are added to `told`, which the caller announces before it returns. */
  async add(month: string, events: readonly CareEventRecord[], maybeKnown: ReadonlySet<string>, told: string[]): Promise<void> {
    const doubtful = events.filter((e) => maybeKnown.has(e._id)).map((e) => e.occurredAt.getTime());
    // Events that may be on a sealed chunk need the index as it is; others start from the hint.
    const index = (!doubtful.length && this.hints.get(`${this.collection}/${month}`)) || (await this.index(month));
    const seen = new Set<string>();
    for (const s of doubtful.length ? index.sealed : []) {
      if (!doubtful.some((t) => t >= s.min && t <= s.max)) continue;
      for (const e of await this.sealedEvents(month, s.c)) seen.add(e._id);
    }
    // An event delivered twice in one batch is listed once too.
    const pending = events.filter((e) => !seen.has(e._id) && (seen.add(e._id), true));
    if (pending.length) await this.put(month, index, pending, told);
  }

  /** The events into the open chunk and, when they fill it, the chunks after it: a chunk that
   *  reaches CHUNK_EVENTS is sealed by the write that fills it, and a chunk after one this write
   *  sealed is created whole (nobody else can have written it: they learn it exists from that seal).
   *  The chunks found or made sealed are then moved together: rested, listed in the index and taken
   *  off the working collection, one command each. The index as it then stands. */
  private async put(month: string, index: MonthIndex, events: readonly CareEventRecord[], told: string[]): Promise<MonthIndex> {
    // Oldest first, so each chunk a batch fills holds a narrow range of instants.
    let rest = [...events].sort((a, b) => newerFirst(b, a));
    const ranges: SealedChunk[] = [];
    const rested: SettledChunk[] = [];
    const off: { key: string; v: number }[] = [];
    let fresh = false;
    let c = index.open;
    for (;;) {
      const key = chunkKey(month, c);
      let state: ChunkState | undefined;
      let sealedHere = false;
      if (fresh) {
        const take = rest.slice(0, CHUNK_EVENTS).sort(newerFirst);
        const made: ChunkState = take.length >= CHUNK_EVENTS ? { events: encodeEvents(take), sealed: rangeOf(c, take) } : { events: encodeEvents(take) };
        fresh = await this.chunks.create(key, this.tags, made, told);
        // Someone wrote it after all (a writer that saw the seal first): the usual way, then.
        if (!fresh) continue;
        [state, sealedHere, rest] = [made, made.sealed !== undefined, rest.slice(take.length)];
        if (sealedHere) off.push({ key, v: 1 });
      } else {
        const before = rest;
        let after = rest;
        try {
          const r = await this.chunks.apply(
            key,
            this.tags,
            async () => {
              const moved = await this.settled.get(key);
              if (moved) throw new Moved(moved);
              return { events: '[]' };
            },
            (s) => {
              const current = decodeEvents(s.events);
              const known = new Set(current.map((e) => e._id));
              after = before.filter((e) => !known.has(e._id));
              if (s.sealed || !after.length) return null;
              // An old single month page may hold more than a chunk: it is sealed as it is.
              const room = Math.max(0, CHUNK_EVENTS - current.length);
              const all = [...current, ...after.slice(0, room)].sort(newerFirst);
              after = after.slice(room);
              return all.length >= CHUNK_EVENTS ? { events: encodeEvents(all), sealed: rangeOf(c, all) } : { events: encodeEvents(all) };
            },
            told,
          );
          [state, sealedHere, rest] = [r.state, r.wrote && r.state.sealed !== undefined, after];
          if (r.state.sealed) off.push({ key, v: r.v });
        } catch (err) {
          if (!(err instanceof Moved)) throw err;
          ranges.push(err.chunk.sealed);
          // What the moved chunk holds is listed there already.
          const known = new Set(decodeEvents(err.chunk.events).map((e) => e._id));
          rest = before.filter((e) => !known.has(e._id));
        }
      }
      // Whoever finds a chunk sealed finishes its move (below); the open chunk ends the walk.
      if (state?.sealed) {
        ranges.push(state.sealed);
        rested.push({ _id: key, events: state.events, sealed: state.sealed, ...this.tags });
      } else if (state) break;
      fresh = sealedHere;
      c++;
      if (!rest.length) break;
    }
    if (!ranges.length) return c === index.open ? index : this.hinted(month, { ...index, open: c });
    await this.settled.putAll(rested);
    const listed = await this.indexes.apply(
      indexKey(month),
      this.tags,
      async () => EMPTY_INDEX,
      (ix) => {
        // Below `open` every chunk is listed already (a listing moves `open` past it in the same write).
        const news = ranges.filter((r) => r.c >= ix.open);
        if (!news.length) return null;
        const numbers = new Set(news.map((r) => r.c));
        return { sealed: [...ix.sealed.filter((x) => !numbers.has(x.c)), ...news], open: Math.max(ix.open, ...news.map((r) => r.c + 1)) };
      },
      told,
    );
    await this.chunks.removeAll(off, told);
    return this.hinted(month, listed.state);
  }

  /** A chunk's events, open or sealed, wherever it is. */
  private async chunk(month: string, c: number): Promise<ChunkState | null> {
    return (await this.chunks.latest(chunkKey(month, c)))?.state ?? (await this.settled.get(chunkKey(month, c)));
  }

  private async eventsOf(month: string, c: number): Promise<CareEventRecord[]> {
    return decodeEvents((await this.chunk(month, c))?.events ?? '[]');
  }

  /** A chunk the index lists as sealed: where it rests is final, whatever the working collection still holds. */
  private async sealedEvents(month: string, c: number): Promise<CareEventRecord[]> {
    const rested = await this.settled.get(chunkKey(month, c));
    return rested ? decodeEvents(rested.events) : this.eventsOf(month, c);
  }

  /** The open chunk, and any sealed one after it the index does not list yet. */
  private async openChain(month: string, index: MonthIndex): Promise<{ c: number; events: CareEventRecord[] }[]> {
    const out: { c: number; events: CareEventRecord[] }[] = [];
    for (let c = index.open; ; c++) {
      const state = await this.chunk(month, c);
      if (state) out.push({ c, events: decodeEvents(state.events) });
      if (!state?.sealed) return out;
    }
  }

  /** Up to `want` of the month's events that `q` accepts, newest first. */
  async read(month: string, want: number, q: MonthRead): Promise<CareEventRecord[]> {
    const found: CareEventRecord[] = [];
    // Most months never fill a chunk: while chunk 0 is open it is the whole month, and the index
    // (a lookup that misses, the dearest kind on FerretDB) is not read.
    const first = await this.chunks.latest(chunkKey(month, 0));
    if (first && !first.state.sealed) {
      for (const e of decodeEvents(first.state.events)) if (q.wanted(e)) found.push(e);
      return found.sort(newerFirst).slice(0, want);
    }
    const index = await this.index(month);
    for (const chunk of await this.openChain(month, index)) for (const e of chunk.events) if (q.wanted(e)) found.push(e);
    const candidates = index.sealed.filter((s) => (q.atLeast === undefined || s.max >= q.atLeast) && (q.atMost === undefined || s.min <= q.atMost)).sort((a, b) => b.max - a.max);
    for (const s of candidates) {
      if (found.length >= want) {
        found.sort(newerFirst);
        // Every chunk left ends before the last event kept: none can place anything above it.
        if (s.max < found[want - 1]!.occurredAt.getTime()) break;
      }
      for (const e of await this.sealedEvents(month, s.c)) if (q.wanted(e)) found.push(e);
    }
    return found.sort(newerFirst).slice(0, want);
  }

  /** Take events off whichever chunks hold them; sealed ranges stay as they were (still bounds). */
  async remove(month: string, ids: ReadonlySet<string>): Promise<void> {
    const index = await this.index(month);
    const sealed = new Set(index.sealed.map((s) => s.c));
    const numbers = new Set([...sealed, ...(await this.openChain(month, index)).map((chunk) => chunk.c)]);
    const without = (events: string) => encodeEvents(decodeEvents(events).filter((e) => !ids.has(e._id)));
    for (const c of numbers) {
      const key = chunkKey(month, c);
      if (!(await (sealed.has(c) ? this.sealedEvents(month, c) : this.eventsOf(month, c))).some((e) => ids.has(e._id))) continue;
      const settled = sealed.has(c) || !(await this.chunks.latest(key)) ? await this.settled.get(key) : null;
      if (settled) await this.settled.replace({ ...settled, events: without(settled.events) });
      else await this.chunks.update(key, this.tags, async () => ({ events: '[]' }), (s) => (decodeEvents(s.events).some((e) => ids.has(e._id)) ? { ...s, events: without(s.events) } : null));
    }
  }
}

/** A whole month written at once (imports, benchmarks): the open chunk (the newest events) and the
 *  index as key and state pairs, and the older chunks sealed, as they rest. */
export function seededMonth(month: string, events: readonly CareEventRecord[], tags: Tags): { open: { key: string; state: object }[]; settled: SettledChunk[] } {
  const sorted = [...events].sort(newerFirst);
  const groups: CareEventRecord[][] = [];
  for (let i = 0; i < sorted.length; i += CHUNK_EVENTS) groups.push(sorted.slice(i, i + CHUNK_EVENTS));
  const last = groups.length - 1;
  const open: { key: string; state: object }[] = [{ key: chunkKey(month, last), state: { events: encodeEvents(groups[0]!) } satisfies ChunkState }];
  // Older groups get lower numbers and are sealed.
  const settled = groups.slice(1).map((group, i): SettledChunk => ({ _id: chunkKey(month, last - 1 - i), events: encodeEvents(group), sealed: rangeOf(last - 1 - i, group), ...tags }));
  if (last > 0) open.push({ key: indexKey(month), state: { sealed: settled.map((d) => d.sealed), open: last } satisfies MonthIndex });
  return { open, settled };
}
