// The durable consumer that writes care events (worker role, NATS mode). Every message is
// acknowledged only after its care event is stored, deliberately dropped, or held in the dead-letter
// store, so a worker killed mid-stream leaves its messages to be redelivered; the event id as `_id`
// makes redelivery harmless.
import type { DurableMessage, DurableStreams } from '../bus/durable.js';
import type { Logger } from '../log.js';
import { errorClass, isTransientStoreError, type DeadLetters } from './deadLetters.js';
import { consumerSpec, streamSpec, type IngestStream } from './stream.js';
import type { CareEventWriter, QueuedEvent } from './writer.js';
import { countDatabaseError } from '../bus/failures.js';

export interface IngestConsumer {
  stop(): Promise<void>;
}

/** 1, 2, 4, 8… s after the n-th delivery, at most 30 s. */
export const redeliveryDelayMs = (deliveryCount: number): number => Math.min(1_000 * 2 ** Math.max(0, deliveryCount - 1), 30_000);

export interface IngestConsumerOptions {
  concurrency: number;
  ackWaitMs: number;
  /** Deliveries after which a write the database refuses moves the event to the dead letters. */
  maxDeliveries: number;
}

export function startIngestConsumer(durable: DurableStreams, s: IngestStream, writer: CareEventWriter, deadLetters: DeadLetters, log: Logger, opts: IngestConsumerOptions): IngestConsumer {
  const handle = async (m: DurableMessage): Promise<void> => {
    let e: QueuedEvent;
    try {
      e = m.json() as QueuedEvent;
      if (e?.v !== 1 || typeof e.eventId !== 'string') throw new Error('not a v1 queued event');
    } catch (err) {
      log.error({ err, seq: m.seq }, 'ingest message unreadable; terminated');
      m.term();
      return;
    }
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

  return durable.consume(streamSpec(s), consumerSpec(s, opts.ackWaitMs), handle, {
    concurrency: opts.concurrency,
    onStart: () => log.info({ stream: s.stream, durable: s.durable }, 'ingest consumer started'),
    onError: (err, failures) => {
      // Said once (JetStream may be off on this server); then quietly retried.
      if (failures === 1) log.warn({ err, stream: s.stream }, 'ingest consumer cannot run (is JetStream enabled?); retrying');
      else log.debug({ err, stream: s.stream }, 'ingest consumer still waiting');
    },
  });
}
