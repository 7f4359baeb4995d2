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
import { z } from 'zod';
import { CHANNEL_NAMES, KIND_NAMES } from './kinds.js';
import type { NewDelivery } from './outbox.js';

/** A queue message: the delivery's id; its loved one, whose members' preferences the sender reads
 *  while it takes the delivery; and the delivery whole when its fan-out inserted it (the sender
 *  then claims it without reading it back). A message of an earlier version has only the id. */
export interface QueuedDelivery {
  id: string;
  lovedOneId?: string;
  fresh?: NewDelivery;
}

const text = z.string().max(1 << 20);
const freshDelivery = z.object({
  _id: text,
  decisionId: text,
  uid: text,
  lovedOneId: text,
  kind: z.enum([...KIND_NAMES, 'digest']),
  channel: z.enum(CHANNEL_NAMES),
  message: z.object({ to: text, subject: text, text, html: text, headers: z.record(z.string(), text) }).optional(),
  note: z.object({ title: text, body: text, url: text, tag: text }).optional(),
  notBefore: z.coerce.date(),
  createdAt: z.coerce.date(),
});

/** The message's body as the sender takes it; a delivery that does not read back whole is read
 *  from the store instead. Undefined when the body names no delivery. */
export function queuedDelivery(body: unknown): QueuedDelivery | undefined {
  const b = body as { id?: unknown; lovedOneId?: unknown; fresh?: unknown } | null;
  if (typeof b?.id !== 'string') return undefined;
  const fresh = b.fresh === undefined ? undefined : freshDelivery.safeParse(b.fresh);
  return {
    id: b.id,
    ...(typeof b.lovedOneId === 'string' ? { lovedOneId: b.lovedOneId } : {}),
    ...(fresh?.success ? { fresh: fresh.data as NewDelivery } : {}),
  };
}

export interface DeliveryQueue {
  publish(delivery: QueuedDelivery): Promise<void>;
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
    publish: async (delivery) => {
      await ensured();
      // The delivery id as message id: a second fan-out of the same delivery is stored once.
      await durable.publish(stream.subjects[0]!, delivery, { msgId: delivery.id });
    },
  };
}

/** A delivery done with (sent and marked so, dead, nothing left to do), or when to ask again. */
export type Settled = { settled: true } | { settled: false; retryInMs: number };

/** What the sender needs of the alert engine: a batch sent, each with when it is settled. */
export interface SendsDeliveries {
  deliverMany(items: readonly QueuedDelivery[]): Promise<{ done: Promise<Settled> }[]>;
}

/** Deliveries unsettled in one process at once, and sent together at most. */
export const SENDER_CONCURRENCY = 64;
/** Batches being sent at once in one process. */
const SENDER_LANES = 2;

export function startAlertSender(durable: DurableStreams, namespace: string, engine: SendsDeliveries, log: Logger): RunningConsumer {
  const { stream, consumer } = alertStream(namespace);
  // What arrives while a batch is being sent is sent together next: taking a batch costs the store
  // a few commands, however many deliveries it holds. Two batches at a time, so that one waits on
  // the store while the other waits on the relay; a delivery goes to a lane with nothing to do if
  // there is one. A lane is free again once its batch is sent: the marks wait in the engine.
  const lanes = Array.from(
    { length: SENDER_LANES },
    () => new GroupCommit<QueuedDelivery, { done: Promise<Settled> }>((items) => engine.deliverMany(items), SENDER_CONCURRENCY),
  );
  let turn = 0;
  const handle = async (m: DurableMessage) => {
    let item: QueuedDelivery | undefined;
    try {
      item = queuedDelivery(m.json());
    } catch {
      item = undefined;
    }
    if (!item) {
      m.term();
      return;
    }
    // Handed over again (a nak, a sender that died): whatever became of it is in the store.
    if (m.deliveryCount > 1) delete item.fresh;
    const lane = lanes.find((l) => l.idle) ?? lanes[turn++ % SENDER_LANES]!;
    const outcome = await (await lane.submit(item)).done;
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
