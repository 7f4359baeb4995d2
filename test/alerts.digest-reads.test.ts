// The digest pass on the embedded store, in commands: FerretDB v1 scans a collection for every
// read by anything but `_id`, so the pass reads members, accounts, preferences, tasks, portal
// connections, appointments and missed-dose decisions once for every loved one, not once each,
// writes the decisions, the deliveries and their marks with one command each for all of them,
// and a run after the day's digests went reads which were decided and writes nothing. Each
// digest still carries its own loved one's counts, tasks, appointments and sign-in notice.
// Command monitoring on the test's own client counts the reads.
import { MongoClient, type Db } from 'mongodb';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { alertMetrics } from '../src/alerts/metrics.js';
import { ALERT_DELIVERIES, type DeliveryRecord } from '../src/alerts/outbox.js';
import { ALERT_PREFERENCES } from '../src/alerts/preferences.js';
import { appendCareEvents, type CareEventRecord } from '../src/family/careEvents.js';
import { databaseName } from '../src/store/mongo.js';
import { timelinesOf } from '../src/store/timeline/timelines.js';
import { engineOn } from './harness/alertEngine.js';
import { closeAfterInsert, sentCommands, watchedDatabaseUrl, type SentCommand } from './harness/servers.js';

let client: MongoClient | undefined;
let commands: SentCommand[] = [];
let db: Db;

// A Sunday at 18:00 UTC: the default weekly digest's day and hour.
const NOW = new Date('2026-11-22T18:00:00Z');
const DAY = 86_400_000;
const FAMILIES = 3;
const fam = (i: number) => ({ ws: `ws_dr${i}`, uid: `u_dr${i}`, lo: `lo_dr${i}`, email: `dr${i}@example.com` });

beforeAll(async () => {
  const url = watchedDatabaseUrl(inject('mongoUrl'));
  client = await new MongoClient(url).connect();
  commands = sentCommands(client);
  db = client.db(databaseName(url));
  const timelines = timelinesOf(db, 'embedded');
  const ids = Array.from({ length: FAMILIES }, (_, i) => i);
  const created = new Date(NOW.getTime() - 30 * DAY);
  await db
    .collection('workspaces')
    .insertMany(ids.map((i) => ({ _id: fam(i).ws, name: `F${i}`, ownerUid: fam(i).uid, sandbox: false, createdAt: created })) as never[]);
  await db
    .collection('users')
    .insertMany(
      ids.map((i) => ({ _id: fam(i).uid, email: fam(i).email, tenant: 'family', createdAt: created, lastSignInAt: created, timeZone: 'UTC' })) as never[],
    );
  await db.collection('workspace_members').insertMany(
    ids.map((i) => ({
      _id: `${fam(i).ws}:${fam(i).uid}`,
      workspaceId: fam(i).ws,
      uid: fam(i).uid,
      email: fam(i).email,
      role: 'caregiver',
      joinedAt: created,
    })) as never[],
  );
  await db.collection('loved_ones').insertMany(
    ids.map((i) => ({
      _id: fam(i).lo,
      workspaceId: fam(i).ws,
      firstName: `Rose${i}`,
      lastName: 'Test',
      displayName: `Rose${i} Test`,
      inboxAddress: `rose${i}@in.example.com`,
      sandbox: false,
      createdAt: created,
    })) as never[],
  );
  // The first member chose every kind but falls and missed doses weekly; the others keep the defaults (the same, Sunday at 18:00).
  await db.collection(ALERT_PREFERENCES).insertOne({
    _id: `${fam(0).uid}:${fam(0).lo}`,
    uid: fam(0).uid,
    lovedOneId: fam(0).lo,
    modes: {
      missed_dose: 'now',
      flagged_note: 'now',
      out_of_range: 'weekly',
      late_visit: 'weekly',
      appointment_tomorrow: 'weekly',
      task_unclaimed: 'weekly',
      inbox_mail: 'never',
    },
    quiet: null,
    zone: 'UTC',
    digestDay: 'sun',
    digestHour: 18,
    updatedAt: created,
  } as never);
  // Loved one i has i + 1 visits this week, i doses given, a task and an appointment of its own;
  // the second one a dose nobody recorded and a portal that needs signing in again.
  let k = 0;
  for (const i of ids) {
    const mine: CareEventRecord[] = [
      ...Array.from({ length: i + 1 }, () => ({ eventType: 'visit_started', payload: { caregiver_id: 'cg-1' } })),
      ...Array.from({ length: i }, () => ({
        eventType: 'med_administered',
        payload: { medication_name: 'Metoprolol', dose_amount: 25, dose_unit: 'mg', administered_by: 'cg-1' },
      })),
    ].map((e) => {
      const at = new Date(NOW.getTime() - (1 + k) * 3_600_000);
      return {
        _id: `evt_dr${k++}`,
        lovedOneId: fam(i).lo,
        workspaceId: fam(i).ws,
        source: 'partner',
        institutionId: 'inst',
        occurredAt: at,
        receivedAt: at,
        ...e,
      };
    });
    await appendCareEvents(timelines, mine);
  }
  await db.collection('plan_tasks').insertMany(
    ids.map((i) => ({
      _id: `task_dr${i}`,
      workspaceId: fam(i).ws,
      lovedOneId: fam(i).lo,
      title: `Refill ${i}`,
      due: new Date(NOW.getTime() + DAY),
      timeZone: 'UTC',
      state: 'open',
      round: 0,
    })) as never[],
  );
  await db.collection('plan_appointments').insertMany(
    ids.map((i) => ({
      _id: `appt_dr${i}`,
      workspaceId: fam(i).ws,
      lovedOneId: fam(i).lo,
      title: `Checkup ${i}`,
      start: new Date(NOW.getTime() + 2 * DAY),
      end: new Date(NOW.getTime() + 2 * DAY + 3_600_000),
      timeZone: 'UTC',
      status: 'scheduled',
      sequence: 0,
    })) as never[],
  );
  await db.collection('alert_decisions').insertOne({
    _id: `missed_dose:med_dr:${NOW.getTime() - DAY}`,
    kind: 'missed_dose',
    lovedOneId: fam(1).lo,
    workspaceId: fam(1).ws,
    what: 'a dose of Metoprolol was missed',
    path: '/',
    at: new Date(NOW.getTime() - DAY),
    unrecorded: true,
    decidedAt: new Date(NOW.getTime() - DAY),
    fannedOut: true,
  } as never);
  await db
    .collection('portal_connections')
    .insertOne({ _id: `${fam(1).lo}:np`, lovedOneId: fam(1).lo, workspaceId: fam(1).ws, name: 'Northside Health', status: 'needs_sign_in' } as never);
});
afterAll(async () => {
  await db?.dropDatabase();
  await client?.close();
});

/** The alert engine on this test's database, its clock stopped at `at`. */
const engineAt = (at: number) => engineOn(db, at);

describe('the digest pass on the embedded store, in commands', () => {
  it('when three weekly digests fall due, then each collection they need is read once for all three, and each digest has its own loved one in it', async () => {
    const engine = engineAt(NOW.getTime());
    commands.length = 0;
    expect((await engine.queueDigests()).queued).toBe(FAMILIES);
    const reads = (collection: string) => commands.filter((c) => c.collection === collection && c.name !== 'insert' && c.name !== 'update').length;
    for (const collection of ['workspace_members', 'users', ALERT_PREFERENCES, 'plan_tasks', 'portal_connections', 'plan_appointments'])
      expect(reads(collection), collection).toBe(1);
    // Which digests were decided before, and the doses nobody recorded.
    expect(reads('alert_decisions')).toBe(2);
    // One write of each kind for all three, in this order: the decisions, the deliveries, the marks.
    const writes = commands.filter((c) => c.name === 'insert' || c.name === 'update').map((c) => `${c.name} ${c.collection}`);
    expect(writes).toEqual([`insert ${ALERT_DELIVERIES}`, 'insert alert_decisions']);

    const digests = await db.collection<DeliveryRecord>(ALERT_DELIVERIES).find({ kind: 'digest' }).toArray();
    const textFor = (i: number) => digests.find((d) => d.lovedOneId === fam(i).lo)!.message!.text;
    for (let i = 0; i < FAMILIES; i++) {
      const text = textFor(i);
      expect(text).toContain(`Doses given: ${i}, doses missed or refused: ${i === 1 ? 1 : 0}, readings: 0, visits: ${i + 1},`);
      expect(text).toContain(`Open tasks (1): Refill ${i} (due`);
      expect(text).toContain(`Checkup ${i}`);
      for (const other of [0, 1, 2].filter((o) => o !== i)) expect(text).not.toContain(`Refill ${other}`);
      expect(text.includes("Northside Health's portal needs someone")).toBe(i === 1);
    }
  });

  it('when the pass runs again the same day, then it reads which digests were decided and writes nothing', async () => {
    const engine = engineAt(NOW.getTime() + 60_000);
    commands.length = 0;
    expect((await engine.queueDigests()).queued).toBe(0);
    expect(commands.filter((c) => c.name === 'insert' || c.name === 'update')).toEqual([]);
    expect(commands.filter((c) => c.collection === 'alert_decisions').map((c) => c.name)).toEqual(['find']);
  });

  it('when a run dies after queueing the digests and before deciding them, then the next run decides each once and queues nothing twice', async () => {
    const nextWeek = NOW.getTime() + 7 * DAY;
    const decided = async () => (await alertMetrics.decided.get()).values.reduce((n, v) => n + v.value, 0);
    const before = await decided();
    // The dying run's connection: it drops as soon as the deliveries are written.
    const dyingClient = new MongoClient(watchedDatabaseUrl(inject('mongoUrl')), { monitorCommands: true });
    try {
      await dyingClient.connect();
      closeAfterInsert(dyingClient, ALERT_DELIVERIES);
      const dyingDb = dyingClient.db(db.databaseName);
      const dying = engineOn(dyingDb, nextWeek);
      await expect(dying.queueDigests()).rejects.toThrow();
    } finally {
      await dyingClient.close();
    }
    const week = { kind: 'digest', createdAt: new Date(nextWeek) } as const;
    const weekDecisions = { what: 'weekly digest', decidedAt: new Date(nextWeek) } as const;
    const queuedByTheDead = await db.collection<DeliveryRecord>(ALERT_DELIVERIES).find(week).toArray();
    expect(queuedByTheDead).toHaveLength(FAMILIES);
    expect(await db.collection('alert_decisions').countDocuments(weekDecisions)).toBe(0);

    // The next run finds them queued already: it decides them, and queues none again.
    expect((await engineAt(nextWeek).queueDigests()).queued).toBe(0);
    expect(await db.collection('alert_decisions').countDocuments({ ...weekDecisions, fannedOut: true })).toBe(FAMILIES);
    const queued = await db.collection<DeliveryRecord>(ALERT_DELIVERIES).find(week).toArray();
    expect(queued.map((d) => [d._id, d.message?.text]).sort()).toEqual(queuedByTheDead.map((d) => [d._id, d.message?.text]).sort());
    expect((await engineAt(nextWeek + 60_000).queueDigests()).queued).toBe(0);
    expect((await decided()) - before).toBe(FAMILIES);
  });
});
