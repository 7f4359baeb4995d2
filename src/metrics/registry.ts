// Every Prometheus metric carecircle exports, in one registry per process. Labels take values from
// a small fixed set (declared route patterns, bus subjects, bucket names), never from a request.
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

export const registry = new Registry();

const PREFIX = 'carecircle_';

const counter = <L extends string>(name: string, help: string, labelNames: readonly L[] = []) =>
  new Counter<L>({ name: PREFIX + name, help, labelNames, registers: [registry] });

/** One reading of a durable consumer, taken on scrape. */
export interface ConsumerReading {
  pending: number;
  ackPending: number;
}

/** Consumers running in this process, by `stream\u0000consumer`, each read when Prometheus scrapes. */
const consumers = new Map<string, { stream: string; consumer: string; read: () => Promise<ConsumerReading> }>();

/** A scrape waits this long for the stream server at most, so a bus outage cannot stall it. */
const READ_TIMEOUT_MS = 2_000;

async function readConsumers(): Promise<{ labels: { stream: string; consumer: string }; value: ConsumerReading }[]> {
  const readings = await Promise.all(
    [...consumers.values()].map(async ({ stream, consumer, read }) => {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), READ_TIMEOUT_MS)));
      const value = await Promise.race([read().catch(() => undefined), timeout]).finally(() => clearTimeout(timer));
      return value ? [{ labels: { stream, consumer }, value }] : [];
    }),
  );
  return readings.flat();
}

function consumerGauge(name: string, help: string, field: keyof ConsumerReading) {
  return new Gauge<'stream' | 'consumer'>({
    name: PREFIX + name,
    help,
    labelNames: ['stream', 'consumer'],
    registers: [registry],
    async collect() {
      // Unreadable now (the bus is down): no sample rather than a stale one.
      this.reset();
      for (const { labels, value } of await readConsumers()) this.set(labels, value[field]);
    },
  });
}

export const metrics = {
  httpRequests: counter('http_requests_total', 'HTTP requests answered, by listener surface, declared route pattern, method and status.', [
    'surface',
    'route',
    'method',
    'status',
  ]),
  httpDuration: new Histogram<'surface' | 'route' | 'method'>({
    name: `${PREFIX}http_request_duration_seconds`,
    help: 'Time from a request arriving to its answer, by listener surface, declared route pattern and method.',
    labelNames: ['surface', 'route', 'method'],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  }),
  httpLean: counter(
    'http_lean_requests_total',
    "Requests of http_requests_total answered by the listener's lean path ahead of Koa (the public directory's POST /api/mcp), by surface.",
    ['surface'],
  ),
  busNoResponders: counter('bus_no_responders_total', 'Bus requests no worker was subscribed to answer, by subject.', ['subject']),
  busTimeouts: counter('bus_timeouts_total', 'Bus requests a worker took and did not answer in time, by subject.', ['subject']),
  busRetries: counter('bus_retries_total', 'Bus requests sent again because no worker answered, by subject.', ['subject']),
  busUnavailable: counter('bus_unavailable_total', 'Bus requests given up as unavailable (answered 503), by subject and reason: no_worker or dependency.', [
    'subject',
    'reason',
  ]),
  workerInFlight: new Gauge({ name: `${PREFIX}worker_in_flight`, help: 'Requests this worker process is handling now.', registers: [registry] }),
  workerThreads: new Gauge({
    name: `${PREFIX}worker_threads`,
    help: 'Worker threads of the embedded run serving now (DIRECTORY_THREADS).',
    registers: [registry],
  }),
  workerThreadRestarts: counter('worker_thread_restarts_total', 'Worker threads that stopped unexpectedly and were replaced.'),
  workerFailures: counter('worker_failures_total', 'Requests a worker answered with a failure, by cause: unavailable, rejected, too_large or failed.', [
    'kind',
  ]),
  workerCrashesAvoided: counter(
    'worker_crashes_avoided_total',
    'Errors that would have ended the worker process and were caught instead, by origin: reply_refused (a reply the bus could not carry), uncaught_exception, unhandled_rejection.',
    ['origin'],
  ),
  mcpBatchItemsSkipped: counter(
    'mcp_batch_items_skipped_total',
    'Messages of a JSON-RPC batch never answered because the replies before them had already passed MAX_REPLY_BYTES (the batch is refused with 413), by MCP server.',
    ['server'],
  ),
  ingestAccepted: counter('ingest_accepted_total', 'Partner events answered 202, duplicates included.'),
  ingestUrgent: counter(
    'ingest_urgent_total',
    "Partner events answered 202 that may raise an alert (a fall in a note, a reading): sent on the ingest stream's urgent lane, written beside the routine backlog.",
  ),
  ingestDuplicates: counter('ingest_duplicates_total', 'Partner events answered 202 as a duplicate of one accepted before.'),
  ingestStored: counter('ingest_stored_total', 'Partner events stored as a care event.'),
  ingestNotStored: counter(
    'ingest_not_stored_total',
    'Accepted partner events the writer did not store again, by reason: already_stored (a redelivery) or dropped (family-share off or purged).',
    ['reason'],
  ),
  ingestDeadLettered: counter('ingest_dead_lettered_total', 'Accepted partner events moved to the dead-letter store.'),
  jetstreamRedeliveries: counter(
    'jetstream_redeliveries_total',
    'Durable-stream messages this process received again after an earlier delivery, by stream and consumer.',
    ['stream', 'consumer'],
  ),
  jetstreamPending: consumerGauge(
    'jetstream_consumer_pending',
    'Messages stored and not yet delivered to the durable consumer, read from the server on scrape.',
    'pending',
  ),
  jetstreamAckPending: consumerGauge(
    'jetstream_consumer_ack_pending',
    'Messages delivered to the durable consumer and not yet acknowledged, read from the server on scrape.',
    'ackPending',
  ),
  rateLimited: counter('rate_limited_total', 'Requests refused by a rate limit (HTTP 429, JSON-RPC -32029, SMTP 421), by bucket.', ['bucket']),
  databaseErrors: counter('database_errors_total', 'Database failures met while serving, by whether they were transient (answered 503 and retried) or not.', [
    'transient',
  ]),
};

/** Label value of a rate-limit key: its first part, the bucket name (`sandbox:ip:…` → `sandbox`). */
export function bucketOf(key: string): string {
  const name = key.split(':', 1)[0] ?? '';
  return /^[a-z][a-z0-9-]{0,39}$/.test(name) ? name : 'other';
}

/** Count one refusal of the rate limit whose key is `key`. */
export function countRateLimited(key: string): void {
  metrics.rateLimited.inc({ bucket: bucketOf(key) });
}

/** Report a durable consumer's pending counts on every scrape until the returned function is called. */
export function watchConsumer(stream: string, consumer: string, read: () => Promise<ConsumerReading>): () => void {
  const key = `${stream}\u0000${consumer}`;
  const entry = { stream, consumer, read };
  consumers.set(key, entry);
  return () => {
    if (consumers.get(key) === entry) consumers.delete(key);
  };
}

let defaults = false;

/** The Node.js process metrics (CPU, memory, event loop, handles), once per process. */
export function collectProcessMetrics(): void {
  if (defaults) return;
  defaults = true;
  collectDefaultMetrics({ register: registry });
}
