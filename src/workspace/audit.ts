// The MCP audit log: one appended row per authenticated, parsed JSON-RPC message. Never the
// arguments or results. No code path updates or deletes a row. Rows are written off the reply
// path, in batches: over NATS each request's rows are published to a JetStream work queue (the
// reply waits for that acknowledgement, never for the store) and a durable consumer inserts them;
// in one process they wait in memory for the next batch, and the last batch is written at shutdown.
import { recentActivity, recordActivity } from './activity.js';
import type { AuditRow } from './auditRow.js';
import type { Bus } from '../bus/types.js';
import type { ConsumerSpec, DurableMessage, DurableStreams, StreamSpec } from '../bus/durable.js';
import type { Logger } from '../log.js';
import { newId } from '../store/ids.js';
import type { Timelines } from '../store/timeline/port.js';

export { AUDIT_INDEXES, MCP_AUDIT_LOG, type AuditRow, type AuthMethod } from './auditRow.js';

/** Most rows in one insert. */
const BATCH_ROWS = 500;
/** A row waits at most this long for its batch. */
const BATCH_WAIT_MS = 25;
/** The store failed a batch: try it again after this long. */
const RETRY_MS = 1_000;

export class AuditLog {
  constructor(private readonly timelines: Timelines) {}

  /** Unordered, and a row already stored (its id is its `_id`) is no failure: a redelivery is harmless. */
  insert(rows: readonly AuditRow[]): Promise<void> {
    return recordActivity(this.timelines, rows);
  }

  recent(uid: string, limit = 20): Promise<AuditRow[]> {
    return recentActivity(this.timelines, uid, limit);
  }
}

/** Where a request's rows go; resolves once they cannot be lost (queued in this process, or stored in the stream). */
export interface AuditWriter {
  record(rows: Omit<AuditRow, '_id'>[]): Promise<void>;
  /** Write what is waiting and stop taking rows into a batch (later rows are inserted at once). */
  stop(): Promise<void>;
}

const withIds = (rows: Omit<AuditRow, '_id'>[]): AuditRow[] => rows.map((r) => ({ _id: newId('aud'), ...r }));

/** One process: rows wait in memory for the next batch. */
class QueuedAuditWriter implements AuditWriter {
  private queue: AuditRow[] = [];
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> | undefined;
  private stopped = false;

  constructor(
    private readonly log: AuditLog,
    private readonly logger: Logger,
  ) {}

  record(rows: Omit<AuditRow, '_id'>[]): Promise<void> {
    const rowsWithIds = withIds(rows);
    if (this.stopped) return this.log.insert(rowsWithIds);
    this.queue.push(...rowsWithIds);
    if (this.queue.length >= BATCH_ROWS) void this.flush();
    else this.timer ??= setTimeout(() => void this.flush(), BATCH_WAIT_MS);
    return Promise.resolve();
  }

  private flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.flushing ??= (async () => {
      while (this.queue.length) {
        const batch = this.queue.splice(0, BATCH_ROWS);
        try {
          await this.log.insert(batch);
        } catch (err) {
          // Kept, in order, for the next attempt: a row is never dropped while the process runs.
          this.queue.unshift(...batch);
          this.logger.warn({ err, waiting: this.queue.length }, 'audit rows not written yet; trying again');
          if (!this.stopped) this.timer ??= setTimeout(() => void this.flush(), RETRY_MS);
          throw err;
        }
      }
    })().finally(() => (this.flushing = undefined));
    return this.flushing.catch(() => undefined);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (let attempt = 0; attempt < 5 && this.queue.length; attempt++) {
      await this.flushing?.catch(() => undefined);
      await this.flush();
      if (this.queue.length) await new Promise((r) => setTimeout(r, RETRY_MS / 4));
    }
    clearTimeout(this.timer);
    if (this.queue.length) this.logger.error({ lost: this.queue.length }, 'audit rows could not be written before shutdown');
  }
}

export interface AuditStream {
  stream: StreamSpec;
  consumer: ConsumerSpec;
}

export function auditStream(namespace: string): AuditStream {
  const subject = `${namespace ? `${namespace}.` : ''}cc.audit.rows`;
  const stream = `CC_AUDIT${namespace ? `_${namespace.replace(/[^A-Za-z0-9_-]/g, '_')}` : ''}`;
  return {
    stream: { name: stream, subjects: [subject], duplicateWindowMs: 2 * 60_000, retention: 'workqueue' },
    consumer: { durable: 'audit-writer', filterSubject: subject, ackWaitMs: 10_000 },
  };
}

/** NATS: a request's rows are one message, stored before the reply; a durable consumer inserts them. */
class StreamAuditWriter implements AuditWriter {
  private ready: Promise<void> | undefined;

  constructor(
    private readonly durable: DurableStreams,
    private readonly s: AuditStream,
    private readonly log: AuditLog,
  ) {}

  private ensured(): Promise<void> {
    this.ready ??= this.durable.ensureStream(this.s.stream).catch((err: unknown) => {
      this.ready = undefined;
      throw err;
    });
    return this.ready;
  }

  async record(rows: Omit<AuditRow, '_id'>[]): Promise<void> {
    const rowsWithIds = withIds(rows);
    if (!rowsWithIds.length) return;
    try {
      await this.ensured();
      await this.durable.publish(this.s.stream.subjects[0]!, { rows: rowsWithIds }, { msgId: rowsWithIds[0]!._id });
    } catch {
      // The stream is out of reach: the store takes the rows directly rather than losing them.
      await this.log.insert(rowsWithIds);
    }
  }

  async stop(): Promise<void> {}
}

const fromWire = (data: unknown): AuditRow[] => {
  const rows = (data as { rows?: unknown })?.rows;
  if (!Array.isArray(rows)) throw new Error('not audit rows');
  return rows.map((r: AuditRow) => ({ ...r, at: new Date(r.at) }));
};

/** The durable consumer (worker role, NATS): deliveries are gathered into one unordered insert, then acknowledged. */
export function startAuditConsumer(durable: DurableStreams, s: AuditStream, log: AuditLog, logger: Logger): { stop(): Promise<void> } {
  let batch: { rows: AuditRow[]; m: DurableMessage; done: () => void }[] = [];
  let timer: NodeJS.Timeout | undefined;
  const flush = async () => {
    clearTimeout(timer);
    timer = undefined;
    const taken = batch;
    batch = [];
    try {
      await log.insert(taken.flatMap((t) => t.rows));
      for (const t of taken) t.m.ack();
    } catch (err) {
      logger.warn({ err, rows: taken.length }, 'audit batch not written; it will be delivered again');
      for (const t of taken) t.m.nak(RETRY_MS);
    } finally {
      for (const t of taken) t.done();
    }
  };
  return durable.consume(
    s.stream,
    s.consumer,
    (m) => {
      let rows: AuditRow[];
      try {
        rows = fromWire(m.json());
      } catch {
        logger.error({ seq: m.seq }, 'not an audit message; dropped');
        m.term();
        return Promise.resolve();
      }
      return new Promise<void>((done) => {
        batch.push({ rows, m, done });
        if (batch.length >= BATCH_ROWS / 2) void flush();
        else timer ??= setTimeout(() => void flush(), BATCH_WAIT_MS);
      });
    },
    { concurrency: BATCH_ROWS / 2, onError: (err, failures) => logger.warn({ err, failures }, 'audit consumer cannot reach its stream') },
  );
}

const writers = new WeakMap<Timelines, AuditWriter>();

/** This process's audit writer for a store: the stream where the bus has one, else the queue. */
export function auditWriter(timelines: Timelines, bus: Bus, namespace: string, logger: Logger): AuditWriter {
  let writer = writers.get(timelines);
  if (!writer)
    writers.set(
      timelines,
      (writer = bus.durable
        ? new StreamAuditWriter(bus.durable, auditStream(namespace), new AuditLog(timelines))
        : new QueuedAuditWriter(new AuditLog(timelines), logger)),
    );
  return writer;
}
