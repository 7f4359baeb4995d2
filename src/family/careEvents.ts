// Care-event storage: `care_events` is the record of every event (its `_id` de-duplicates a
// redelivery; purges find events by field there), and one loved one's listing is read from its
// month pages on the embedded FerretDB (./timeline.ts) or through the index on MongoDB.
import type { Collection, Db } from 'mongodb';
import { duplicateIndexes, isDuplicateKey } from '../store/errors.js';
import { addToTimelines, CARE_EVENTS, dropTimelines, listTimeline, removeFromTimelines, seedTimelines, usesTimelinePages, type CareEventRecord } from './timeline.js';

export type { CareEventRecord } from './timeline.js';

export interface CareEventQuery {
  /** Events at or after this instant. */
  since?: Date;
  /** Events before this instant. */
  until?: Date;
  /** Only these event types (any string: partners may send types this version does not know). */
  types?: string[];
  limit: number;
  /** Where the previous page ended (its `nextCursor`); one that is not a cursor starts from the newest. */
  cursor?: string;
}

export interface CareEventPage {
  events: CareEventRecord[];
  /** Present when more events match: pass it back as `cursor` for the next page. */
  nextCursor?: string;
}

const careEventsIn = (db: Db): Collection<CareEventRecord> => db.collection(CARE_EVENTS);

/** The position a cursor holds, or null when it is not a cursor a listing returned. */
export function readCareEventCursor(cursor: string): { at: Date; id: string } | null {
  try {
    const [at, id] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown[];
    const when = typeof at === 'string' ? new Date(at) : null;
    return when && !Number.isNaN(when.getTime()) && typeof id === 'string' && id.length > 0 ? { at: when, id } : null;
  } catch {
    return null;
  }
}

const cursorAt = (e: CareEventRecord): string => Buffer.from(JSON.stringify([e.occurredAt.toISOString(), e._id])).toString('base64url');

/** Store a batch of care events, each under its `_id`, in any order. Events already stored (a
 *  redelivery, or another worker's copy of the same event) are reported, not failed, and still
 *  put on their pages, so a redelivery after a crash between the two writes completes the
 *  first. Any other refusal throws and says nothing about the rest: a caller retries the whole
 *  batch, which the `_id`s make harmless. */
export async function appendCareEvents(db: Db, events: CareEventRecord[]): Promise<{ stored: string[]; duplicates: string[] }> {
  if (events.length === 0) return { stored: [], duplicates: [] };
  let result: { stored: string[]; duplicates: string[] };
  try {
    await careEventsIn(db).insertMany(events, { ordered: false });
    result = { stored: events.map((e) => e._id), duplicates: [] };
  } catch (err) {
    const refused = duplicateIndexes(err);
    if (!refused) throw err;
    const dup = new Set(refused);
    result = { stored: events.filter((_, i) => !dup.has(i)).map((e) => e._id), duplicates: events.filter((_, i) => dup.has(i)).map((e) => e._id) };
  }
  await addToTimelines(db, events, new Set(result.duplicates));
  return result;
}

/** Store one care event under its `_id`. A second append of the same `_id` fails with a
 *  duplicate-key error, which a writer that delivers at least once takes as "already stored". */
export async function appendCareEvent(db: Db, event: CareEventRecord): Promise<void> {
  let duplicate: unknown;
  try {
    await careEventsIn(db).insertOne(event);
  } catch (err) {
    if (!isDuplicateKey(err)) throw err;
    duplicate = err;
  }
  await addToTimelines(db, [event], duplicate ? new Set([event._id]) : undefined);
  if (duplicate) throw duplicate;
}

/** Events of loved ones that have none stored yet, loaded in bulk (imports, benchmarks): the
 *  records, then each loved one's pages written whole. */
export async function loadCareEventsInBulk(db: Db, events: CareEventRecord[]): Promise<void> {
  if (!events.length) return;
  await careEventsIn(db).insertMany(events, { ordered: false });
  await seedTimelines(db, events);
}

/** Whether an event with this id is stored (the dead-letter replay waits for it). */
export async function careEventStored(db: Db, eventId: string): Promise<boolean> {
  return (await careEventsIn(db).findOne({ _id: eventId }, { projection: { _id: 1 } })) !== null;
}

/** Delete every care event of one loved one (removing the loved one); the number deleted. */
export async function deleteLovedOneCareEvents(db: Db, workspaceId: string, lovedOneId: string): Promise<number> {
  await dropTimelines(db, [lovedOneId]);
  return (await careEventsIn(db).deleteMany({ workspaceId, lovedOneId })).deletedCount;
}

/** Delete what one partner sent about one of its subjects; the number deleted. Found by a scan
 *  of `care_events` (purges are rare) and taken off the pages before the records go. */
export async function purgePartnerCareEvents(db: Db, institutionId: string, subjectRef: string): Promise<number> {
  if (await usesTimelinePages(db)) {
    const events = await careEventsIn(db).find({ institutionId, subjectRef }, { projection: { _id: 1, lovedOneId: 1, occurredAt: 1 } }).toArray();
    await removeFromTimelines(db, events);
  }
  return (await careEventsIn(db).deleteMany({ institutionId, subjectRef })).deletedCount;
}

/** Every care event of a workspace's loved ones (the ids of those still known, and any whose
 *  events are still stored, so a purge repeated after a crash still finds their pages). */
export async function purgeWorkspaceCareEvents(db: Db, workspaceId: string, lovedOneIds: readonly string[]): Promise<void> {
  if (await usesTimelinePages(db)) {
    const stored = await careEventsIn(db).distinct('lovedOneId', { workspaceId });
    await dropTimelines(db, new Set([...lovedOneIds, ...stored]));
  }
  await careEventsIn(db).deleteMany({ workspaceId });
}

/** One page of a loved one's care events, newest first (occurredAt, then `_id`); the cursor is
 *  the last position returned, so a page never repeats or skips an event while others arrive. */
export async function listCareEvents(db: Db, lovedOneId: string, q: CareEventQuery): Promise<CareEventPage> {
  const after = q.cursor ? readCareEventCursor(q.cursor) : null;
  let found: CareEventRecord[];
  if (await usesTimelinePages(db)) {
    found = await listTimeline(db, lovedOneId, { ...q, limit: q.limit + 1, ...(after ? { after } : {}) });
  } else {
    const and: Record<string, unknown>[] = [{ lovedOneId }];
    if (q.since) and.push({ occurredAt: { $gte: q.since } });
    if (q.until) and.push({ occurredAt: { $lt: q.until } });
    if (q.types?.length) and.push({ eventType: { $in: q.types } });
    if (after) and.push({ $or: [{ occurredAt: { $lt: after.at } }, { occurredAt: after.at, _id: { $lt: after.id } }] });
    found = await careEventsIn(db).find({ $and: and }).sort({ occurredAt: -1, _id: -1 }).limit(q.limit + 1).toArray();
  }
  const events = found.slice(0, q.limit);
  const last = events[events.length - 1];
  return found.length > q.limit && last ? { events, nextCursor: cursorAt(last) } : { events };
}
