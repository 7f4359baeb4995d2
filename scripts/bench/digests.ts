// Part (digests): the weekly digest run on the embedded store. BENCH_DIGEST_LOVED_ONES families,
// each a loved one with a week of care events and a member whose preferences put kinds in the
// weekly digest, due at the hour the engine's clock is set to; then the engine's digest pass
// (`queueDigests`: one delivery per member and loved one, composed from careSummary), timed whole,
// in the bench's own process on the shared FerretDB.
import { performance } from 'node:perf_hooks';
import { alertEngine } from '../../src/alerts/slice.js';
import { ALERT_PREFERENCES } from '../../src/alerts/preferences.js';
import { ALERT_KINDS, KIND_NAMES } from '../../src/alerts/kinds.js';
import { passThroughCredentials } from '../../src/auth/credentials.js';
import { loadConfig } from '../../src/config.js';
import { appendCareEvents } from '../../src/family/careEvents.js';
import { WORKSPACE_COLLECTIONS, type CareEventRecord } from '../../src/family/records.js';
import { createLogger } from '../../src/log.js';
import { SLICES } from '../../src/slices.js';
import { openStore } from '../../src/store/mongo.js';
import { openTimelines } from '../../src/store/timeline/timelines.js';
import type { Infra } from './infra.js';
import { KNOBS } from './knobs.js';
import { carecircleEnv, cpuMs } from './procs.js';
import { finding, fixed, heading, note, progress, table } from './report.js';

const DAY_MS = 86_400_000;
const WEEKDAYS = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'] as const;
/** Loved ones whose records go to the store in one batch. */
const BATCH = 50;

/** One day of a loved one's care, as an agency records it: a visit, the doses of the day (now and then one missed), readings, a note. */
function dayOfCare(i: number, day: number, dayStart: number, perDay: number): Omit<CareEventRecord, '_id' | 'lovedOneId' | 'workspaceId' | 'receivedAt'>[] {
  const at = (hour: number, minute = 0) => new Date(dayStart + hour * 3_600_000 + minute * 60_000);
  const by = `cg-${i % 40}`;
  const dose = (hour: number, n: number) =>
    (i + day + n) % 9 === 0
      ? { eventType: 'med_missed', occurredAt: at(hour, 30), payload: { medication_name: 'Metoprolol', reported_by: by } }
      : {
          eventType: 'med_administered',
          occurredAt: at(hour, 5),
          payload: { medication_name: n % 2 ? 'Lisinopril' : 'Metoprolol', dose_amount: 25, dose_unit: 'mg', administered_by: by },
        };
  const mix = [
    {
      eventType: 'visit_started',
      occurredAt: at(8),
      payload: { caregiver_id: by, scheduled_start: at(8).toISOString(), actual_start: at(8, 4).toISOString() },
    },
    dose(8, 0),
    { eventType: 'vital_recorded', occurredAt: at(8, 20), payload: { vital_type: 'pulse', value: 64 + ((i + day) % 20), unit: '/min', recorded_by: by } },
    {
      eventType: 'note_added',
      occurredAt: at(9),
      payload: { caregiver_id: by, note_text: `Breakfast eaten, a short walk in the garden; she asked about the grandchildren (day ${day}).` },
    },
    { eventType: 'visit_ended', occurredAt: at(9, 10), payload: { caregiver_id: by, actual_end: at(9, 10).toISOString(), duration_minutes: 66 } },
    dose(20, 1),
    {
      eventType: 'vital_recorded',
      occurredAt: at(20, 15),
      payload: { vital_type: 'blood_pressure', value: 124 + ((i * 3 + day) % 25), secondary_value: 80, unit: 'mmHg', recorded_by: by },
    },
    { eventType: 'vital_recorded', occurredAt: at(20, 20), payload: { vital_type: 'weight', value: 61.5, unit: 'kg', recorded_by: by } },
  ];
  return Array.from({ length: perDay }, (_, k) => mix[k % mix.length]!).map((e) => ({ ...e, source: 'partner' as const, institutionId: 'bench-home' }));
}

export async function benchDigests(infra: Infra): Promise<void> {
  heading('(digests) The weekly digest run on the embedded store');
  const lovedOnes = KNOBS.digestLovedOnes;
  const perDay = KNOBS.digestEventsPerDay;
  const { env, cleanup } = await carecircleEnv(infra.database('digests'));
  const config = loadConfig(env);
  const log = createLogger('silent');
  // The store as a carecircle process opens it: every slice's indexes, the timelines in the shape the store calls for.
  const store = await openStore(
    env.MONGO_URL!,
    log,
    SLICES.flatMap((s) => (s.indexes ? [s.indexes] : [])),
  );
  try {
    const db = store.db;
    const timelines = await openTimelines(db);
    // The digest hour: the last whole hour; the week of records runs up to it.
    const at = new Date(Math.floor(Date.now() / 3_600_000) * 3_600_000);
    const weekStart = at.getTime() - 7 * DAY_MS;
    const modes = Object.fromEntries(KIND_NAMES.map((k) => [k, ALERT_KINDS[k].byDefault === 'now' ? 'now' : 'weekly']));
    progress(`digests: seeding ${lovedOnes} loved ones, ${perDay * 7} care events each (timeline shape: ${timelines.shape})…`);
    const seedStarted = performance.now();
    for (let from = 0; from < lovedOnes; from += BATCH) {
      const ids = Array.from({ length: Math.min(BATCH, lovedOnes - from) }, (_, k) => from + k);
      const family = (i: number) => ({ ws: `ws_digest_${i}`, uid: `dev-digest-${i}`, lo: `lo_digest_${i}`, email: `digest-${i}@example.com` });
      const created = new Date(weekStart - 30 * DAY_MS);
      await db
        .collection(WORKSPACE_COLLECTIONS.workspaces)
        .insertMany(ids.map((i) => ({ _id: family(i).ws, name: `Family ${i}`, ownerUid: family(i).uid, sandbox: false, createdAt: created })) as never[]);
      await db.collection(WORKSPACE_COLLECTIONS.users).insertMany(
        ids.map((i) => ({
          _id: family(i).uid,
          email: family(i).email,
          tenant: 'family',
          createdAt: created,
          lastSignInAt: created,
          workspaceId: family(i).ws,
          timeZone: 'UTC',
        })) as never[],
      );
      await db.collection(WORKSPACE_COLLECTIONS.members).insertMany(
        ids.map((i) => ({
          _id: `${family(i).ws}:${family(i).uid}`,
          workspaceId: family(i).ws,
          uid: family(i).uid,
          email: family(i).email,
          role: 'caregiver',
          joinedAt: created,
          access: 'write',
        })) as never[],
      );
      await db.collection(WORKSPACE_COLLECTIONS.lovedOnes).insertMany(
        ids.map((i) => ({
          _id: family(i).lo,
          workspaceId: family(i).ws,
          firstName: `Rose${i}`,
          lastName: 'Bench',
          displayName: `Rose${i} Bench`,
          inboxAddress: `rose${i}@${config.inboxDomain}`,
          sandbox: false,
          createdAt: created,
          timeZone: 'UTC',
        })) as never[],
      );
      await db.collection(ALERT_PREFERENCES).insertMany(
        ids.map((i) => ({
          _id: `${family(i).uid}:${family(i).lo}`,
          uid: family(i).uid,
          lovedOneId: family(i).lo,
          modes,
          quiet: null,
          zone: 'UTC',
          digestDay: WEEKDAYS[at.getUTCDay()],
          digestHour: at.getUTCHours(),
          updatedAt: created,
        })) as never[],
      );
      const events: CareEventRecord[] = ids.flatMap((i) =>
        Array.from({ length: 7 }, (_, day) => dayOfCare(i, day, weekStart + day * DAY_MS, perDay))
          .flat()
          .map((e, n) => ({
            ...e,
            _id: `evt_digest_${i}_${n}`,
            lovedOneId: family(i).lo,
            workspaceId: family(i).ws,
            receivedAt: e.occurredAt,
            sourceEventId: `digest-${i}-${n}`,
          })),
      );
      await appendCareEvents(timelines, events);
    }
    const seedSeconds = (performance.now() - seedStarted) / 1000;
    progress(`digests: seeded in ${seedSeconds.toFixed(0)} s; the digest pass at ${at.toISOString()}…`);

    const engine = alertEngine({ config, db, credentials: passThroughCredentials(db), timelines, log, clock: () => at.getTime() });
    const commandsBefore = await infra.storeCommands();
    const storeBefore = cpuMs(infra.store.pid);
    const cpuBefore = process.cpuUsage();
    const started = performance.now();
    const { queued } = await engine.queueDigests();
    const ms = performance.now() - started;
    const cpu = process.cpuUsage(cpuBefore);
    const storeAfter = cpuMs(infra.store.pid);
    const commandsAfter = await infra.storeCommands();
    const perLovedOne = ms / lovedOnes;
    const ownCpu = (cpu.user + cpu.system) / 1000 / lovedOnes;
    const storeCpu = storeBefore === undefined || storeAfter === undefined ? undefined : (storeAfter - storeBefore) / lovedOnes;
    const commands = commandsBefore === undefined || commandsAfter === undefined ? undefined : (commandsAfter - commandsBefore) / lovedOnes;
    progress(`digests: ${queued} digests in ${(ms / 1000).toFixed(1)} s, ${fixed(perLovedOne, 1)} ms per loved one`);
    table(
      [
        'digest pass',
        'loved ones',
        'events each',
        'digests composed',
        'total s',
        'ms per loved one',
        'CPU ms per loved one (engine + FerretDB)',
        'store commands per loved one',
      ],
      [
        [
          'queueDigests, weekly, at the digest hour',
          lovedOnes,
          perDay * 7,
          queued,
          (ms / 1000).toFixed(1),
          fixed(perLovedOne, 1),
          `${fixed(ownCpu + (storeCpu ?? 0), 1)} = engine ${fixed(ownCpu, 1)} + FerretDB ${fixed(storeCpu, 1)}`,
          fixed(commands, 1),
        ],
      ],
    );
    note(
      `${lovedOnes} families (BENCH_DIGEST_LOVED_ONES), each one loved one with ${perDay} care events a day for the 7 days before the digest hour ` +
        `(BENCH_DIGEST_EVENTS_PER_DAY: a visit's start and end, two doses, one in nine missed, readings, a note), stored through the care timeline ` +
        `(${timelines.shape} shape, seeded in ${seedSeconds.toFixed(0)} s), and one member whose preferences put every kind but falls and missed doses in the weekly digest, due now. ` +
        `The engine runs in the bench's process on the shared FerretDB; the pass decides each digest, composes it from careSummary and queues its delivery (mail is not sent).`,
    );
    finding({
      part: 'digests',
      what: `weekly digest pass, ms per loved one (${lovedOnes}, ${queued} composed)`,
      value: `${fixed(perLovedOne, 1)} ms`,
      target: '≤ 20 ms',
      meets: queued === lovedOnes && perLovedOne <= 20,
    });
  } finally {
    await store.close();
    cleanup();
  }
}
