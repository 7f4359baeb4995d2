// The durable consumer that writes care events (worker role, NATS mode). Every message is
// acknowledged only after its care event is stored (or deliberately dropped), so a worker killed
// mid-stream leaves its messages to be redelivered; the event id as `_id` makes redelivery harmless.
import type { DurableMessage, DurableStreams } from '../bus/durable.js';
import type { Logger } from '../log.js';
import { consumerSpec, streamSpec, type IngestStream } from './stream.js';
import type { CareEventWriter, QueuedEvent } from './writer.js';

export interface IngestConsumer {
  stop(): Promise<void>;
}

export function startIngestConsumer(
  durable: DurableStreams,
  s: IngestStream,
  writer: CareEventWriter,
  log: Logger,
  opts: { concurrency: number; ackWaitMs: number },
): IngestConsumer {
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
    try {
      const outcome = await writer.write(e);
      m.ack();
      log.debug({ eventId: e.eventId, outcome, redelivered: m.redelivered }, 'care event written');
    } catch (err) {
      // Storage trouble: let the stream deliver it again shortly.
      log.warn({ err, eventId: e.eventId }, 'care event write failed; will be redelivered');
      m.nak(1_000);
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
