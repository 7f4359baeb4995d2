// The durable JetStream consumer that writes care events (worker role, NATS mode). Every message is
// acknowledged only after its care event is stored (or deliberately dropped), so a worker killed
// mid-stream leaves its messages to be redelivered; the event id as `_id` makes redelivery harmless.
import { setTimeout as sleep } from 'node:timers/promises';
import type { ConsumerMessages, JsMsg, NatsConnection } from 'nats';
import type { Logger } from '../log.js';
import { Semaphore } from '../worker/runtime.js';
import { ensureIngestStream, type IngestStream } from './stream.js';
import type { CareEventWriter, QueuedEvent } from './writer.js';

export interface IngestConsumer {
  stop(): Promise<void>;
}

export function startIngestConsumer(
  nc: NatsConnection,
  s: IngestStream,
  writer: CareEventWriter,
  log: Logger,
  opts: { concurrency: number; ackWaitMs: number },
): IngestConsumer {
  let stopped = false;
  let messages: ConsumerMessages | undefined;
  const stopping = new AbortController();
  const pause = (ms: number) => sleep(ms, undefined, { signal: stopping.signal }).catch(() => undefined);
  const gate = new Semaphore(opts.concurrency);
  const inflight = new Set<Promise<void>>();

  const handle = async (m: JsMsg): Promise<void> => {
    let e: QueuedEvent;
    try {
      e = JSON.parse(Buffer.from(m.data).toString('utf8')) as QueuedEvent;
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
      // Storage trouble: let JetStream deliver it again shortly.
      log.warn({ err, eventId: e.eventId }, 'care event write failed; will be redelivered');
      m.nak(1_000);
    }
  };

  const run = async () => {
    let backoff = 250;
    let failures = 0;
    while (!stopped) {
      try {
        await ensureIngestStream(nc, s, opts.ackWaitMs);
        const consumer = await nc.jetstream().consumers.get(s.stream, s.durable);
        messages = await consumer.consume({ max_messages: opts.concurrency * 2 });
        log.info({ stream: s.stream, durable: s.durable }, 'ingest consumer started');
        backoff = 250;
        failures = 0;
        for await (const m of messages) {
          if (stopped) break;
          // Wait for a free slot before taking the next message: at most `concurrency` are unacknowledged here.
          await new Promise<void>((acquired) => {
            const done = gate.run(() => {
              acquired();
              return handle(m);
            });
            inflight.add(done);
            void done.finally(() => inflight.delete(done));
          });
        }
        if (!stopped) await pause(backoff);
      } catch (err) {
        if (stopped) break;
        // Said once (JetStream may be off on this server); then quietly retried.
        if (failures++ === 0) log.warn({ err, stream: s.stream }, 'ingest consumer cannot run (is JetStream enabled?); retrying');
        else log.debug({ err, stream: s.stream }, 'ingest consumer still waiting');
        await pause(backoff);
        backoff = Math.min(backoff * 2, 30_000);
      }
    }
  };
  const running = run();

  return {
    stop: async () => {
      stopped = true;
      stopping.abort();
      await messages?.close().catch(() => undefined);
      await running;
      await Promise.allSettled([...inflight]);
    },
  };
}
