// The ingest's dead-letter store: accepted events the database kept refusing, held exactly as
// accepted until an operator replays or drops them (`carecircle deadletters`), and counted.
import type { Collection, Db, IndexDescription } from 'mongodb';
import { metrics } from '../metrics/index.js';
import type { QueuedEvent } from './writer.js';

export const INGEST_DEAD_LETTERS = 'ingest_dead_letters';
export const DEAD_LETTER_INDEXES: IndexDescription[] = [{ key: { deadLetteredAt: -1 }, name: 'by_time' }];

export interface DeadLetterRecord {
  /** The event id: a second dead-lettering of the same event (a redelivery) updates this one. */
  _id: string;
  institutionId: string;
  subjectRef: string;
  eventType: string;
  /**
   * The queued event as JSON text, exactly as accepted. Text, because the store refused the event
   * as a document (depth, key names…), and would refuse it here too.
   */
  event: string;
  error: { class: string; message: string };
  /** Deliveries to the writer, the last one included. */
  attempts: number;
  /** Where it failed: the stream consumer, or the write before the 202 (embedded run). */
  origin: 'consumer' | 'accept';
  receivedAt: Date;
  firstDeadLetteredAt: Date;
  deadLetteredAt: Date;
}

/** `MongoServerError 2`: the error's class and server code, never its message (it may quote the payload). */
export function errorClass(err: unknown): string {
  if (!(err instanceof Error)) return typeof err;
  const code = (err as { code?: unknown }).code;
  return typeof code === 'number' || typeof code === 'string' ? `${err.name} ${code}` : err.name;
}

const TRANSIENT_NAMES = new Set([
  'MongoNetworkError',
  'MongoNetworkTimeoutError',
  'MongoServerSelectionError',
  'MongoNotConnectedError',
  'MongoTopologyClosedError',
  'MongoPoolClearedError',
  'MongoServerClosedError',
]);

/**
 * The database could not be reached or asked for a retry: that says nothing about the event, so it
 * is retried until the database is back and never dead-lettered.
 */
export function isTransientStoreError(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  if (TRANSIENT_NAMES.has(err.name)) return true;
  const labels = err as { hasErrorLabel?: (l: string) => boolean };
  return (
    typeof labels.hasErrorLabel === 'function' &&
    (labels.hasErrorLabel('RetryableWriteError') || labels.hasErrorLabel('TransientTransactionError') || labels.hasErrorLabel('ResetPool'))
  );
}

let deadLettered = 0;
const listeners = new Set<(r: DeadLetterRecord) => void>();

/** Dead letters written by this process since it started (for the metrics endpoint). */
export const deadLetterCount = (): number => deadLettered;

/** Called once per dead letter written by this process; returns the unsubscribe. */
export function onDeadLetter(listener: (r: DeadLetterRecord) => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

const MESSAGE_CHARS = 2_000;

export class DeadLetters {
  readonly rows: Collection<DeadLetterRecord>;

  constructor(db: Db) {
    this.rows = db.collection(INGEST_DEAD_LETTERS);
  }

  /** Resolves once stored; only then may the event leave the stream. Idempotent per event id. */
  async put(e: QueuedEvent, err: unknown, attempts: number, origin: DeadLetterRecord['origin'], now = new Date()): Promise<DeadLetterRecord> {
    const error = { class: errorClass(err), message: (err instanceof Error ? err.message : String(err)).slice(0, MESSAGE_CHARS) };
    const first = {
      institutionId: e.institutionId,
      subjectRef: e.subjectRef,
      eventType: e.eventType,
      event: JSON.stringify(e),
      origin,
      receivedAt: new Date(e.receivedAt),
      firstDeadLetteredAt: now,
    };
    await this.rows.updateOne({ _id: e.eventId }, { $setOnInsert: first, $set: { error, attempts, deadLetteredAt: now } }, { upsert: true });
    const record: DeadLetterRecord = { _id: e.eventId, ...first, error, attempts, deadLetteredAt: now };
    deadLettered++;
    metrics.ingestDeadLettered.inc();
    for (const l of listeners) l(record);
    return record;
  }

  list(limit = 100): Promise<DeadLetterRecord[]> {
    return this.rows.find().sort({ deadLetteredAt: -1, _id: 1 }).limit(limit).toArray();
  }

  get(id: string): Promise<DeadLetterRecord | null> {
    return this.rows.findOne({ _id: id });
  }

  /** True when it was there. */
  async remove(id: string): Promise<boolean> {
    return (await this.rows.deleteOne({ _id: id })).deletedCount === 1;
  }
}

/** The event a dead letter holds, as it was queued. */
export const queuedEventOf = (r: DeadLetterRecord): QueuedEvent => JSON.parse(r.event) as QueuedEvent;
