// Part (c): the partner ingest. Signed events through pipe gateway → JetStream → worker → store:
// the 202 rate and the end-to-end stored rate, against raw insertOne on the same store.
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { MongoClient } from 'mongodb';
import { FamilyShares } from '../../src/ingest/familyShare.js';
import { PartnerStore } from '../../src/partner/records.js';
import { parseDataKey, SecretBox } from '../../src/partner/secretBox.js';
import { databaseName } from '../../src/store/mongo.js';
import { signUpFamily } from './family.js';
import type { Infra } from './infra.js';
import { KNOBS } from './knobs.js';
import { cpuCell, problems, runLoad } from './load.js';
import { carecircleEnv, startCarecircle, stopAll, type Child } from './procs.js';
import { finding, fixed, heading, note, progress, rate, ratio, table } from './report.js';

const STORE_WAIT_MS = 120_000;

export async function benchIngest(infra: Infra): Promise<void> {
  heading('(c) Ingest: signed partner events against raw insertOne');
  const children: Child[] = [];
  const { env, cleanup } = await carecircleEnv(infra.database('ingest'), { NATS_URL: infra.natsUrl, BUS_NAMESPACE: `bench${randomBytes(4).toString('hex')}` });
  const client = await new MongoClient(env.MONGO_URL!).connect();
  try {
    progress('ingest: starting carecircle (NATS, JetStream), a family and a partner agency…');
    const service = await startCarecircle('carecircle', 'all', env);
    children.push(service);
    const db = client.db(databaseName(env.MONGO_URL!));
    const family = await signUpFamily(service.urls.app!, env);
    const partners = new PartnerStore(db, new SecretBox(parseDataKey(env.DATA_KEY!)));
    const { institution, secret } = await partners.create({ name: 'Bench Home Care', id: 'bench-home' });
    const shares = new FamilyShares(db);
    const { linkCode } = await shares.enable(institution._id, 'client-bench');
    await shares.link(linkCode!.code, { lovedOneId: family.lovedOneId, workspaceId: family.workspaceId, uid: family.uid });

    const connections = KNOBS.concurrency[0]!;
    const bounds = { connections, warmup: KNOBS.warmup, maxRequests: KNOBS.requests, maxSeconds: KNOBS.seconds };
    const raw = await runLoad({ kind: 'insert', mongoUrl: env.MONGO_URL!, collection: 'bench_raw_inserts', tag: 'raw', ...bounds }, [infra.store], { storeCommands: infra.storeCommands });
    progress(`ingest raw insertOne: ${rate(raw.perSecond)}/s`);

    const events = db.collection('care_events');
    const stored = () => events.countDocuments({ lovedOneId: family.lovedOneId });
    const waitFor = async (count: number): Promise<number> => {
      const deadline = Date.now() + STORE_WAIT_MS;
      let n = await stored();
      while (n < count && Date.now() < deadline) n = (await sleep(100), await stored());
      return n;
    };
    let baseline = 0;
    let go = 0;
    const signed = await runLoad(
      { kind: 'ingest', url: `${service.urls.pipe}/pipe/v1/events`, institutionId: institution._id, secret: secret.value, subjectRef: 'client-bench', tag: `bench-${randomBytes(4).toString('hex')}`, ...bounds },
      [service, infra.nats, infra.store],
      {
        // Measure from a drained queue: every warm-up event stored first.
        afterWarmup: async (warm) => {
          baseline = await waitFor(warm.ok);
          go = performance.now();
        },
        storeCommands: infra.storeCommands,
      },
    );
    const target = baseline + signed.ok;
    const storedCount = await waitFor(target);
    const endToEnd = (performance.now() - go) / 1000;
    const storedRate = (storedCount - baseline) / endToEnd;
    progress(`ingest signed: ${rate(signed.perSecond)}/s accepted, ${rate(storedRate)}/s stored`);

    const rows = [
      ['raw insertOne of a care-event-sized document, same store', rate(raw.perSecond), fixed(raw.p50), fixed(raw.p99), ratio(1), cpuCell(raw.cpu), fixed(raw.storeCommands), problems(raw)],
      ['signed event → 202 (JetStream publish acknowledged)', rate(signed.perSecond), fixed(signed.p50), fixed(signed.p99), ratio(signed.perSecond / raw.perSecond), cpuCell(signed.cpu), fixed(signed.storeCommands), problems(signed)],
      ['signed event → visible in care_events (end to end)', rate(storedRate), '', '', ratio(storedRate / raw.perSecond), '', '', storedCount < target ? `${target - storedCount} not stored after ${STORE_WAIT_MS / 1000} s` : ''],
    ];
    table(['path', 'events/s', 'p50 ms', 'p99 ms', 'vs raw insertOne', 'CPU ms per event (total = by process)', 'store commands per event', 'unexpected'], rows);
    note(
      `${connections} connections each; up to ${KNOBS.requests} events or ${KNOBS.seconds} s. All events come from one institution for one linked client. ` +
        `The end-to-end rate counts from the start of the signed run until the last accepted event is visible (polled every 100 ms); CPU and store commands of the 202 row cover the accept path and whatever the consumer did meanwhile.`,
    );
    finding({ part: 'ingest', what: `202 rate vs raw insertOne, c=${connections}`, value: ratio(signed.perSecond / raw.perSecond), target: '≥ 0.5×', meets: signed.perSecond >= 0.5 * raw.perSecond });
    finding({ part: 'ingest', what: 'stored (end to end) vs raw insertOne', value: ratio(storedRate / raw.perSecond), target: '≥ 0.4×', meets: storedRate >= 0.4 * raw.perSecond });
  } finally {
    await stopAll(children);
    await client.close();
    cleanup();
  }
}
