// The durable-stream side of the ingest (NATS mode): one work-queue stream per bus namespace with
// two lanes, each a subject and a durable explicit-ack consumer shared by every worker, and the sink
// that answers 202 only after the server acknowledged the publish. The urgent lane carries the
// events that may raise an alert (a fall in a note, a reading): its consumer writes them as they
// come, so a backlog of routine events (visits, doses) never holds an alert back.
import type { ConsumerSpec, DurableStreams, StreamSpec } from '../bus/durable.js';
import { onFirstUse } from '../bus/onFirstUse.js';
import type { Logger } from '../log.js';
import { errorClass, isTransientStoreError, type DeadLetters } from './deadLetters.js';
import { GroupCommit } from './fresh.js';
import type { CareEventWriter, QueuedEvent } from './writer.js';

/** One lane of the stream: its subject and the durable consumer that takes it. */
export interface IngestLane {
  subject: string;
  durable: string;
}

/** The stream, its routine lane (`subject`, `durable`: what every version before the lanes used) and its urgent lane. */
export interface IngestStream extends IngestLane {
  stream: string;
  urgent: IngestLane;
}

export type LaneName = 'routine' | 'urgent';

/** Stream names cannot hold dots: the namespace's dots become underscores. */
export function ingestStream(namespace: string, subject: string): IngestStream {
  return {
    stream: `CC_INGEST${namespace ? `_${namespace.replace(/[^A-Za-z0-9_-]/g, '_')}` : ''}`,
    subject,
    durable: 'care-event-writer',
    urgent: { subject: `${subject}.urgent`, durable: 'care-event-writer-urgent' },
  };
}

/** Both lanes, routine first. */
export const lanesOf = (s: IngestStream): { name: LaneName; lane: IngestLane }[] => [
  { name: 'routine', lane: { subject: s.subject, durable: s.durable } },
  { name: 'urgent', lane: s.urgent },
];

/** The stream de-duplicates publishes with the same message id (our event id) within this window. */
export const DUPLICATE_WINDOW_MS = 2 * 60 * 1000;

/** Kept until a worker acknowledged the event (work queue). */
export const streamSpec = (s: IngestStream): StreamSpec => ({
  name: s.stream,
  subjects: [s.subject, s.urgent.subject],
  duplicateWindowMs: DUPLICATE_WINDOW_MS,
  retention: 'workqueue',
});

export const consumerSpec = (lane: IngestLane, ackWaitMs: number): ConsumerSpec => ({ durable: lane.durable, filterSubject: lane.subject, ackWaitMs });

/** Create or update the stream and both lanes' durable consumers; safe to call from every process. */
export async function ensureIngestStream(durable: DurableStreams, s: IngestStream, ackWaitMs: number): Promise<void> {
  await durable.ensureStream(streamSpec(s));
  for (const { lane } of lanesOf(s)) await durable.ensureConsumer(s.stream, consumerSpec(lane, ackWaitMs));
}

/** What both lanes still hold: stored and not delivered, delivered and not acknowledged. */
export async function ingestBacklog(durable: DurableStreams, s: IngestStream): Promise<{ pending: number; ackPending: number }> {
  const states = await Promise.all(lanesOf(s).map(({ lane }) => durable.consumerState(s.stream, lane.durable)));
  return { pending: states.reduce((n, x) => n + x.pending, 0), ackPending: states.reduce((n, x) => n + x.ackPending, 0) };
}

/** Where an accepted event goes to become durable before the 202. */
export interface EventSink {
  readonly kind: 'jetstream' | 'mongodb';
  /** Durable when it returns; `lane` picks the stream's lane (an embedded run writes at once either way). */
  put(e: QueuedEvent, lane?: LaneName): Promise<void>;
}

/** NATS mode: durable once the stream acknowledged the publish. */
export class StreamSink implements EventSink {
  readonly kind = 'jetstream' as const;
  private readonly ensured: () => Promise<void>;

  constructor(
    private readonly durable: DurableStreams,
    private readonly s: IngestStream,
    ackWaitMs: number,
  ) {
    this.ensured = onFirstUse(() => ensureIngestStream(durable, s, ackWaitMs));
  }

  async put(e: QueuedEvent, lane: LaneName = 'routine'): Promise<void> {
    await this.ensured();
    // The duplicate window is the stream's, whichever lane: an event id is stored once.
    await this.durable.publish(lane === 'urgent' ? this.s.urgent.subject : this.s.subject, e, { msgId: e.eventId });
  }
}

/**
 * Embedded mode (no durable streams): the MongoDB write of the care event is the durable step, and
 * the 202 waits for it. Requests arriving while a write is under way are written together in the
 * next one (group commit). The storability check before it makes a refusal here a gap in that
 * check, not a partner's error: the event is then held in the dead letters and accepted, so it is
 * accounted for. An outage throws (503: the partner retries).
 */
export class MongoSink implements EventSink {
  readonly kind = 'mongodb' as const;
  private readonly commits = new GroupCommit<QueuedEvent, unknown>((events) => this.writeBatch(events));

  constructor(
    private readonly writer: CareEventWriter,
    private readonly deadLetters: DeadLetters,
    private readonly log: Logger,
  ) {}

  async put(e: QueuedEvent): Promise<void> {
    const failure = await this.commits.submit(e);
    if (failure !== undefined) throw failure;
  }

  /** Per event: undefined once stored or held, else the outage to answer 503 with. */
  private async writeBatch(events: QueuedEvent[]): Promise<unknown[]> {
    if (events.length > 1) {
      try {
        await this.writer.writeMany(events);
        return events.map(() => undefined);
      } catch (err) {
        if (isTransientStoreError(err)) return events.map(() => err);
        // Refused, but which event? One by one below.
      }
    }
    return Promise.all(
      events.map((e) =>
        this.putOne(e).then(
          () => undefined,
          (err: unknown) => err,
        ),
      ),
    );
  }

  private async putOne(e: QueuedEvent): Promise<void> {
    try {
      await this.writer.write(e);
    } catch (err) {
      if (isTransientStoreError(err)) throw err;
      await this.deadLetters.put(e, err, 1, 'accept');
      this.log.error({ eventId: e.eventId, institutionId: e.institutionId, errorClass: errorClass(err) }, 'ingest event dead-lettered');
    }
  }
}
