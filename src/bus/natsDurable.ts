// Durable streams on NATS JetStream: file-backed streams, acknowledged publishes with de-duplication,
// and durable explicit-ack pull consumers. Works with nats-server 2.9.4 and later.
import { setTimeout as sleep } from 'node:timers/promises';
import {
  AckPolicy,
  DeliverPolicy,
  jetstream,
  jetstreamManager,
  JetStreamApiError,
  JetStreamError,
  PubHeaders,
  StorageType,
  type ConsumerMessages,
  type JetStreamClient,
  type JsMsg,
} from '@nats-io/jetstream';
import { nanos, type NatsConnection } from '@nats-io/transport-node';
import { metrics, watchConsumer } from '../metrics/index.js';
import type {
  ConsumeOptions,
  ConsumerSpec,
  ConsumerState,
  DurableMessage,
  DurableStreams,
  PublishAck,
  PublishOptions,
  RunningConsumer,
  StreamSpec,
} from './durable.js';
import type { NatsRequests } from './natsRequests.js';

const PUBLISH_TIMEOUT_MS = 5_000;

/** Settling a message whose connection has gone is a no-op: the server delivers it again anyway. */
function quietly(fn: () => void): void {
  try {
    fn();
  } catch {
    // the ack wait takes over
  }
}

function delivery(m: JsMsg): DurableMessage {
  return {
    seq: m.seq,
    redelivered: m.redelivered,
    deliveryCount: m.info.deliveryCount,
    json: () => m.json(),
    ack: () => quietly(() => m.ack()),
    nak: (delayMs) => quietly(() => m.nak(delayMs)),
    term: () => quietly(() => m.term()),
  };
}

export class NatsDurableStreams implements DurableStreams {
  private client: JetStreamClient | undefined;
  private readonly running = new Set<RunningConsumer>();

  /** `replicas`: copies a cluster keeps of each stream (1 on a single server). */
  constructor(
    private readonly nc: NatsConnection,
    private readonly requests: NatsRequests,
    private readonly replicas = 1,
  ) {}

  private js(): JetStreamClient {
    this.client ??= jetstream(this.nc);
    return this.client;
  }

  async ensureStream(s: StreamSpec): Promise<void> {
    // A new manager each time: it checks that JetStream is (still) enabled for the account.
    const jsm = await jetstreamManager(this.nc);
    const config = {
      name: s.name,
      subjects: s.subjects,
      storage: StorageType.File,
      retention: s.retention,
      duplicate_window: nanos(s.duplicateWindowMs),
      num_replicas: this.replicas,
    };
    try {
      await jsm.streams.add(config);
    } catch {
      await jsm.streams.update(s.name, config);
    }
  }

  async ensureConsumer(stream: string, c: ConsumerSpec): Promise<void> {
    const jsm = await jetstreamManager(this.nc);
    const config = {
      durable_name: c.durable,
      ack_policy: AckPolicy.Explicit,
      ack_wait: nanos(c.ackWaitMs),
      deliver_policy: DeliverPolicy.All,
      filter_subject: c.filterSubject,
      max_deliver: -1,
    };
    try {
      await jsm.consumers.add(stream, config);
    } catch {
      await jsm.consumers.update(stream, c.durable, { ack_wait: config.ack_wait, max_deliver: -1 });
    }
  }

  /**
   * A JetStream publish with the header the JetStream client would send, through the bus's own
   * requests, as the key-value writes do: the client's publish builds an Error (and its stack
   * trace) for every publish. The acknowledgement's API error keeps its class; no responders (no
   * stream), timeouts and a closed connection are the bus's, transient all the same.
   */
  async publish(subject: string, data: unknown, options: PublishOptions): Promise<PublishAck> {
    const reply = await this.requests.request(subject, JSON.stringify(data), options.timeoutMs ?? PUBLISH_TIMEOUT_MS, { [PubHeaders.MsgIdHdr]: options.msgId });
    const ack = JSON.parse(reply.string()) as {
      stream?: string;
      seq?: number;
      duplicate?: boolean;
      error?: { code: number; err_code: number; description: string };
    };
    if (ack.error) throw new JetStreamApiError(ack.error);
    if (!ack.stream || typeof ack.seq !== 'number') throw new JetStreamError('invalid ack response');
    return { stream: ack.stream, seq: ack.seq, duplicate: ack.duplicate === true };
  }

  async consumerState(stream: string, durable: string): Promise<ConsumerState> {
    const info = await (await jetstreamManager(this.nc)).consumers.info(stream, durable);
    return { pending: info.num_pending, ackPending: info.num_ack_pending };
  }

  consume(stream: StreamSpec, consumer: ConsumerSpec, handler: (m: DurableMessage) => Promise<void>, options: ConsumeOptions): RunningConsumer {
    let stopped = false;
    let messages: ConsumerMessages | undefined;
    const stopping = new AbortController();
    const pause = (ms: number) => sleep(ms, undefined, { signal: stopping.signal }).catch(() => undefined);
    /** Each unsettled delivery and its body's size. */
    const inflight = new Map<Promise<void>, number>();
    let inflightBytes = 0;
    const full = () => inflight.size >= options.concurrency || (options.maxBytes !== undefined && inflightBytes >= options.maxBytes);

    const settle = async (m: JsMsg): Promise<void> => {
      if (m.redelivered) metrics.jetstreamRedeliveries.inc({ stream: stream.name, consumer: consumer.durable });
      const d = delivery(m);
      await handler(d).catch(() => d.nak());
    };

    const run = async () => {
      let backoff = 250;
      let failures = 0;
      while (!stopped) {
        try {
          await this.ensureStream(stream);
          await this.ensureConsumer(stream.name, consumer);
          const c = await this.js().consumers.get(stream.name, consumer.durable);
          messages = await c.consume({ max_messages: options.concurrency * 2 });
          if (stopped) void messages.close();
          else options.onStart?.();
          backoff = 250;
          failures = 0;
          for await (const m of messages) {
            // Stopping: what was fetched but not started goes straight back, for another process.
            if (stopped) {
              quietly(() => m.nak());
              continue;
            }
            const done = settle(m);
            const size = m.data.length;
            inflight.set(done, size);
            inflightBytes += size;
            void done.finally(() => {
              inflight.delete(done);
              inflightBytes -= size;
            });
            // At most `concurrency` (and `maxBytes`) unsettled here before the next message is taken.
            while (full()) await Promise.race(inflight.keys());
          }
          if (!stopped) await pause(backoff);
        } catch (err) {
          if (stopped) break;
          options.onError?.(err, ++failures);
          await pause(backoff);
          backoff = Math.min(backoff * 2, 30_000);
        }
      }
    };
    const running = run();
    const unwatch = watchConsumer(stream.name, consumer.durable, () => this.consumerState(stream.name, consumer.durable));

    const handle: RunningConsumer = {
      stop: async () => {
        this.running.delete(handle);
        unwatch();
        stopped = true;
        stopping.abort();
        void messages?.close();
        await running;
        await Promise.allSettled([...inflight.keys()]);
      },
    };
    this.running.add(handle);
    return handle;
  }

  /** Before the connection drains: consumers still running stop first. */
  async stopAll(): Promise<void> {
    await Promise.allSettled([...this.running].map((c) => c.stop()));
  }
}
