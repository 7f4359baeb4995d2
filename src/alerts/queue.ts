// The outbox's work queue on a NATS deployment: each delivery's id is published to a JetStream work
// queue as it is inserted, and a durable consumer on the workers sends it at once. The store stays
// the record of each delivery's state (taken, sent, dead): a message names a delivery, and the
// sender takes it in the store first, so a redelivered message or the cron's own pass over the
// outbox never sends a delivery twice. A publish that fails loses nothing: the cron's pass sends
// what is pending.
import type { ConsumerSpec, DurableMessage, DurableStreams, RunningConsumer, StreamSpec } from '../bus/durable.js';
import { onFirstUse } from '../bus/onFirstUse.js';
import { subjects } from '../bus/subjects.js';
import type { Logger } from '../log.js';
import { GroupCommit } from '../ingest/fresh.js';

export interface DeliveryQueue {
  publish(deliveryId: string): Promise<void>;
}

/** Stream names cannot hold dots: the namespace's dots become underscores. */
export function alertStream(namespace: string): { stream: StreamSpec; consumer: ConsumerSpec } {
  const subject = subjects(namespace).alertDeliveries;
  const name = `CC_ALERTS${namespace ? `_${namespace.replace(/[^A-Za-z0-9_-]/g, '_')}` : ''}`;
  return {
    stream: { name, subjects: [subject], duplicateWindowMs: 10 * 60_000, retention: 'workqueue' },
    consumer: { durable: 'alert-sender', filterSubject: subject, ackWaitMs: 60_000 },
  };
}

export function jetStreamQueue(durable: DurableStreams, namespace: string): DeliveryQueue {
  const { stream, consumer } = alertStream(namespace);
  const ensured = onFirstUse(async () => {
    await durable.ensureStream(stream);
    await durable.ensureConsumer(stream.name, consumer);
  });
  return {
    publish: async (deliveryId) => {
      await ensured();
      // The delivery id as message id: a second fan-out of the same delivery is stored once.
      await durable.publish(stream.subjects[0]!, { id: deliveryId }, { msgId: deliveryId });
    },
  };
}

/** The workers' consumer: each message is one delivery to send now, or later when it is not due. */
/** What the sender needs of the alert engine: one delivery sent, or when to ask again. */
type Settled = { settled: true } | { settled: false; retryInMs: number };

export interface SendsDeliveries {
  deliverMany(ids: readonly string[]): Promise<Settled[]>;
}

/** Deliveries unsettled in one process at once, and sent together at most. */
export const SENDER_CONCURRENCY = 64;
/** Batches being sent at once in one process. */
const SENDER_LANES = 2;

export function startAlertSender(durable: DurableStreams, namespace: string, engine: SendsDeliveries, log: Logger): RunningConsumer {
  const { stream, consumer } = alertStream(namespace);
  // What arrives while a batch is being sent is sent together next: taking and marking a batch
  // costs the store a few commands, however many deliveries it holds. Two batches at a time, taken
  // in turn, so that one waits on the store while the other waits on the relay.
  const lanes = Array.from({ length: SENDER_LANES }, () => new GroupCommit<string, Settled>((ids) => engine.deliverMany(ids), SENDER_CONCURRENCY));
  let turn = 0;
  const handle = async (m: DurableMessage) => {
    let id: string;
    try {
      const body = m.json() as { id?: unknown };
      if (typeof body?.id !== 'string') throw new Error('no delivery id');
      id = body.id;
    } catch {
      m.term();
      return;
    }
    const outcome = await lanes[turn++ % SENDER_LANES]!.submit(id);
    if (outcome.settled) m.ack();
    else m.nak(outcome.retryInMs);
  };
  return durable.consume(stream, consumer, handle, {
    concurrency: SENDER_CONCURRENCY,
    onStart: () => log.info({ stream: stream.name }, 'alert sender started'),
    onError: (err, failures) => {
      if (failures === 1) log.warn({ err, stream: stream.name }, 'alert sender cannot run (is JetStream enabled?); retrying');
    },
  });
}
