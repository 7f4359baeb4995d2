// The durable consumer that writes care events (worker role, NATS mode). Every message is
// acknowledged only after its care event is stored, deliberately dropped, or held in the dead-letter
// store, so a worker killed mid-stream leaves its messages to be redelivered; the event id as `_id`
// makes redelivery harmless. Messages taken together are written together: one read per binding
// and one unordered insert per batch; a batch the store refuses is written again one by one, so the
// refused event alone goes the dead-letter way.
import type { DurableMessage, DurableStreams } from '../bus/durable.js';
import type { Logger } from '../log.js';
import { errorClass, isTransientStoreError, type DeadLetters } from './deadLetters.js';
import { consumerSpec, streamSpec, type IngestLane, type IngestStream } from './stream.js';
import type { CareEventWriter, QueuedEvent } from './writer.js';
import { countDatabaseError } from '../bus/failures.js';
import { GroupCommit } from './fresh.js';

export interface IngestConsumer {
  stop(): Promise<void>;
}

/** 1, 2, 4, 8… s after the n-th delivery, at most 30 s. */
export const redeliveryDelayMs = (deliveryCount: number): number => Math.min(1_000 * 2 ** Math.max(0, deliveryCount - 1), 30_000);

/** Longest a batch that follows another waits for a full one (the end-to-end delay it may add). */
export const GATHER_MS = 100;

/** Urgent events written together at most: few, and written as they come, never gathered. */
export const URGENT_BATCH = 32;

export interface IngestConsumerOptions {
  /** Deliveries written together at most; twice as many are in flight in this process, so the
   *  next batch gathers while one is being written. */
  concurrency: number;
  /** Bytes of deliveries in flight at most (see ConsumeOptions.maxBytes). */
  maxBytes?: number;
  ackWaitMs: number;
  /** Deliveries after which a write the database refuses moves the event to the dead letters. */
  maxDeliveries: number;
}

interface Delivery {
  m: DurableMessage;
  e: QueuedEvent;
}

export function startIngestConsumer(
  durable: DurableStreams,
  s: IngestStream,
  writer: CareEventWriter,
  deadLetters: DeadLetters,
  log: Logger,
  opts: IngestConsumerOptions,
): IngestConsumer {
  /** Each message acknowledged only once its batch is stored; none when the batch failed. */
  const writeBatch = async (batch: Delivery[]): Promise<void[]> => {
    const done = batch.map(() => undefined);
    if (batch.length === 1) {
      await handleOne(batch[0]!.m, batch[0]!.e);
      return done;
    }
    try {
      const outcomes = await writer.writeMany(batch.map((d) => d.e));
      batch.forEach(({ m, e }, i) => {
        m.ack();
        log.debug({ eventId: e.eventId, outcome: outcomes[i], redelivered: m.redelivered }, 'care event written');
      });
    } catch (err) {
      countDatabaseError(err);
      if (isTransientStoreError(err)) {
        for (const { m, e } of batch) {
          log.warn(
            { eventId: e.eventId, institutionId: e.institutionId, attempt: m.deliveryCount, errorClass: errorClass(err) },
            'care event write failed; will be redelivered',
          );
          m.nak(redeliveryDelayMs(m.deliveryCount));
        }
        return done;
      }
      // Refused, but which event? One by one, each under the rules below.
      await Promise.all(batch.map(({ m, e }) => handleOne(m, e)));
    }
    return done;
  };
  // A batch is what arrived while the one before it was being written, at most `concurrency`, half
  // of what may be in flight, so the next batch gathers while one is written (were a batch all
  // that may be in flight, every full one would be followed by one of a single event, which costs a
  // timeline write of its own). Under load it waits up to GATHER_MS for a full one: a loved one's
  // timeline write costs per batch and per chunk sealed, not per event, so fuller batches leave the
  // store's CPU to the 202s; an event arriving at a quiet consumer is written at once.
  const routine = new GroupCommit<Delivery, void>(writeBatch, opts.concurrency, { atLeast: opts.concurrency, waitMs: GATHER_MS });
  // The urgent lane's events (those that may raise an alert) are written beside the routine lane's
  // batches, not after them: whatever the routine backlog, an alert waits for one small write.
  const urgentBatch = Math.min(URGENT_BATCH, opts.concurrency);
  const urgent = new GroupCommit<Delivery, void>(writeBatch, urgentBatch);

  const handler =
    (batches: GroupCommit<Delivery, void>) =>
    async (m: DurableMessage): Promise<void> => {
      let e: QueuedEvent;
      try {
        e = m.json() as QueuedEvent;
        if (e?.v !== 1 || typeof e.eventId !== 'string') throw new Error('not a v1 queued event');
      } catch (err) {
        log.error({ err, seq: m.seq }, 'ingest message unreadable; terminated');
        m.term();
        return;
      }
      await batches.submit({ m, e });
    };

  const handleOne = async (m: DurableMessage, e: QueuedEvent): Promise<void> => {
    const ids = { eventId: e.eventId, institutionId: e.institutionId, attempt: m.deliveryCount };
    try {
      const outcome = await writer.write(e);
      m.ack();
      log.debug({ eventId: e.eventId, outcome, redelivered: m.redelivered }, 'care event written');
      return;
    } catch (err) {
      countDatabaseError(err);
      // The error's text may quote the payload: only its class is logged.
      if (isTransientStoreError(err) || m.deliveryCount < opts.maxDeliveries) {
        log.warn({ ...ids, errorClass: errorClass(err) }, 'care event write failed; will be redelivered');
        m.nak(redeliveryDelayMs(m.deliveryCount));
        return;
      }
      // Refused on every attempt: held as accepted, then, and only then, acknowledged. JetStream's
      // own max_deliver stays unlimited on purpose: past it the server stops delivering a message
      // and keeps no record anyone reads, which is how an accepted event goes missing.
      try {
        await deadLetters.put(e, err, m.deliveryCount, 'consumer');
      } catch (dlErr) {
        log.warn({ ...ids, errorClass: errorClass(dlErr) }, 'dead letter could not be written; will be redelivered');
        m.nak(redeliveryDelayMs(m.deliveryCount));
        return;
      }
      m.ack();
      log.error({ ...ids, errorClass: errorClass(err) }, 'ingest event dead-lettered');
    }
  };

  const consume = (lane: IngestLane, batches: GroupCommit<Delivery, void>, inFlight: number) =>
    durable.consume(streamSpec(s), consumerSpec(lane, opts.ackWaitMs), handler(batches), {
      concurrency: inFlight,
      ...(opts.maxBytes ? { maxBytes: opts.maxBytes } : {}),
      onStart: () => log.info({ stream: s.stream, durable: lane.durable }, 'ingest consumer started'),
      onError: (err, failures) => {
        // Said once (JetStream may be off on this server); then quietly retried.
        if (failures === 1) log.warn({ err, stream: s.stream, durable: lane.durable }, 'ingest consumer cannot run (is JetStream enabled?); retrying');
        else log.debug({ err, stream: s.stream, durable: lane.durable }, 'ingest consumer still waiting');
      },
    });
  const lanes = [consume({ subject: s.subject, durable: s.durable }, routine, opts.concurrency * 2), consume(s.urgent, urgent, urgentBatch * 2)];
  return { stop: async () => void (await Promise.all(lanes.map((l) => l.stop()))) };
}
