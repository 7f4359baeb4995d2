// The ingest's duplicate window and batch writes over real NATS (JetStream) and FerretDB: a publish
// under an event id already in the window is not stored again, and a batch holding a redelivered
// duplicate, an event stored before, one whose binding moved on and one the store refuses stores
// each good event once and dead-letters only the refused one; and a batch that follows another
// waits for a full one, gathered while the one before it is written.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { subjects } from '../src/bus/subjects.js';
import { startIngestConsumer } from '../src/ingest/consumer.js';
import { DeadLetters } from '../src/ingest/deadLetters.js';
import { FamilyShares } from '../src/ingest/familyShare.js';
import { ensureIngestStream, ingestBacklog, ingestStream, StreamSink, type IngestStream } from '../src/ingest/stream.js';
import { laneOf } from '../src/ingest/handler.js';
import { registry } from '../src/metrics/index.js';
import { CareEventWriter, type QueuedEvent, type WriteOutcome } from '../src/ingest/writer.js';
import { createLogger } from '../src/log.js';
import { newId } from '../src/store/ids.js';
import { startTestService, type TestService } from './harness/service.js';
import { careEvents, drained, family, onboard, postEvent, shareWith, TEST_DATA_KEY, visit, type Family, type Partner } from './ingest.fixtures.js';

let svc: TestService;
let partner: Partner;
let fam: Family;
let linkId: string;
const SUBJECT = 'client-batch';

beforeAll(async () => {
  svc = await startTestService({ nats: true, env: { DATA_KEY: TEST_DATA_KEY, RATE_INGEST_PER_MIN: '10000' } });
  partner = await onboard(svc.store.db, svc.credentials);
  fam = await family(svc.store.db, svc.credentials, svc.config);
  await shareWith(svc, partner, SUBJECT, fam);
  linkId = (await new FamilyShares(svc.store.db, svc.credentials).binding(partner.institutionId, SUBJECT))!.link.linkId;
});
afterAll(async () => {
  await svc?.stop();
});

function queued(payload: Record<string, unknown> = { note_text: 'ok', caregiver_id: 'cg-1' }, o: Partial<QueuedEvent> = {}): QueuedEvent {
  const at = new Date(Date.now() - 30_000).toISOString();
  return {
    v: 1,
    eventId: newId('evt'),
    institutionId: partner.institutionId,
    subjectRef: SUBJECT,
    eventType: 'note_added',
    occurredAt: at,
    receivedAt: at,
    payload,
    linkId,
    ...o,
  };
}

/** Counts what it is given per batch; otherwise the writer the service uses. */
class CountingWriter extends CareEventWriter {
  readonly batches: number[] = [];
  override writeMany(events: QueuedEvent[]): Promise<WriteOutcome[]> {
    this.batches.push(events.length);
    return super.writeMany(events);
  }
}

/** Until the stream's consumer state satisfies `done` (20 s at most). */
async function untilConsumer(s: IngestStream, done: (state: { pending: number; ackPending: number }) => boolean, pollMs = 100): Promise<void> {
  await vi.waitFor(
    async () => {
      const state = await svc.bus.durable!.consumerState(s.stream, s.durable);
      if (!done(state)) throw new Error(`consumer at ${state.pending} pending, ${state.ackPending} unacknowledged`);
    },
    { timeout: 20_000, interval: pollMs },
  );
}
const drainedOf = (state: { pending: number; ackPending: number }) => state.pending === 0 && state.ackPending === 0;

describe('ingest - the stream de-duplicates by event id', () => {
  it('when an event id is published again inside the window, then the stream reports a duplicate and it is stored once', async () => {
    const s = ingestStream(svc.config.busNamespace, subjects(svc.config.busNamespace).ingestEvents);
    const e = queued();
    const first = await svc.bus.durable!.publish(s.subject, e, { msgId: e.eventId });
    const again = await svc.bus.durable!.publish(s.subject, { ...e, receivedAt: new Date().toISOString() }, { msgId: e.eventId });
    expect([first.duplicate, again.duplicate]).toEqual([false, true]);
    expect(again.seq).toBe(first.seq);
    await drained(svc.bus, svc.config);
    expect(await careEvents(svc.store.db).countDocuments({ _id: e.eventId })).toBe(1);
  });

  it('when a partner sends the same event twice, then both get its id, the second as a duplicate, and it is stored once', async () => {
    const body = JSON.stringify(visit(partner, SUBJECT, { source_event_id: 'twice-1' }));
    const a = await postEvent(svc.urls.pipe!, partner, undefined, { body });
    const b = await postEvent(svc.urls.pipe!, partner, undefined, { body });
    expect([a.json.duplicate, b.json]).toEqual([false, { event_id: a.json.event_id, duplicate: true }]);
    await drained(svc.bus, svc.config);
    expect(await careEvents(svc.store.db).countDocuments({ sourceEventId: 'twice-1', institutionId: partner.institutionId })).toBe(1);
  });
});

describe('ingest - the consumer writes batches', () => {
  let s: IngestStream;
  beforeAll(async () => {
    // A stream of its own, filled before its consumer starts, so the consumer takes the events together.
    s = ingestStream(`${svc.config.busNamespace}_batch`, `${subjects(svc.config.busNamespace).ingestEvents}.batch`);
    await ensureIngestStream(svc.bus.durable!, s, 2_000);
  });

  it('when a batch holds a duplicate, an event stored before, a moved binding and a refused event, then the good ones are stored once and only the refused one is dead-lettered', async () => {
    const good = Array.from({ length: 12 }, () => queued());
    const storedBefore = queued();
    await new CareEventWriter(svc.timelines, new FamilyShares(svc.store.db, svc.credentials)).write(storedBefore);
    const moved = queued(undefined, { linkId: 'lnk_elsewhere' });
    const refused = queued({ $refused: true });
    const all = [...good.slice(0, 6), storedBefore, refused, good[2]!, moved, ...good.slice(6)];
    // good[2] twice under different message ids: a redelivery the window does not catch.
    for (const [i, e] of all.entries()) await svc.bus.durable!.publish(s.subject, e, { msgId: `${e.eventId}.${i}` });

    const writer = new CountingWriter(svc.timelines, new FamilyShares(svc.store.db, svc.credentials));
    const consumer = startIngestConsumer(svc.bus.durable!, s, writer, new DeadLetters(svc.store.db), createLogger('silent'), {
      concurrency: 32,
      ackWaitMs: 2_000,
      maxDeliveries: 2,
    });
    try {
      await untilConsumer(s, (state) => drainedOf(state) && writer.batches.length > 0);
    } finally {
      await consumer.stop();
    }
    expect(Math.max(...writer.batches)).toBeGreaterThan(1);
    const rows = await careEvents(svc.store.db)
      .find({ _id: { $in: all.map((e) => e.eventId) } })
      .toArray();
    expect(rows.map((r) => r._id).sort()).toEqual([...good, storedBefore].map((e) => e.eventId).sort());
    expect(rows.every((r) => r.lovedOneId === fam.lovedOneId)).toBe(true);
    const dead = await new DeadLetters(svc.store.db).rows.find({ _id: { $in: all.map((e) => e.eventId) } }).toArray();
    expect(dead.map((d) => [d._id, d.attempts, d.origin])).toEqual([[refused.eventId, 2, 'consumer']]);
  });
});

/** Holds its first single write until released; counts the batches it writes together. */
class HeldWriter extends CountingWriter {
  private release!: () => void;
  private readonly held = new Promise<void>((resolve) => (this.release = resolve));
  private started!: () => void;
  readonly firstStarted = new Promise<void>((resolve) => (this.started = resolve));
  private first = true;
  override async write(e: QueuedEvent): Promise<WriteOutcome> {
    if (this.first) {
      this.first = false;
      this.started();
      await this.held;
    }
    return super.write(e);
  }
  letGo(): void {
    this.release();
  }
}

describe('ingest - the consumer gathers batches under load', () => {
  it('when deliveries keep coming while a batch is written, then the next batch waits for a full one instead of going half empty', async () => {
    const s = ingestStream(`${svc.config.busNamespace}_gather`, `${subjects(svc.config.busNamespace).ingestEvents}.gather`);
    await ensureIngestStream(svc.bus.durable!, s, 10_000);
    const events = Array.from({ length: 9 }, () => queued());
    for (const e of events) await svc.bus.durable!.publish(s.subject, e, { msgId: e.eventId });
    const writer = new HeldWriter(svc.timelines, new FamilyShares(svc.store.db, svc.credentials));
    // Eight in flight: the first is written alone (from idle) and held; seven wait behind it; the
    // ninth can only be taken once the first is done.
    const consumer = startIngestConsumer(svc.bus.durable!, s, writer, new DeadLetters(svc.store.db), createLogger('silent'), {
      concurrency: 8,
      ackWaitMs: 10_000,
      maxDeliveries: 2,
    });
    try {
      await writer.firstStarted;
      await untilConsumer(s, (state) => state.ackPending >= 9, 20);
      writer.letGo();
      await untilConsumer(s, drainedOf);
    } finally {
      await consumer.stop();
    }
    // Without gathering the seven waiting would go at once, and the ninth after them alone.
    expect(writer.batches).toEqual([8]);
    expect(await careEvents(svc.store.db).countDocuments({ _id: { $in: events.map((e) => e.eventId) } })).toBe(9);
  });

  it('when a backlog is written, then the next batch gathers while one is written, and no batch after the first is a single event', async () => {
    const s = ingestStream(`${svc.config.busNamespace}_backlog`, `${subjects(svc.config.busNamespace).ingestEvents}.backlog`);
    await ensureIngestStream(svc.bus.durable!, s, 10_000);
    const events = Array.from({ length: 41 }, () => queued());
    for (const e of events) await svc.bus.durable!.publish(s.subject, e, { msgId: e.eventId });
    const writer = new SinglesCounted(svc.timelines, new FamilyShares(svc.store.db, svc.credentials));
    const consumer = startIngestConsumer(svc.bus.durable!, s, writer, new DeadLetters(svc.store.db), createLogger('silent'), {
      concurrency: 8,
      ackWaitMs: 10_000,
      maxDeliveries: 2,
    });
    try {
      await untilConsumer(s, drainedOf, 50);
    } finally {
      await consumer.stop();
    }
    // The first event finds the consumer idle and goes alone; were a batch all that may be in
    // flight, a single event would follow every full batch ([1, 8, 1, 8, 1, …]).
    expect(writer.batches[0]).toBe(1);
    expect(writer.batches.slice(1)).not.toContain(1);
    expect(writer.batches.reduce((a, b) => a + b, 0)).toBe(41);
    expect(await careEvents(svc.store.db).countDocuments({ _id: { $in: events.map((e) => e.eventId) } })).toBe(41);
  });
});

/** Counts single writes too, as batches of one. */
class SinglesCounted extends CountingWriter {
  override write(e: QueuedEvent): Promise<WriteOutcome> {
    this.batches.push(1);
    return super.write(e);
  }
}

/** FamilyShares whose first binding read lets a whole purge run before it answers: the read a write made just before a purge. */
class PurgedAfterRead extends FamilyShares {
  private raced = false;
  constructor(private readonly purge: () => Promise<unknown>) {
    super(svc.store.db, svc.credentials);
  }
  override async currentBinding(institutionId: string, subjectRef: string) {
    const read = await super.currentBinding(institutionId, subjectRef);
    if (!this.raced) {
      this.raced = true;
      await this.purge();
    }
    return read;
  }
}

describe('ingest - a purge that returns while a write is between its binding read and its append', () => {
  for (const batch of [false, true]) {
    it(`when the write is ${batch ? 'a batch' : 'one event'}, then the event received before the purge is taken back out, not left stored`, async () => {
      const subject = `client-purge-race-${batch ? 'batch' : 'one'}`;
      await shareWith(svc, partner, subject, fam);
      const shares = new FamilyShares(svc.store.db, svc.credentials);
      const lid = (await shares.binding(partner.institutionId, subject))!.link.linkId;
      const e = queued(undefined, { subjectRef: subject, linkId: lid, receivedAt: new Date(Date.now() - 1000).toISOString() });
      const writer = new CareEventWriter(
        svc.timelines,
        new PurgedAfterRead(async () => {
          await shares.markPurged(partner.institutionId, subject);
          await new CareEventWriter(svc.timelines, shares).purge(partner.institutionId, subject);
        }),
      );
      const outcomes = batch ? await writer.writeMany([e]) : [await writer.write(e)];
      expect(outcomes).toEqual(['dropped']);
      expect(await careEvents(svc.store.db).countDocuments({ _id: e.eventId })).toBe(0);
    });
  }
});

/** Holds every write without the urgent event in it until released. */
class RoutineHeld extends CareEventWriter {
  private release!: () => void;
  private readonly held = new Promise<void>((resolve) => (this.release = resolve));
  constructor(
    timelines: ConstructorParameters<typeof CareEventWriter>[0],
    shares: FamilyShares,
    private readonly urgentId: string,
  ) {
    super(timelines, shares);
  }
  override async write(e: QueuedEvent): Promise<WriteOutcome> {
    if (e.eventId !== this.urgentId) await this.held;
    return super.write(e);
  }
  override async writeMany(events: QueuedEvent[]): Promise<WriteOutcome[]> {
    if (!events.some((e) => e.eventId === this.urgentId)) await this.held;
    return super.writeMany(events);
  }
  letGo(): void {
    this.release();
  }
}

const urgentTotal = async () => (await registry.getSingleMetric('carecircle_ingest_urgent_total')!.get()).values[0]?.value ?? 0;

describe('ingest - an event that may raise an alert takes the urgent lane', () => {
  it('when routine events are held up on their way to the store, then a note about a fall is still written, through its own lane', async () => {
    const s = ingestStream(`${svc.config.busNamespace}_lanes`, `${subjects(svc.config.busNamespace).ingestEvents}.lanes`);
    const sink = new StreamSink(svc.bus.durable!, s, 10_000);
    const routine = Array.from({ length: 20 }, (_, i) => queued({ caregiver_id: 'cg-1', note_text: `Lunch eaten, round ${i}.` }));
    const fall = queued({ caregiver_id: 'cg-1', note_text: 'She fell in the hallway this morning.' });
    expect(new Set(routine.map(laneOf))).toEqual(new Set(['routine']));
    expect(laneOf(fall)).toBe('urgent');
    for (const e of [...routine, fall]) await sink.put(e, laneOf(e));
    expect(await svc.bus.durable!.consumerState(s.stream, s.urgent.durable)).toEqual({ pending: 1, ackPending: 0 });
    expect(await svc.bus.durable!.consumerState(s.stream, s.durable)).toEqual({ pending: 20, ackPending: 0 });

    const writer = new RoutineHeld(svc.timelines, new FamilyShares(svc.store.db, svc.credentials), fall.eventId);
    const consumer = startIngestConsumer(svc.bus.durable!, s, writer, new DeadLetters(svc.store.db), createLogger('silent'), {
      concurrency: 8,
      ackWaitMs: 10_000,
      maxDeliveries: 2,
    });
    const ids = routine.map((e) => e.eventId);
    try {
      // Were both lanes one queue, the fall would wait behind the held routine batch for ever.
      await vi.waitFor(async () => expect(await careEvents(svc.store.db).countDocuments({ _id: fall.eventId })).toBe(1), { timeout: 20_000, interval: 50 });
      expect(await careEvents(svc.store.db).countDocuments({ _id: { $in: ids } })).toBe(0);
      writer.letGo();
      await vi.waitFor(
        async () => {
          const left = await ingestBacklog(svc.bus.durable!, s);
          if (left.pending || left.ackPending) throw new Error(`${left.pending} pending, ${left.ackPending} unacknowledged`);
        },
        { timeout: 20_000, interval: 50 },
      );
    } finally {
      writer.letGo();
      await consumer.stop();
    }
    expect(await careEvents(svc.store.db).countDocuments({ _id: { $in: ids } })).toBe(20);
  });

  it('when a partner sends a visit, a note about a fall and a reading, then the note and the reading are counted on the urgent lane and all three are stored', async () => {
    const before = await urgentTotal();
    const onTime = new Date(Date.now() - 60_000).toISOString();
    const events = [
      visit(partner, SUBJECT, { source_event_id: 'lane-visit', payload: { caregiver_id: 'cg-12', scheduled_start: onTime, actual_start: onTime } }),
      {
        ...visit(partner, SUBJECT, { source_event_id: 'lane-fall' }),
        event_type: 'note_added',
        payload: { caregiver_id: 'cg-1', note_text: 'Found her on the floor; she had a fall overnight.' },
      },
      {
        ...visit(partner, SUBJECT, { source_event_id: 'lane-pulse' }),
        event_type: 'vital_recorded',
        payload: { vital_type: 'pulse', value: 72, unit: '/min', recorded_by: 'cg-1' },
      },
    ];
    const lanes: number[] = [];
    for (const e of events) {
      const res = await postEvent(svc.urls.pipe!, partner, e);
      expect(res.status).toBe(202);
      lanes.push((await urgentTotal()) - before);
    }
    expect(lanes).toEqual([0, 1, 2]);
    await drained(svc.bus, svc.config);
    expect(
      await careEvents(svc.store.db).countDocuments({
        institutionId: partner.institutionId,
        sourceEventId: { $in: ['lane-visit', 'lane-fall', 'lane-pulse'] },
      }),
    ).toBe(3);
  });
});
