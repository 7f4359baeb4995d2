// Each loved one's care events as month pages read by key, on the embedded FerretDB only: what
// list_care_events and the care pages read there, so a read costs what one loved one's data costs.
//
// FerretDB v1 scans a collection for every query (an `_id` lookup stops at the first match) and
// decodes documents slowly, about 0.15 ms per stored event. So each loved one gets a collection of
// its own (`care_timeline_<lovedOneId>`), holding `months` (the months that have events, newest
// first) and each month's events in chunks of bounded size (./monthChunks.ts), kept as JSON
// strings so a read decodes one value, not every field of every event, all kept by `KeyedStates`.
// `care_events` stays the record of each event; MongoDB reads it through its index instead.
import type { Db } from 'mongodb';
import { groupBy, monthOf, type CareEventRecord } from './careEventRecord.js';
import { keptList, KeyedStates, ownCollection, statesDropped, writeTelling, type Tags } from './keyed.js';
import { MonthChunks, seededMonth } from './monthChunks.js';

export { newerFirst, type CareEventRecord } from './careEventRecord.js';

export const CARE_EVENTS = 'care_events';

interface MonthList {
  /** `yyyy-mm`, newest first. */
  months: string[];
  /** Started with the loved one: nothing about it predates the pages, so nothing needs a scan. */
  born?: true;
}
export interface TimelineQuery {
  since?: Date;
  until?: Date;
  types?: string[];
  limit: number;
  after?: { at: Date; id: string };
}

const TIMELINE_PREFIX = 'care_timeline_';
const SETTLED_PREFIX = 'care_settled_';
/** Months this process has seen in each timeline's list, by collection. A month never leaves a
 *  list while its loved one exists (only dropping the whole timeline removes it), so a writer
 *  that finds its months here need not read the list. */
const listedMonths = new WeakMap<Db, Map<string, Set<string>>>();
const LISTS_KEPT = 2_000;
/** Month pages read at once: most listings end within the first few months. */
const READ_AHEAD = 3;
const LIST_KEY = 'months';

/** The collection of one loved one's pages; ids outside the safe alphabet are hashed. */
export const timelineCollection = (lovedOneId: string): string => ownCollection(TIMELINE_PREFIX, lovedOneId);
/** Where one loved one's sealed chunks rest, written once each (./monthChunks.ts). */
export const settledCollection = (lovedOneId: string): string => ownCollection(SETTLED_PREFIX, lovedOneId);

/** Whether month pages serve this store's reads: FerretDB only (it says so in `buildInfo`). */
const pagesIn = new WeakMap<Db, Promise<boolean>>();
export function usesTimelinePages(db: Db): Promise<boolean> {
  let known = pagesIn.get(db);
  if (!known) {
    known = db.admin().command({ buildInfo: 1 }).then((info) => typeof info.ferretdbVersion === 'string', () => false);
    pagesIn.set(db, known);
  }
  return known;
}

/** Choose the read shape for a connection (tests run both shapes against one server). */
export function setTimelinePages(db: Db, on: boolean): void {
  pagesIn.set(db, Promise.resolve(on));
}

class Timeline {
  readonly lists: KeyedStates<MonthList>;
  readonly chunks: MonthChunks;
  constructor(
    private readonly db: Db,
    readonly lovedOneId: string,
    readonly tags: Tags,
  ) {
    const name = timelineCollection(lovedOneId);
    this.lists = new KeyedStates<MonthList>(db, name, name);
    this.chunks = new MonthChunks(db, name, settledCollection(lovedOneId), tags);
  }

  /** The month list, built from `care_events` by one scan for a loved one whose events predate
   *  the pages (a loved one added since starts with an empty list). */
  async months(): Promise<string[]> {
    const known = (await this.lists.latest(LIST_KEY))?.state.months;
    if (known) return known;
    return writeTelling(this.db, async (told) => (await this.lists.update(LIST_KEY, this.tags, () => this.build(told), () => null)).months);
  }

  private async build(told: string[]): Promise<MonthList> {
    const byMonth = groupBy(await this.db.collection<CareEventRecord>(CARE_EVENTS).find({ lovedOneId: this.lovedOneId }).toArray(), (e) => monthOf(e.occurredAt));
    // A writer racing this first build may have put some of them on a chunk already: look first.
    for (const [month, events] of byMonth) await this.chunks.add(month, events, new Set(events.map((e) => e._id)), told);
    return { months: [...byMonth.keys()].sort().reverse() };
  }

  /** Put stored events on their months' chunks; `maybeKnown` names those that may be there already.
   *  Every state written is announced to every process at once, before this returns. */
  add(events: readonly CareEventRecord[], maybeKnown: ReadonlySet<string>): Promise<void> {
    return writeTelling(this.db, (told) => this.addTelling(events, maybeKnown, told));
  }

  private async addTelling(events: readonly CareEventRecord[], maybeKnown: ReadonlySet<string>, told: string[]): Promise<void> {
    const byMonth = groupBy(events, (e) => monthOf(e.occurredAt));
    const months = [...byMonth.keys()];
    const lists = listedMonths.get(this.db) ?? listedMonths.set(this.db, new Map()).get(this.db)!;
    const name = timelineCollection(this.lovedOneId);
    let built = false;
    if (!months.every((m) => lists.get(name)?.has(m))) {
      const build = () => ((built = true), this.build(told));
      const list = (
        await this.lists.apply(LIST_KEY, this.tags, build, (s) => (months.every((m) => s.months.includes(m)) ? null : { ...s, months: [...new Set([...s.months, ...months])].sort().reverse() }), told)
      ).state;
      lists.delete(name);
      if (lists.size >= LISTS_KEPT) lists.delete(lists.keys().next().value!);
      lists.set(name, new Set(list.months));
    }
    // A build read these events from the records (stored before this call) and put them on
    // chunks, possibly sealed ones by now: each is looked for there before it is added again.
    const known = built ? new Set(events.map((e) => e._id)) : maybeKnown;
    await Promise.all(months.map((m) => this.chunks.add(m, byMonth.get(m)!, known, told)));
  }

  async remove(events: readonly Pick<CareEventRecord, '_id' | 'occurredAt'>[]): Promise<void> {
    for (const [month, gone] of groupBy(events, (e) => monthOf(e.occurredAt))) await this.chunks.remove(month, new Set(gone.map((e) => e._id)));
  }

  async list(q: TimelineQuery): Promise<CareEventRecord[]> {
    const upper = Math.min(q.until ? q.until.getTime() - 1 : Infinity, q.after ? q.after.at.getTime() : Infinity);
    const atMost = Number.isFinite(upper) ? upper : undefined;
    const atLeast = q.since?.getTime();
    const newest = atMost === undefined ? undefined : monthOf(new Date(atMost));
    const oldest = q.since ? monthOf(q.since) : undefined;
    const types = q.types?.length ? new Set(q.types) : undefined;
    const after = q.after;
    const wanted = (e: CareEventRecord) =>
      (!q.since || e.occurredAt >= q.since) &&
      (!q.until || e.occurredAt < q.until) &&
      (!types || types.has(e.eventType)) &&
      (!after || e.occurredAt.getTime() < after.at.getTime() || (e.occurredAt.getTime() === after.at.getTime() && e._id < after.id));
    const months = (await this.months()).filter((m) => (!newest || m <= newest) && (!oldest || m >= oldest));
    const found: CareEventRecord[] = [];
    // Months are disjoint in time, newest first: a few are read at once, each for what is still missing.
    for (let i = 0; i < months.length && found.length < q.limit; i += READ_AHEAD) {
      const want = q.limit - found.length;
      const read = await Promise.all(months.slice(i, i + READ_AHEAD).map((m) => this.chunks.read(m, want, { wanted, atMost, atLeast })));
      for (const events of read) for (const e of events) if (found.length < q.limit) found.push(e);
    }
    return found;
  }
}

const timelineOf = (db: Db, lovedOneId: string, workspaceId = '') => new Timeline(db, lovedOneId, { lovedOneId, workspaceId });

/** Give a new loved one an empty month list, so its first event or read needs no scan. */
export async function startTimeline(db: Db, lovedOneId: string, workspaceId: string): Promise<void> {
  if (await usesTimelinePages(db)) await timelineOf(db, lovedOneId, workspaceId).lists.update(LIST_KEY, { lovedOneId, workspaceId }, async () => ({ months: [], born: true }), () => null);
}

/** Put stored events on their pages: per loved one, one list check and one write per month.
 *  `maybeKnown` names events the store reported stored already, which may be on a page too. */
export async function addToTimelines(db: Db, events: readonly CareEventRecord[], maybeKnown: ReadonlySet<string> = new Set()): Promise<void> {
  if (!events.length || !(await usesTimelinePages(db))) return;
  await Promise.all([...groupBy(events, (e) => e.lovedOneId)].map(([lovedOneId, list]) => enqueue(db, lovedOneId, list, maybeKnown)));
}

interface Batch {
  events: CareEventRecord[];
  maybeKnown: Set<string>;
  done: Promise<void>;
}
/** Per store and loved one: the batch still taking events, and the last write started. */
const queues = new WeakMap<Db, Map<string, { open?: Batch; tail: Promise<void> }>>();

/** Events for one loved one join the batch that has not started yet; a batch starts when the
 *  loved one's previous write has finished, and its callers return once their events are on the
 *  pages. So a burst of appends from one process is one compare-and-set per page at a time, not
 *  one per event racing each other. */
function enqueue(db: Db, lovedOneId: string, events: CareEventRecord[], maybeKnown: ReadonlySet<string>): Promise<void> {
  const perDb = queues.get(db) ?? queues.set(db, new Map()).get(db)!;
  const q = perDb.get(lovedOneId) ?? { tail: Promise.resolve() };
  const doubtful = events.filter((e) => maybeKnown.has(e._id)).map((e) => e._id);
  if (q.open) {
    q.open.events.push(...events);
    for (const id of doubtful) q.open.maybeKnown.add(id);
    return q.open.done;
  }
  const batch: Batch = { events: [...events], maybeKnown: new Set(doubtful), done: Promise.resolve() };
  batch.done = q.tail.then(() => {
    if (q.open === batch) delete q.open;
    return timelineOf(db, lovedOneId, batch.events[0]!.workspaceId).add(batch.events, batch.maybeKnown);
  });
  q.open = batch;
  const tail = batch.done.catch(() => undefined);
  q.tail = tail;
  perDb.set(lovedOneId, q);
  void tail.then(() => {
    if (q.tail === tail && !q.open) perDb.delete(lovedOneId);
  });
  return batch.done;
}

/** Take events off their pages (before the records go, so a purge repeated after a crash finds them). */
export async function removeFromTimelines(db: Db, events: readonly Pick<CareEventRecord, '_id' | 'lovedOneId' | 'occurredAt'>[]): Promise<void> {
  if (!events.length || !(await usesTimelinePages(db))) return;
  for (const [lovedOneId, list] of groupBy(events, (e) => e.lovedOneId)) await timelineOf(db, lovedOneId).remove(list);
}

/** Drop whole timelines (a loved one or a workspace removed). */
export async function dropTimelines(db: Db, lovedOneIds: Iterable<string>): Promise<void> {
  if (!(await usesTimelinePages(db))) return;
  for (const lovedOneId of lovedOneIds) {
    const name = timelineCollection(lovedOneId);
    listedMonths.get(db)?.delete(name);
    MonthChunks.forget(db, name);
    for (const collection of [name, settledCollection(lovedOneId)]) {
      await db
        .collection(collection)
        .drop()
        .catch((err: unknown) => {
          // NamespaceNotFound: never had pages, or dropped by an earlier run of the same purge.
          if ((err as { code?: unknown }).code !== 26) throw err;
        });
      await statesDropped(db, collection);
    }
  }
}

/** One loved one's events from its pages, newest first; `limit` of them at most. */
export function listTimeline(db: Db, lovedOneId: string, q: TimelineQuery): Promise<CareEventRecord[]> {
  return timelineOf(db, lovedOneId).list(q);
}

/** A small list kept per loved one beside its pages (the inbox's newest items), read by key. */
export function lovedOneList<T>(db: Db, lovedOneId: string, key: string, revive: (raw: unknown) => T) {
  const name = timelineCollection(lovedOneId);
  const list = keptList(db, name, key, revive);
  const born = async () => (await new KeyedStates<MonthList>(db, name, name).latest(LIST_KEY))?.state.born === true;
  return {
    read: list.read,
    /** `init` makes the first list of a loved one that had items before the lists existed. */
    update: (workspaceId: string, init: () => Promise<T[]>, change: (items: T[]) => T[] | null) =>
      list.update({ lovedOneId, workspaceId }, async () => ((await born()) ? [] : init()), change),
  };
}

/** Pages for loved ones that have none yet, written whole (imports, benchmarks): full chunks
 *  and each month's index, as version 1 of each key, one insert per loved one. */
export async function seedTimelines(db: Db, events: readonly CareEventRecord[]): Promise<void> {
  if (!(await usesTimelinePages(db))) return;
  const at = new Date();
  for (const [lovedOneId, list] of groupBy(events, (e) => e.lovedOneId)) {
    const tags = { lovedOneId, workspaceId: list[0]!.workspaceId };
    const byMonth = groupBy(list, (e) => monthOf(e.occurredAt));
    const docs: Record<string, unknown>[] = [];
    const put = (key: string, state: unknown) => docs.push({ _id: `${key}#1`, key, v: 1, state, at, ...tags }, { _id: key, v: 1, state, ...tags });
    put(LIST_KEY, { months: [...byMonth.keys()].sort().reverse() });
    const settled: object[] = [];
    for (const [month, monthEvents] of byMonth) {
      const seeded = seededMonth(month, monthEvents, tags);
      for (const { key, state } of seeded.open) put(key, state);
      settled.push(...seeded.settled);
    }
    await db.collection(timelineCollection(lovedOneId)).insertMany(docs as never[], { ordered: false });
    if (settled.length) await db.collection(settledCollection(lovedOneId)).insertMany(settled as never[], { ordered: false });
  }
}
