// The alert fan-out on the embedded store, in commands: an insert costs FerretDB v1 little and an
// update or a read goes through the whole collection, so alerts decided together are queued with
// one insert of their deliveries and one of their decisions (written already fanned out), whatever
// their number; and a fan-out cut short before its decisions were written queues nothing twice
// when the same alerts are decided again. Command monitoring on the test's own client counts them.
import { MongoClient, type Db } from 'mongodb';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { KvAttemptClaims } from '../src/alerts/claims.js';
import { QUEUE_GRACE_MS } from '../src/alerts/takes.js';
import { alertMessageId, LOCAL_OUTBOX } from '../src/alerts/channels.js';
import type { QueuedDelivery } from '../src/alerts/queue.js';
import { NatsBus } from '../src/bus/nats.js';
import { loadConfig } from '../src/config.js';
import { createLogger } from '../src/log.js';
import type { AlertEngine } from '../src/alerts/engine.js';
import { ALERT_DECISIONS, ALERT_DELIVERIES, type DecisionRecord, type DeliveryRecord } from '../src/alerts/outbox.js';
import type { Candidate } from '../src/alerts/rules.js';
import { databaseName } from '../src/store/mongo.js';
import { engineOn } from './harness/alertEngine.js';
import { sentCommands, watchedDatabaseUrl, type SentCommand } from './harness/servers.js';

let client: MongoClient | undefined;
let commands: SentCommand[] = [];
let db: Db;
const NOW = new Date('2026-11-25T10:00:00Z');
const MEMBERS = ['u_fo1', 'u_fo2'];

beforeAll(async () => {
  const url = watchedDatabaseUrl(inject('mongoUrl'));
  client = await new MongoClient(url).connect();
  commands = sentCommands(client);
  db = client.db(databaseName(url));
  const created = new Date(NOW.getTime() - 30 * 86_400_000);
  await db.collection('workspaces').insertOne({ _id: 'ws_fo', name: 'F', ownerUid: MEMBERS[0], sandbox: false, createdAt: created } as never);
  await db.collection('users').insertMany(
    MEMBERS.map((uid) => ({
      _id: uid,
      email: `${uid}@example.com`,
      tenant: 'family',
      createdAt: created,
      lastSignInAt: created,
      timeZone: 'UTC',
    })) as never[],
  );
  await db.collection('workspace_members').insertMany(
    MEMBERS.map((uid, i) => ({
      _id: `ws_fo:${uid}`,
      workspaceId: 'ws_fo',
      uid,
      email: `${uid}@example.com`,
      role: i === 0 ? 'caregiver' : 'viewer',
      joinedAt: created,
    })) as never[],
  );
  await db.collection('loved_ones').insertOne({
    _id: 'lo_fo',
    workspaceId: 'ws_fo',
    firstName: 'Rose',
    lastName: 'Test',
    displayName: 'Rose Test',
    inboxAddress: 'rose-fo@in.example.com',
    sandbox: false,
    createdAt: created,
  } as never);
});
afterAll(async () => {
  await db?.dropDatabase();
  await client?.close();
});

const engine = () => engineOn(db, NOW.getTime());

/** A batch sent, then each delivery settled (marked sent, or not to be sent now). */
const settled = async (batch: ReturnType<AlertEngine['deliverMany']>) => Promise.all((await batch).map((b) => b.done));

const falls = (n: number, tag: string): Candidate[] =>
  Array.from({ length: n }, (_, i) => ({
    key: `flagged_note:evt_${tag}${i}`,
    kind: 'flagged_note' as const,
    lovedOneId: 'lo_fo',
    workspaceId: 'ws_fo',
    what: 'a note mentions a fall',
    path: '/care/lo_fo',
    at: NOW,
  }));

describe('the alert fan-out on the embedded store, in commands', () => {
  it('when five alerts are decided together, then their ten deliveries go in one insert, their decisions in one more, already fanned out, and nothing is updated', async () => {
    const candidates = falls(5, 'burst');
    commands.length = 0;
    expect(await engine().decideAll(candidates, NOW)).toBe(5);
    const writes = commands.filter((c) => ['insert', 'update', 'delete', 'findAndModify'].includes(c.name)).map((c) => `${c.name} ${c.collection}`);
    expect(writes).toEqual([`insert ${ALERT_DELIVERIES}`, `insert ${ALERT_DECISIONS}`]);
    const deliveries = await db
      .collection<DeliveryRecord>(ALERT_DELIVERIES)
      .find({ decisionId: { $in: candidates.map((c) => c.key) } })
      .toArray();
    expect(deliveries.map((d) => d._id).sort()).toEqual(candidates.flatMap((c) => MEMBERS.map((uid) => `${c.key}|${uid}|email`)).sort());
    const decisions = await db
      .collection<DecisionRecord>(ALERT_DECISIONS)
      .find({ _id: { $in: candidates.map((c) => c.key) } })
      .toArray();
    expect(decisions.map((d) => d.fannedOut)).toEqual([true, true, true, true, true]);
    // Decided once: the same candidates again are found decided by one read, and nothing is written.
    commands.length = 0;
    expect(await engine().decideAll(candidates, NOW)).toBe(0);
    expect(commands.map((c) => `${c.name} ${c.collection}`)).toEqual([`find ${ALERT_DECISIONS}`]);
  });

  it('when the work queue hands over ten deliveries together, then they are taken with one update and one read, sent, and marked sent with one update', async () => {
    const candidates = falls(5, 'send');
    expect(await engine().decideAll(candidates, NOW)).toBe(5);
    const ids = candidates.flatMap((c) => MEMBERS.map((uid) => `${c.key}|${uid}|email`));
    commands.length = 0;
    expect(await settled(engine().deliverMany(ids.map((id) => ({ id }))))).toEqual(ids.map(() => ({ settled: true })));
    expect(commands.filter((c) => c.collection === ALERT_DELIVERIES).map((c) => c.name)).toEqual(['update', 'find', 'update']);
    const rows = await db
      .collection<DeliveryRecord>(ALERT_DELIVERIES)
      .find({ _id: { $in: ids } })
      .toArray();
    expect(rows.map((r) => [r.state, r.message, r.lease])).toEqual(ids.map(() => ['sent', undefined, undefined]));
    // Handed over again (a redelivery from the queue): nothing is taken, each is settled, none sent twice.
    commands.length = 0;
    expect(await settled(engine().deliverMany(ids.map((id) => ({ id }))))).toEqual(ids.map(() => ({ settled: true })));
    expect(commands.filter((c) => c.collection === LOCAL_OUTBOX)).toEqual([]);
  });

  it('when a fan-out queued the deliveries and died before writing its decisions, then deciding again writes the decisions and queues nothing twice', async () => {
    const candidates = falls(2, 'cut');
    expect(await engine().decideAll(candidates, NOW)).toBe(2);
    const before = await db
      .collection<DeliveryRecord>(ALERT_DELIVERIES)
      .find({ decisionId: { $in: candidates.map((c) => c.key) } })
      .toArray();
    // The crash: the decisions never reached the store.
    await db.collection(ALERT_DECISIONS).deleteMany({ _id: { $in: candidates.map((c) => c.key) } } as never);
    expect(await engine().decideAll(candidates, NOW)).toBe(2);
    const after = await db
      .collection<DeliveryRecord>(ALERT_DELIVERIES)
      .find({ decisionId: { $in: candidates.map((c) => c.key) } })
      .toArray();
    expect(after).toHaveLength(4);
    // The deliveries first queued are the ones kept (their mail and its unsubscribe link as made then).
    expect(after.map((d) => d.message?.text).sort()).toEqual(before.map((d) => d.message?.text).sort());
    expect(await db.collection(ALERT_DECISIONS).countDocuments({ _id: { $in: candidates.map((c) => c.key) }, fannedOut: true } as never)).toBe(2);
  });
});

describe('the alert sender on NATS, its takes claimed in key-value', () => {
  const buses: NatsBus[] = [];
  afterAll(async () => {
    await Promise.all(buses.splice(0).map((b) => b.close()));
  });
  /** One process's claims on a shared bucket: its own NATS connection. */
  const claimsOn = async (bucket: string) => {
    const bus = await NatsBus.connect(inject('natsUrl'), createLogger('silent'), 'alert-claims-test');
    buses.push(bus);
    return new KvAttemptClaims(bus.kv, bucket);
  };
  const bucketName = () => `test_alert_claims_${randomBytes(5).toString('hex')}`;
  /** What the fan-out hands the work queue for each delivery it inserted: the delivery whole. */
  const queued = async (ids: readonly string[]): Promise<QueuedDelivery[]> =>
    (
      await db
        .collection<DeliveryRecord>(ALERT_DELIVERIES)
        .find({ _id: { $in: [...ids] } })
        .toArray()
    ).map(({ state: _s, attempts: _a, ...fresh }) => ({
      id: fresh._id,
      lovedOneId: fresh.lovedOneId,
      fresh,
    }));
  const mailsOf = async (ids: readonly string[]) =>
    db.collection(LOCAL_OUTBOX).countDocuments({ 'headers.Message-ID': { $in: ids.map((id) => alertMessageId(id, loadConfig({}).appUrl)) } });

  it('when the queue hands over deliveries just fanned out, then they are sent without a read of the outbox and marked sent with one update; handed over again, none goes twice', async () => {
    const claims = await claimsOn(bucketName());
    const candidates = falls(3, 'kvsend');
    expect(await engineOn(db, NOW.getTime(), claims).decideAll(candidates, NOW)).toBe(3);
    const ids = candidates.flatMap((c) => MEMBERS.map((uid) => `${c.key}|${uid}|email`));
    const items = await queued(ids);
    commands.length = 0;
    expect(await settled(engineOn(db, NOW.getTime() + 1_000, claims).deliverMany(items))).toEqual(ids.map(() => ({ settled: true })));
    expect(commands.filter((c) => c.collection === ALERT_DELIVERIES).map((c) => c.name)).toEqual(['update']);
    const rows = await db
      .collection<DeliveryRecord>(ALERT_DELIVERIES)
      .find({ _id: { $in: ids } })
      .toArray();
    expect(rows.map((r) => [r.state, r.message])).toEqual(ids.map(() => ['sent', undefined]));
    expect(await mailsOf(ids)).toBe(6);
    // A redelivery from the queue (the message as first sent), and one naming the ids only.
    commands.length = 0;
    expect(await settled(engineOn(db, NOW.getTime() + 2_000, claims).deliverMany(ids.map((id) => ({ id }))))).toEqual(ids.map(() => ({ settled: true })));
    expect(commands.filter((c) => c.collection === ALERT_DELIVERIES).map((c) => c.name)).toEqual(['find']);
    expect(await mailsOf(ids)).toBe(6);
  });

  it('when two processes are handed the same deliveries, then each attempt is claimed by one of them and each member gets one mail', async () => {
    const bucket = bucketName();
    const [one, two] = [await claimsOn(bucket), await claimsOn(bucket)];
    const candidates = falls(4, 'kvrace');
    expect(await engineOn(db, NOW.getTime(), one).decideAll(candidates, NOW)).toBe(4);
    const ids = candidates.flatMap((c) => MEMBERS.map((uid) => `${c.key}|${uid}|email`));
    const items = await queued(ids);
    const [a, b] = await Promise.all([
      engineOn(db, NOW.getTime() + 1_000, one).deliverMany(items),
      engineOn(db, NOW.getTime() + 1_000, two).deliverMany(items),
    ]);
    const outcomes = await Promise.all([...a, ...b].map((o) => o.done));
    // Each delivery: settled by the process that sent it; the other asks again in ten seconds (the
    // holder may have died, and when its lease ends is not known there).
    expect(outcomes.filter((o) => o.settled)).toHaveLength(ids.length);
    expect(outcomes.filter((o) => !o.settled).map((o) => !o.settled && o.retryInMs)).toEqual(ids.map(() => 10_000));
    expect(await mailsOf(ids)).toBe(ids.length);
  });

  it('when a delivery waits in the outbox, then the pass over it leaves it to the queue for a minute, and sends it after that unless a sender holds it', async () => {
    const bucket = bucketName();
    const claims = await claimsOn(bucket);
    const candidates = falls(2, 'kvpass');
    expect(await engineOn(db, NOW.getTime(), claims).decideAll(candidates, NOW)).toBe(2);
    const ids = candidates.flatMap((c) => MEMBERS.map((uid) => `${c.key}|${uid}|email`));
    // Only these wait in the outbox (the tests before left some of theirs).
    await db.collection<DeliveryRecord>(ALERT_DELIVERIES).deleteMany({ _id: { $nin: ids } });
    // Just queued: the work queue's to send.
    expect(await engineOn(db, NOW.getTime() + 1_000, claims).deliver()).toEqual({ sent: 0, failed: 0, dead: 0 });
    // One of them held by a sender in another process (its first attempt claimed there).
    const [held, ...rest] = ids;
    expect(await (await claimsOn(bucket)).claim([{ id: held!, attempt: 0 }])).toEqual(new Set([held]));
    const later = NOW.getTime() + QUEUE_GRACE_MS + 1_000;
    expect(await engineOn(db, later, claims).deliver()).toEqual({ sent: rest.length, failed: 0, dead: 0 });
    expect(await mailsOf(rest)).toBe(rest.length);
    expect(await mailsOf([held!])).toBe(0);
    const states = await db
      .collection<DeliveryRecord>(ALERT_DELIVERIES)
      .find({ _id: { $in: ids } })
      .sort({ _id: 1 })
      .toArray();
    expect(states.map((r) => [r._id, r.state])).toEqual(ids.sort().map((id) => [id, id === held ? 'pending' : 'sent']));
  });
});
