// Each loved one's care events as month pages read by key, on the embedded FerretDB only: what
// list_care_events and the care pages read there, so a read costs what one loved one's data costs.
//
// FerretDB v1 scans a collection for every query (an `_id` lookup stops at the first match) and
// decodes documents slowly, about 0.15 ms per stored event. So each loved one gets a collection of
// its own (`care_timeline_<lovedOneId>`), holding `months` (the months that have events, newest
// first) and one page per month (`<yyyy-mm>`: that month's events newest first, kept as one JSON
// string so a read decodes one value, not every field of every event), all kept by `KeyedStates`.
// `care_events` stays the record of each event; MongoDB reads it through its index instead.
import type { Db } from 'mongodb';
import { keptList, KeyedStates, ownCollection, statesDropped, type Tags } from './keyed.js';

export const CARE_EVENTS = 'care_events';

export interface CareEventRecord {
  _id: string;
  lovedOneId: string;
  workspaceId: string;
  source: 'partner' | 'inbox';
  institutionId?: string;
  eventType: string;
  occurredAt: Date;
  receivedAt: Date;
  payload: Record<string, unknown>;
  sourceEventId?: string;
  /** The partner's subject of a partner event: what the partner's purge deletes by. */
  subjectRef?: string;
}

interface MonthList {
  /** `yyyy-mm`, newest first. */
  months: string[];
  /** Started with the loved one: nothing about it predates the pages, so nothing needs a scan. */
  born?: true;
}
interface MonthPage {
  /** JSON of the month's events, newest first (occurredAt, then `_id`, descending). */
  events: string;
}

export interface TimelineQuery {
  since?: Date;
  until?: Date;
  types?: string[];
  limit: number;
  after?: { at: Date; id: string };
}

const TIMELINE_PREFIX = 'care_timeline_';
/** Month pages read at once: most listings end within the first few months. */
const READ_AHEAD = 3;
const LIST_KEY = 'months';

const monthOf = (d: Date): string => d.toISOString().slice(0, 7);

/** The one order of every listing: newest first, ties broken by id so pages never overlap. */
export function newerFirst(a: { occurredAt: Date; _id: string }, b: { occurredAt: Date; _id: string }): number {
  return b.occurredAt.getTime() - a.occurredAt.getTime() || (a._id < b._id ? 1 : a._id > b._id ? -1 : 0);
}

/** The collection of one loved one's pages; ids outside the safe alphabet are hashed. */
export const timelineCollection = (lovedOneId: string): string => ownCollection(TIMELINE_PREFIX, lovedOneId);

const encode = (events: readonly CareEventRecord[]): string => JSON.stringify(events);
const decode = (json: string): CareEventRecord[] =>
  (JSON.parse(json) as (Omit<CareEventRecord, 'occurredAt' | 'receivedAt'> & { occurredAt: string; receivedAt: string })[]).map((e) => ({ ...e, occurredAt: new Date(e.occurredAt), receivedAt: new Date(e.receivedAt) }));

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
  readonly pages: KeyedStates<MonthPage>;
  constructor(
    private readonly db: Db,
    readonly lovedOneId: string,
    readonly tags: Tags,
  ) {
    const name = timelineCollection(lovedOneId);
    this.lists = new KeyedStates<MonthList>(db, name, name);
    this.pages = new KeyedStates<MonthPage>(db, name, name);
  }

  /** The month list, built from `care_events` by one scan for a loved one whose events predate
   *  the pages (a loved one added since starts with an empty list). */
  async months(): Promise<string[]> {
    return (await this.lists.latest(LIST_KEY))?.state.months ?? (await this.lists.update(LIST_KEY, this.tags, () => this.build(), () => null)).months;
  }

  private async build(): Promise<MonthList> {
    const byMonth = groupByMonth(await this.db.collection<CareEventRecord>(CARE_EVENTS).find({ lovedOneId: this.lovedOneId }).toArray());
    for (const [month, events] of byMonth) await this.merge(month, events);
    return { months: [...byMonth.keys()].sort().reverse() };
  }

  /** Put events on one month's page, once per page however many events: a repeat changes nothing. */
  async merge(month: string, events: readonly CareEventRecord[]): Promise<void> {
    await this.pages.update(month, this.tags, async () => ({ events: '[]' }), (s) => {
      const current = decode(s.events);
      const known = new Set(current.map((e) => e._id));
      const fresh = events.filter((e) => !known.has(e._id));
      return fresh.length ? { events: encode([...current, ...fresh].sort(newerFirst)) } : null;
    });
  }

  async add(events: readonly CareEventRecord[]): Promise<void> {
    const byMonth = groupByMonth(events);
    const months = [...byMonth.keys()];
    await this.lists.update(LIST_KEY, this.tags, () => this.build(), (s) => (months.every((m) => s.months.includes(m)) ? null : { ...s, months: [...new Set([...s.months, ...months])].sort().reverse() }));
    await Promise.all(months.map((m) => this.merge(m, byMonth.get(m)!)));
  }

  async remove(events: readonly Pick<CareEventRecord, '_id' | 'occurredAt'>[]): Promise<void> {
    const byMonth = groupByMonth(events);
    for (const [month, gone] of byMonth) {
      const ids = new Set(gone.map((e) => e._id));
      if (!(await this.pages.latest(month))) continue;
      await this.pages.update(month, this.tags, async () => ({ events: '[]' }), (s) => {
        const current = decode(s.events);
        return current.some((e) => ids.has(e._id)) ? { events: encode(current.filter((e) => !ids.has(e._id))) } : null;
      });
    }
  }

  async list(q: TimelineQuery): Promise<CareEventRecord[]> {
    const upper = Math.min(q.until ? q.until.getTime() - 1 : Infinity, q.after ? q.after.at.getTime() : Infinity);
    const newest = Number.isFinite(upper) ? monthOf(new Date(upper)) : undefined;
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
    for (let i = 0; i < months.length && found.length < q.limit; i += READ_AHEAD) {
      const pages = await Promise.all(months.slice(i, i + READ_AHEAD).map((m) => this.pages.latest(m)));
      for (const page of pages) for (const e of page ? decode(page.state.events) : []) if (found.length < q.limit && wanted(e)) found.push(e);
    }
    return found;
  }
}

function groupByMonth<T extends { occurredAt: Date }>(events: readonly T[]): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const e of events) {
    const m = monthOf(e.occurredAt);
    const list = out.get(m);
    if (list) list.push(e);
    else out.set(m, [e]);
  }
  return out;
}

const timelineOf = (db: Db, lovedOneId: string, workspaceId = '') => new Timeline(db, lovedOneId, { lovedOneId, workspaceId });

/** Give a new loved one an empty month list, so its first event or read needs no scan. */
export async function startTimeline(db: Db, lovedOneId: string, workspaceId: string): Promise<void> {
  if (await usesTimelinePages(db)) await timelineOf(db, lovedOneId, workspaceId).lists.update(LIST_KEY, { lovedOneId, workspaceId }, async () => ({ months: [], born: true }), () => null);
}

/** Put stored events on their pages: per loved one, one list check and one write per month. */
export async function addToTimelines(db: Db, events: readonly CareEventRecord[]): Promise<void> {
  if (!events.length || !(await usesTimelinePages(db))) return;
  const byLovedOne = new Map<string, CareEventRecord[]>();
  for (const e of events) byLovedOne.set(e.lovedOneId, [...(byLovedOne.get(e.lovedOneId) ?? []), e]);
  await Promise.all([...byLovedOne].map(([lovedOneId, list]) => enqueue(db, lovedOneId, list)));
}

interface Batch {
  events: CareEventRecord[];
  done: Promise<void>;
}
/** Per store and loved one: the batch still taking events, and the last write started. */
const queues = new WeakMap<Db, Map<string, { open?: Batch; tail: Promise<void> }>>();

/** Events for one loved one join the batch that has not started yet; a batch starts when the
 *  loved one's previous write has finished, and its callers return once their events are on the
 *  pages. So a burst of appends from one process is one compare-and-set per page at a time, not
 *  one per event racing each other. */
function enqueue(db: Db, lovedOneId: string, events: CareEventRecord[]): Promise<void> {
  const perDb = queues.get(db) ?? queues.set(db, new Map()).get(db)!;
  const q = perDb.get(lovedOneId) ?? { tail: Promise.resolve() };
  if (q.open) {
    q.open.events.push(...events);
    return q.open.done;
  }
  const batch: Batch = { events: [...events], done: Promise.resolve() };
  batch.done = q.tail.then(() => {
    if (q.open === batch) delete q.open;
    return timelineOf(db, lovedOneId, batch.events[0]!.workspaceId).add(batch.events);
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
  const byLovedOne = new Map<string, typeof events>();
  for (const e of events) byLovedOne.set(e.lovedOneId, [...(byLovedOne.get(e.lovedOneId) ?? []), e]);
  for (const [lovedOneId, list] of byLovedOne) await timelineOf(db, lovedOneId).remove(list);
}

/** Drop whole timelines (a loved one or a workspace removed). */
export async function dropTimelines(db: Db, lovedOneIds: Iterable<string>): Promise<void> {
  if (!(await usesTimelinePages(db))) return;
  for (const lovedOneId of lovedOneIds) {
    await db
      .collection(timelineCollection(lovedOneId))
      .drop()
      .catch((err: unknown) => {
        // NamespaceNotFound: never had pages, or dropped by an earlier run of the same purge.
        if ((err as { code?: unknown }).code !== 26) throw err;
      });
    await statesDropped(db, timelineCollection(lovedOneId));
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

/** Pages for loved ones that have none yet, written whole (imports, benchmarks): what `add`
 *  would have made, as version 1 of each key, one insert per loved one. */
export async function seedTimelines(db: Db, events: readonly CareEventRecord[]): Promise<void> {
  if (!(await usesTimelinePages(db))) return;
  const byLovedOne = new Map<string, CareEventRecord[]>();
  for (const e of events) byLovedOne.set(e.lovedOneId, [...(byLovedOne.get(e.lovedOneId) ?? []), e]);
  const at = new Date();
  for (const [lovedOneId, list] of byLovedOne) {
    const tags = { lovedOneId, workspaceId: list[0]!.workspaceId };
    const byMonth = groupByMonth(list);
    const docs: Record<string, unknown>[] = [];
    const put = (key: string, state: unknown) => docs.push({ _id: `${key}#1`, key, v: 1, state, at, ...tags }, { _id: key, v: 1, state, ...tags });
    put(LIST_KEY, { months: [...byMonth.keys()].sort().reverse() });
    for (const [month, monthEvents] of byMonth) put(month, { events: encode([...monthEvents].sort(newerFirst)) });
    await db.collection(timelineCollection(lovedOneId)).insertMany(docs as never[], { ordered: false });
  }
}
