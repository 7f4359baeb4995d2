// The bus contract both implementations honour: request/reply on subjects, queue groups, headers, timeouts.
import type { DurableStreams } from './durable.js';
import type { FailureKind, HandlerFailure } from './errors.js';
import type { KeyValueStores } from './kv.js';

/** Headers carried with every request. Names are lower-case. */
export type BusHeaders = Record<string, string>;

export const HEADER_REQUEST_ID = 'cc-request-id';
export const HEADER_DEADLINE = 'cc-deadline';

export interface BusMessage {
  subject: string;
  data: unknown;
  headers: BusHeaders;
}

export type BusHandler = (msg: BusMessage) => Promise<unknown>;

export interface RequestOptions {
  timeoutMs: number;
  headers?: BusHeaders;
}

export interface ServeOptions {
  /**
   * Largest encoded reply sent; a larger one is answered with a `too_large` failure instead. The
   * transport's own limit (NATS max_payload) applies as well, whichever is smaller.
   */
  maxReplyBytes?: number;
  /** Told each time a reply was refused (too large, or not encodable) and a failure sent instead. */
  onRefused?: (refused: HandlerFailure, headers: BusHeaders) => void;
}

export interface Subscription {
  /** Stop taking new messages and wait for the handlers that are running. */
  drain(): Promise<void>;
}

export interface Bus {
  readonly kind: 'nats' | 'memory';
  /** Send one request to one member of the subject's queue group and wait for its reply. */
  request(subject: string, data: unknown, options: RequestOptions): Promise<unknown>;
  /**
   * Serve a subject as a member of a queue group: each request goes to one member. Every request
   * gets an answer: a handler that throws, a reply that cannot be encoded or is too large, all
   * become failure envelopes; nothing a request does escapes as an unhandled error.
   */
  serve(subject: string, queue: string, handler: BusHandler, options?: ServeOptions): Subscription;
  /** Fire-and-forget publish to every subscriber (no reply, best effort). */
  publish(subject: string, data: unknown, headers?: BusHeaders): void;
  /** Subscribe to fire-and-forget messages (every subscriber gets each). */
  subscribe(subject: string, handler: (msg: BusMessage) => void): Subscription;
  /** True while connected and able to carry requests. */
  ready(): boolean;
  /**
   * Changes the moment the connection drops (before a new connection can bring any message) and
   * again once it is back: what was published in between never reached this process. Absent on
   * the in-process bus, which is never cut off.
   */
  readonly epoch?: number;
  /** Resolves once every subscription made so far is in effect (a round trip to the server). */
  flush(): Promise<void>;
  /**
   * Durable streams, where the bus has them (NATS with JetStream); absent on the in-process bus,
   * whose callers make their own durable step instead.
   */
  readonly durable?: DurableStreams;
  /**
   * Key-value buckets with compare-and-set, where the bus has them (NATS with JetStream); absent on
   * the in-process bus, where one process keeps such state in memory.
   */
  readonly kv?: KeyValueStores;
  /** Drain subscriptions, flush, and close. */
  close(): Promise<void>;
}

/** Reply envelope on the wire: a worker's handler either returned data or failed (`kind` absent: `failed`). */
export type ReplyEnvelope = { ok: true; data: unknown } | { ok: false; error: string; kind?: FailureKind };
