// Bringing a store an earlier version wrote into the timeline shape, once, on start-up. Earlier
// versions kept each loved one's care events and inbox as month pages and lists in collections
// of its own (`care_timeline_<id>`, `care_settled_<id>`) and each uid's activity in
// `mcp_activity_<uid>`, or (the first version of the timeline shape) the owners' month
// collections `tl_…` and `tlm_…` in the store's own database; all of them derived from the records
// collections, which hold every record. So the timelines are built from the records (an insert
// per copy, a copy already there ignored, so a run stopped half-way is simply run again) and the
// old collections dropped.
import type { Db } from 'mongodb';
import type { Logger } from '../../log.js';
import { isDuplicateKey } from '../errors.js';
import type { Stream, TimelineRecord, Timelines } from './port.js';

export const MIGRATIONS = 'timeline_migrations';
const DONE = 'timelines-2';
const LEGACY = /^(care_timeline_|care_settled_|mcp_activity_|tl_|tlm_)/;
/** Records copied at once. */
const BATCH = 1_000;

/** Every declared stream's records taken into its timelines, the old collections dropped; a
 *  progress line every `every` owners. Does nothing on a store already migrated. */
export async function migrateTimelines(
  db: Db,
  timelines: Timelines,
  streams: readonly Stream<never>[],
  log: Logger,
  every = 500,
): Promise<'migrated' | 'done already'> {
  const marks = db.collection<{ _id: string; at: Date }>(MIGRATIONS);
  if (await marks.findOne({ _id: DONE })) return 'done already';
  const legacy = (await db.listCollections({}, { nameOnly: true }).toArray()).map((c) => c.name).filter((n) => LEGACY.test(n));
  // A fresh store has nothing to take in: it is marked and left.
  const fresh =
    legacy.length === 0 && (await Promise.all(streams.map((s) => db.collection(s.records).findOne({}, { projection: { _id: 1 } })))).every((r) => r === null);
  if (!fresh) {
    log.info({ shape: timelines.shape, legacyCollections: legacy.length }, 'timelines: taking in the records an earlier version stored');
    // The indexed shape reads the records collections themselves: nothing to copy there.
    if (timelines.shape === 'embedded') for (const stream of streams) await adoptAll(db, timelines, stream, log, every);
    for (const name of legacy) {
      await db
        .collection(name)
        .drop()
        .catch((err: unknown) => {
          if ((err as { code?: unknown }).code !== 26) throw err; // dropped by a run beside this one
        });
    }
    log.info({ dropped: legacy.length }, 'timelines: earlier pages and lists dropped');
  }
  // Processes started together on a fresh store all get here: an upsert is not atomic on every
  // server (FerretDB inserts after its read), so the mark a process beside this one wrote first is
  // as good as this one's.
  await marks.updateOne({ _id: DONE }, { $setOnInsert: { at: new Date() } }, { upsert: true }).catch((err: unknown) => {
    if (!isDuplicateKey(err)) throw err;
  });
  return 'migrated';
}

async function adoptAll(db: Db, timelines: Timelines, stream: Stream<never>, log: Logger, every: number): Promise<void> {
  const timeline = timelines.of(stream);
  const owners = new Set<string>();
  let batch: TimelineRecord[] = [];
  let records = 0;
  const flush = async () => {
    await timeline.adopt(batch as never[]);
    records += batch.length;
    batch = [];
  };
  for await (const r of db.collection<TimelineRecord & Record<string, unknown>>(stream.records).find({})) {
    const owner = String(r[stream.owner]);
    if (!owners.has(owner)) {
      owners.add(owner);
      if (owners.size % every === 0) log.info({ stream: stream.name, owners: owners.size, records: records + batch.length }, 'timelines: migrating');
    }
    batch.push(r);
    if (batch.length >= BATCH) await flush();
  }
  await flush();
  log.info({ stream: stream.name, owners: owners.size, records }, 'timelines: migrated');
}
