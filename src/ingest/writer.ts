// Turning an accepted event into the family's care event, at most once per event id. Runs in the
// JetStream consumer (NATS mode) or straight from the request (embedded mode).
import type { Db } from 'mongodb';
import { isDuplicateKey } from '../store/errors.js';
import { appendCareEvent, purgePartnerCareEvents, type CareEventRecord } from '../family/records.js';
import type { FamilyShares } from './familyShare.js';
import { metrics } from '../metrics/index.js';

/** An accepted event as it travels to the writer (JetStream message body, JSON). */
export interface QueuedEvent {
  v: 1;
  eventId: string;
  institutionId: string;
  subjectRef: string;
  eventType: string;
  occurredAt: string;
  /** First receipt of this event (a duplicate that completes it keeps this instant). */
  receivedAt: string;
  payload: Record<string, unknown>;
  sourceEventId?: string;
  /** The binding the event was accepted under: it is stored only if that binding still holds. */
  linkId: string;
}

/** A partner care event: the DESIGN record, always with the partner's subject, for purges. */
export type PartnerCareEvent = CareEventRecord & { subjectRef: string };

export type WriteOutcome = 'stored' | 'already_stored' | 'dropped';

function counted(outcome: WriteOutcome): WriteOutcome {
  if (outcome === 'stored') metrics.ingestStored.inc();
  else metrics.ingestNotStored.inc({ reason: outcome });
  return outcome;
}

export class CareEventWriter {
  constructor(
    private readonly db: Db,
    private readonly shares: FamilyShares,
  ) {}

  async write(e: QueuedEvent): Promise<WriteOutcome> {
    // Family-share turned off, re-bound elsewhere, or purged since acceptance: the event stops here.
    const binding = await this.shares.binding(e.institutionId, e.subjectRef);
    if (!binding || binding.link.linkId !== e.linkId) return counted('dropped');
    if (binding.purgedAt && Date.parse(e.receivedAt) <= Date.parse(binding.purgedAt)) return counted('dropped');
    const event: PartnerCareEvent = {
      _id: e.eventId,
      lovedOneId: binding.link.lovedOneId,
      workspaceId: binding.link.workspaceId,
      source: 'partner',
      institutionId: e.institutionId,
      subjectRef: e.subjectRef,
      eventType: e.eventType,
      occurredAt: new Date(e.occurredAt),
      receivedAt: new Date(e.receivedAt),
      payload: e.payload,
      ...(e.sourceEventId ? { sourceEventId: e.sourceEventId } : {}),
    };
    try {
      await appendCareEvent(this.db, event);
      return counted('stored');
    } catch (err) {
      // The event id is the `_id`: a redelivery after a crash finds it stored and changes nothing.
      if (isDuplicateKey(err)) return counted('already_stored');
      throw err;
    }
  }

  async purge(institutionId: string, subjectRef: string): Promise<number> {
    return purgePartnerCareEvents(this.db, institutionId, subjectRef);
  }
}
