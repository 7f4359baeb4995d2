// Durable streams: the at-least-once capability a networked bus may offer (NATS JetStream) and the
// in-process bus does not. Bodies are JSON, as on the rest of the bus.

/** What the stream keeps: until limits, while a consumer is interested, or until one acknowledges. */
export type StreamRetention = 'limits' | 'interest' | 'workqueue';

export interface StreamSpec {
  /** Letters, digits, `_` and `-` only. */
  name: string;
  subjects: string[];
  /** Publishes carrying the same message id within this window are stored once. */
  duplicateWindowMs: number;
  retention: StreamRetention;
}

/** A durable pull consumer with explicit acknowledgement, shared by every process that names it. */
export interface ConsumerSpec {
  durable: string;
  filterSubject: string;
  /** How long a delivered message may stay unacknowledged before it is delivered again. */
  ackWaitMs: number;
}

export interface PublishOptions {
  /** De-duplication key: a second publish with it inside the duplicate window is not stored. */
  msgId: string;
  timeoutMs?: number;
}

/** The server stored the message (or had already stored one with the same id). */
export interface PublishAck {
  stream: string;
  seq: number;
  duplicate: boolean;
}

/** One delivery. Exactly one of ack, nak or term settles it; unsettled, it returns after the ack wait. */
export interface DurableMessage {
  readonly seq: number;
  readonly redelivered: boolean;
  /** This delivery's number, 1 the first time; counts every redelivery (nak, ack wait, a crash). */
  readonly deliveryCount: number;
  /** The published body; throws when it is not JSON. */
  json(): unknown;
  ack(): void;
  /** Deliver again, after `delayMs` when given. */
  nak(delayMs?: number): void;
  /** Never deliver again. */
  term(): void;
}

export interface ConsumeOptions {
  /** Most deliveries unsettled in this process at once. */
  concurrency: number;
  /** Most bytes of message bodies unsettled in this process at once: bounds the memory of a
   *  large `concurrency` when bodies are large. A message is taken whenever less is unsettled, so
   *  one larger than the bound still goes through alone. (What the client fetched ahead is
   *  bounded by the consumer's unacknowledged limit on the server.) */
  maxBytes?: number;
  /** Each time the consumer (re)starts taking messages. */
  onStart?: () => void;
  /** Each time the stream or consumer cannot be reached; `failures` counts since the last start. */
  onError?: (err: unknown, failures: number) => void;
}

export interface RunningConsumer {
  /** Take no more messages, hand back those fetched but not started, and wait for the handlers running. */
  stop(): Promise<void>;
}

export interface ConsumerState {
  /** Stored, not yet delivered. */
  pending: number;
  /** Delivered, not yet acknowledged. */
  ackPending: number;
}

export interface DurableStreams {
  /** Create the stream, or bring an existing one to this configuration. Safe from every process. */
  ensureStream(stream: StreamSpec): Promise<void>;
  /** Create the durable consumer, or update its ack wait. Safe from every process. */
  ensureConsumer(stream: string, consumer: ConsumerSpec): Promise<void>;
  /** Resolves once the server has stored the message. */
  publish(subject: string, data: unknown, options: PublishOptions): Promise<PublishAck>;
  /**
   * Run the consumer until stopped: ensures stream and consumer, then hands each delivery to
   * `handler`, at most `concurrency` at once; retries with back-off while they cannot be reached.
   * A handler that throws leaves its message to be delivered again.
   */
  consume(stream: StreamSpec, consumer: ConsumerSpec, handler: (m: DurableMessage) => Promise<void>, options: ConsumeOptions): RunningConsumer;
  consumerState(stream: string, durable: string): Promise<ConsumerState>;
}
