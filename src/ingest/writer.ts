// Turning accepted events into the family's care events, at most once per event id, one at a time
// or in batches. Runs in the JetStream consumer (NATS mode) or from the requests (embedded mode).
import { appendCareEvents, purgePartnerCareEvents, withdrawPartnerCareEvent, type CareEventRecord } from '../family/records.js';
import type { Timelines } from '../store/timeline/port.js';
import type { Binding, FamilyShares } from './familyShare.js';
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
    private readonly timelines: Timelines,
    private readonly shares: FamilyShares,
  ) {}

  /** The care event to store, or null when the event stops here. */
  private static recordOf(e: QueuedEvent, binding: Binding | null): PartnerCareEvent | null {
    // Family-share turned off, re-bound elsewhere, or purged since acceptance: the event stops here.
    if (!binding || binding.link.linkId !== e.linkId) return null;
    if (binding.purgedAt && Date.parse(e.receivedAt) <= Date.parse(binding.purgedAt)) return null;
    return {
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
  }

  async write(e: QueuedEvent): Promise<WriteOutcome> {
    const event = CareEventWriter.recordOf(e, await this.shares.currentBinding(e.institutionId, e.subjectRef));
    if (!event) return counted('dropped');
    // The event id is the `_id`: a redelivery after a crash finds it stored and changes nothing.
    const { duplicates } = await appendCareEvents(this.timelines, [event]);
    if (!duplicates.length && (await this.takenBack([event])).size) return counted('dropped');
    return counted(duplicates.length ? 'already_stored' : 'stored');
  }

  /**
   * A purge that returned between this write's binding read and its append has already deleted
   * what it found, and not these. The binding is read again after the append (from memory: every
   * binding change reaches each process before it returns), and what it now covers is deleted
   * here. Either this read sees the purge, or the append finished before the purge began and the
   * purge deleted it. The ids taken back.
   */
  private async takenBack(stored: readonly PartnerCareEvent[]): Promise<Set<string>> {
    const taken = new Set<string>();
    for (const r of stored) {
      const binding = await this.shares.currentBinding(r.institutionId!, r.subjectRef);
      if (!binding?.purgedAt || r.receivedAt.getTime() > Date.parse(binding.purgedAt)) continue;
      await withdrawPartnerCareEvent(this.timelines, r._id);
      taken.add(r._id);
    }
    return taken;
  }

  /**
   * `write` for a batch: each binding read once (freshly, after the events arrived), one unordered
   * insert. Outcomes in the order given. Throws when the store refuses any event for another reason
   * than its id: the caller then writes them one by one to learn which, which the ids make harmless.
   */
  async writeMany(events: QueuedEvent[]): Promise<WriteOutcome[]> {
    const bindings = await Promise.all(events.map((e) => this.shares.currentBinding(e.institutionId, e.subjectRef)));
    const records = events.map((e, i) => CareEventWriter.recordOf(e, bindings[i]!));
    const { duplicates } = await appendCareEvents(
      this.timelines,
      records.filter((r): r is PartnerCareEvent => r !== null),
    );
    const taken = await this.takenBack(records.filter((r): r is PartnerCareEvent => r !== null && !duplicates.includes(r._id)));
    // The same id twice in one batch (a redelivery beside the original): one stored, one duplicate.
    const left = new Map<string, number>();
    for (const id of duplicates) left.set(id, (left.get(id) ?? 0) + 1);
    return records.map((r) => {
      if (!r || taken.has(r._id)) return counted('dropped');
      const n = left.get(r._id) ?? 0;
      if (n === 0) return counted('stored');
      left.set(r._id, n - 1);
      return counted('already_stored');
    });
  }

  async purge(institutionId: string, subjectRef: string): Promise<number> {
    return purgePartnerCareEvents(this.timelines, institutionId, subjectRef);
  }
}
