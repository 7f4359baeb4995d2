// The JetStream side of the ingest (NATS mode): one work-queue stream per bus namespace, a durable
// explicit-ack consumer shared by every worker, and the sink that answers 202 only after the
// server acknowledged the publish.
import { AckPolicy, DeliverPolicy, nanos, RetentionPolicy, StorageType, type JetStreamClient, type NatsConnection } from 'nats';
import type { CareEventWriter, QueuedEvent } from './writer.js';

export interface IngestStream {
  stream: string;
  subject: string;
  durable: string;
}

/** Stream names cannot hold dots: the namespace's dots become underscores. */
export function ingestStream(namespace: string, subject: string): IngestStream {
  return { stream: `CC_INGEST${namespace ? `_${namespace.replace(/[^A-Za-z0-9_-]/g, '_')}` : ''}`, subject, durable: 'care-event-writer' };
}

/** JetStream de-duplicates publishes with the same Nats-Msg-Id (our event id) within this window. */
export const DUPLICATE_WINDOW_MS = 2 * 60 * 1000;

/** Create or update the stream and the durable consumer; safe to call from every process. */
export async function ensureIngestStream(nc: NatsConnection, s: IngestStream, ackWaitMs: number): Promise<void> {
  const jsm = await nc.jetstreamManager();
  const streamConfig = { name: s.stream, subjects: [s.subject], storage: StorageType.File, retention: RetentionPolicy.Workqueue, duplicate_window: nanos(DUPLICATE_WINDOW_MS) };
  try {
    await jsm.streams.add(streamConfig);
  } catch {
    await jsm.streams.update(s.stream, streamConfig);
  }
  const consumerConfig = { durable_name: s.durable, ack_policy: AckPolicy.Explicit, ack_wait: nanos(ackWaitMs), deliver_policy: DeliverPolicy.All, filter_subject: s.subject, max_deliver: -1 };
  try {
    await jsm.consumers.add(s.stream, consumerConfig);
  } catch {
    await jsm.consumers.update(s.stream, s.durable, { ack_wait: consumerConfig.ack_wait, max_deliver: -1 });
  }
}

/** Where an accepted event goes to become durable before the 202. */
export interface EventSink {
  readonly kind: 'jetstream' | 'mongodb';
  put(e: QueuedEvent): Promise<void>;
}

/** NATS mode: durable once JetStream acknowledged the publish. */
export class JetStreamSink implements EventSink {
  readonly kind = 'jetstream' as const;
  private ready: Promise<JetStreamClient> | undefined;

  constructor(
    private readonly nc: NatsConnection,
    private readonly s: IngestStream,
    private readonly ackWaitMs: number,
  ) {}

  private client(): Promise<JetStreamClient> {
    this.ready ??= ensureIngestStream(this.nc, this.s, this.ackWaitMs).then(
      () => this.nc.jetstream(),
      (err: unknown) => {
        this.ready = undefined; // try again on the next request
        throw err;
      },
    );
    return this.ready;
  }

  async put(e: QueuedEvent): Promise<void> {
    const js = await this.client();
    await js.publish(this.s.subject, Buffer.from(JSON.stringify(e)), { msgID: e.eventId, timeout: 5_000 });
  }
}

/** Embedded mode (no JetStream): the MongoDB write of the care event is the durable step. */
export class MongoSink implements EventSink {
  readonly kind = 'mongodb' as const;
  constructor(private readonly writer: CareEventWriter) {}

  async put(e: QueuedEvent): Promise<void> {
    await this.writer.write(e);
  }
}
