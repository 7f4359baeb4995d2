// A loved one's care events: a timeline of the port (src/store/timeline), whose records collection
// `care_events` is the record of every event (its `_id` de-duplicates a redelivery).
import type { Db } from 'mongodb';
import type { Stream, TimelineQuery, Timelines } from '../store/timeline/port.js';

/** Who wrote a family entry and how: in the app, or through their assistant (the OAuth app's name
 *  or the API key's label, from the verified credential, never from the arguments). */
export interface EntryAuthor {
  uid: string;
  /** The display name when written; a former member's entries are shown as "a former member". */
  name: string;
  via: 'app' | 'assistant';
  client?: string;
  /** Set when read back after the author deleted their account: shown as "a former member". */
  former?: true;
}

export interface PortalProvenance {
  portal: string;
  resourceType: string;
  id: string;
  versionId: string;
}

export interface PlanProvenance {
  plan: 'appointment' | 'task';
  id: string;
  /** The appointment's `sequence` when filed; a task's done event is its only version (0). */
  version: number;
}

/** The provenance of a record a portal sent (the others are the family's plans). */
export const portalProvenance = (e: { provenance?: PortalProvenance | PlanProvenance }): PortalProvenance | undefined =>
  e.provenance && 'portal' in e.provenance ? e.provenance : undefined;

export interface CareEventRecord {
  _id: string;
  lovedOneId: string;
  workspaceId: string;
  /** `family`: an entry a member wrote (src/family/entries.ts); `portal`: a health-system record (src/portal); `partner` and `inbox` stay as sent. */
  source: 'partner' | 'inbox' | 'family' | 'portal';
  /** Who wrote a family entry, and how. */
  author?: EntryAuthor;
  institutionId?: string;
  eventType: string;
  occurredAt: Date;
  receivedAt: Date;
  payload: Record<string, unknown>;
  sourceEventId?: string;
  /** Where the event came from: a portal record (the portal's FHIR base URL, the resource and its
   *  version), or an appointment or task of the family's plans and the version of it filed. */
  provenance?: PortalProvenance | PlanProvenance;
  /** The partner's subject of a partner event: what the partner's purge deletes by. */
  subjectRef?: string;
  /** The event this one corrects or withdraws. */
  supersedes?: string;
  /** The event that corrected or withdrew this one: it is no longer listed. */
  supersededBy?: string;
}

export const CARE_EVENTS = 'care_events';
export const CARE_EVENT_STREAM: Stream<CareEventRecord> = { name: 'care', records: CARE_EVENTS, owner: 'lovedOneId', time: 'occurredAt', type: 'eventType' };

/** `since` inclusive, `until` exclusive; a `cursor` from another query is refused (CursorRefused). */
export type CareEventQuery = TimelineQuery;

export interface CareEventPage {
  events: CareEventRecord[];
  /** Present when more events match: pass it back as `cursor`, with the same query. */
  nextCursor?: string;
}

const careEvents = (timelines: Timelines) => timelines.of(CARE_EVENT_STREAM);

/** Store a batch of care events, each under its `_id`, in any order. Events already stored (a
 *  redelivery, or another worker's copy of the same event) are reported, not failed. Any other
 *  refusal throws: a caller retries the whole batch, which the `_id`s make harmless. */
export function appendCareEvents(timelines: Timelines, events: readonly CareEventRecord[]): Promise<{ stored: string[]; duplicates: string[] }> {
  return careEvents(timelines).append(events);
}

/** Whether an event with this id is stored (the dead-letter replay waits for it). */
export async function careEventStored(db: Db, eventId: string): Promise<boolean> {
  return (await db.collection<CareEventRecord>(CARE_EVENTS).findOne({ _id: eventId }, { projection: { _id: 1 } })) !== null;
}

/** Delete every care event of one loved one (removing the loved one); the number deleted. */
export function deleteLovedOneCareEvents(timelines: Timelines, lovedOneId: string): Promise<number> {
  return careEvents(timelines).remove(lovedOneId);
}

/** How many care events a loved one has: what removing them would delete. */
export function countLovedOneCareEvents(timelines: Timelines, lovedOneId: string): Promise<number> {
  return careEvents(timelines).count(lovedOneId);
}

/** Delete what one partner sent about one of its subjects; the number deleted. */
export function purgePartnerCareEvents(timelines: Timelines, institutionId: string, subjectRef: string): Promise<number> {
  return careEvents(timelines).purge({ institutionId, subjectRef });
}

/** Delete one partner event by its id (a write that a purge running beside it missed). */
export async function withdrawPartnerCareEvent(timelines: Timelines, eventId: string): Promise<void> {
  await careEvents(timelines).purge({ _id: eventId, source: 'partner' });
}

/** Every care event of a workspace's loved ones (those still known, and any its events name). */
export function purgeWorkspaceCareEvents(timelines: Timelines, workspaceId: string, lovedOneIds: readonly string[]): Promise<void> {
  return careEvents(timelines).removeWhere({ workspaceId }, lovedOneIds);
}

/** One page of a loved one's care events, newest first (occurredAt, then `_id`); the cursor is
 *  the last position returned, so a page never repeats or skips an event while others arrive. */
export async function listCareEvents(timelines: Timelines, lovedOneId: string, q: CareEventQuery): Promise<CareEventPage> {
  const { records, nextCursor } = await careEvents(timelines).list(lovedOneId, q);
  return nextCursor ? { events: records, nextCursor } : { events: records };
}
