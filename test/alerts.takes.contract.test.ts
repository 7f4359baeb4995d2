// The contract of taking deliveries before sending them (src/alerts/takes.ts), run against both
// adapters: the outbox's own lease in the store, and claims in NATS key-value on a real
// nats-server. Two processes are two adapters on their own connections: an attempt one took, the
// other does not take. (Of two takes that cross, the claims let one win: src/alerts/claims.test.ts;
// the store's lease, on the embedded FerretDB whose conditional updates are not atomic across
// connections, serves the single-process run without NATS.)
import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { alertClaimsBucketName, KvAttemptClaims } from '../src/alerts/claims.js';
import { AlertOutbox, type DeliveryRecord, type NewDelivery } from '../src/alerts/outbox.js';
import { ClaimedTakes, LeasedTakes, QUEUE_GRACE_MS, type DeliveryTakes } from '../src/alerts/takes.js';
import { NatsBus } from '../src/bus/nats.js';
import { createLogger } from '../src/log.js';
import { useTestDatabase } from './harness/database.js';

const database = useTestDatabase();
const closers: (() => Promise<void>)[] = [];
afterAll(async () => {
  await Promise.all(closers.splice(0).map((c) => c()));
});

/** Two processes taking from one outbox, each with its own store connection (and NATS connection). */
type Pair = () => Promise<[DeliveryTakes, DeliveryTakes]>;
const process2 = async () => {
  const other = await database.connect();
  closers.push(other.close);
  return new AlertOutbox(other.db);
};
const adapters: [string, Pair][] = [
  ['the outbox’s own lease in the store', async () => [new LeasedTakes(new AlertOutbox(database.db)), new LeasedTakes(await process2())]],
  [
    'claims in NATS key-value',
    async () => {
      const bucket = alertClaimsBucketName(`t${randomBytes(5).toString('hex')}`);
      const claims = async () => {
        const bus = await NatsBus.connect(inject('natsUrl'), createLogger('silent'), 'alert-takes-contract');
        closers.push(() => bus.close());
        return new KvAttemptClaims(bus.kv, bucket);
      };
      return [new ClaimedTakes(new AlertOutbox(database.db), await claims()), new ClaimedTakes(await process2(), await claims())];
    },
  ],
];

const T0 = new Date('2026-11-20T10:00:00Z');
/** Deliveries queued at T0 (due then unless `notBefore` says later), as a fan-out inserts them. */
async function queued(n: number, notBefore = T0): Promise<NewDelivery[]> {
  const tag = randomBytes(4).toString('hex');
  const ds = Array.from({ length: n }, (_, i) => ({
    _id: `flagged_note:evt_${tag}${i}|u_${i}|email`,
    decisionId: `flagged_note:evt_${tag}${i}`,
    uid: `u_${i}`,
    lovedOneId: 'lo_takes',
    kind: 'flagged_note' as const,
    channel: 'email' as const,
    message: { to: `u_${i}@example.com`, subject: 'Rose: a note mentions a fall', text: 'A fall.', html: '<p>A fall.</p>', headers: {} },
    notBefore,
    createdAt: T0,
  }));
  await new AlertOutbox(database.db).enqueueMany(ds);
  return ds;
}
const byId = (rows: readonly DeliveryRecord[]) => rows.map((r) => r._id).sort();

describe.each(adapters)('taking deliveries: %s', (_, pair) => {
  it('when a second process is handed the deliveries the first took, then it takes none, and is told to ask again later', async () => {
    const [a, b] = await pair();
    const ds = await queued(6);
    const items = ds.map((d) => ({ id: d._id, lovedOneId: d.lovedOneId, fresh: d }));
    const now = new Date(T0.getTime() + 1_000);
    const first = await a.takeMany(items, now);
    expect(byId(first.taken)).toEqual(byId(ds as DeliveryRecord[]));
    for (const d of first.taken) expect(d).toMatchObject({ state: 'sending', attempts: 1, message: { subject: 'Rose: a note mentions a fall' } });
    const second = await b.takeMany(items, new Date(now.getTime() + 1_000));
    expect(second.taken).toEqual([]);
    expect(byId(second.others)).toEqual(byId(ds as DeliveryRecord[]));
    for (const d of second.others) expect(d.state === 'sending' && d.leaseUntil!.getTime() > now.getTime() + 1_000).toBe(true);
  });

  it('when a delivery is not due yet, or was sent, then it is not taken and comes back as it is', async () => {
    const [a] = await pair();
    const later = await queued(1, new Date(T0.getTime() + 3_600_000));
    const [sent] = await queued(1);
    const outbox = new AlertOutbox(database.db);
    const now = new Date(T0.getTime() + 1_000);
    const { taken } = await a.takeMany([{ id: sent!._id }], now);
    await outbox.sentMany(taken, now);
    const again = await a.takeMany([{ id: later[0]!._id }, { id: sent!._id }], new Date(now.getTime() + 1_000));
    expect(again.taken).toEqual([]);
    expect(Object.fromEntries(again.others.map((d) => [d._id, d.state]))).toEqual({ [sent!._id]: 'sent', [later[0]!._id]: 'pending' });
  });

  it('when a send failed, then the next attempt is taken once it is due again, counted as the second', async () => {
    const [a, b] = await pair();
    const [d] = await queued(1);
    const outbox = new AlertOutbox(database.db);
    const now = new Date(T0.getTime() + 1_000);
    const [first] = (await a.takeMany([{ id: d!._id }], now)).taken;
    expect(await outbox.failed(first!, 'SMTP 451', now)).toBe('retry');
    const retryAt = (await outbox.rowsOf([d!._id]))[0]!.notBefore;
    expect((await b.takeMany([{ id: d!._id }], now)).taken).toEqual([]);
    const second = await b.takeMany([{ id: d!._id }], new Date(retryAt.getTime() + 1_000));
    expect(second.taken.map((t) => [t._id, t.attempts])).toEqual([[d!._id, 2]]);
  });

  it('when two processes pass over the outbox, then every delivery due is taken once between them, and then none', async () => {
    const [a, b] = await pair();
    const ds = await queued(5);
    const outbox = new AlertOutbox(database.db);
    // Past the time the work queue is left to send them (the claims' pass waits that long).
    const now = new Date(T0.getTime() + QUEUE_GRACE_MS + 1_000);
    const mine = new Set(ds.map((d) => d._id));
    const took: DeliveryRecord[] = [];
    for (let turn = 0; turn < 40; turn++) {
      const batch = (await (turn % 2 ? b : a).takeDue(now, 500)).filter((d) => mine.has(d._id));
      // What a pass does next: send it and mark it sent.
      await outbox.sentMany(batch, now);
      took.push(...batch);
      if (took.length === ds.length) break;
    }
    expect(byId(took)).toEqual(byId(ds as DeliveryRecord[]));
    expect((await a.takeDue(now, 500)).filter((d) => mine.has(d._id))).toEqual([]);
    expect((await b.takeDue(now, 500)).filter((d) => mine.has(d._id))).toEqual([]);
  });
});
