// Part (c): the partner ingest. Signed events through pipe gateway → JetStream → worker → store,
// and the same without NATS (stored before the 202): the 202 rate and the end-to-end stored rate,
// against raw insertOne on the same store.
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Infra } from './infra.js';
import { KNOBS } from './knobs.js';
import { cpuCell, problems, runLoad, type LoadBounds, type Measured } from './load.js';
import { startPartnerDeployment } from './procs.js';
import { finding, fixed, heading, note, progress, rate, ratio, table } from './report.js';

const STORE_WAIT_MS = 120_000;

interface SignedRun {
  accepted: Measured;
  storedRate: number;
  missing: number;
}

/** One deployment (with NATS: JetStream between accept and store; without: stored before the 202), a family, a partner, and the signed load. */
async function signedRun(infra: Infra, mode: 'nats' | 'embedded', bounds: Bounds): Promise<SignedRun> {
  const nats: Record<string, string> = mode === 'nats' ? { NATS_URL: infra.natsUrl, BUS_NAMESPACE: `bench${randomBytes(4).toString('hex')}` } : {};
  progress(`ingest: starting carecircle (${mode === 'nats' ? 'NATS, JetStream' : 'in-process bus, no NATS'}), a family and a partner agency…`);
  const { service, db, family, institutionId, secret, stop } = await startPartnerDeployment(infra.database(`ingest-${mode}`), nats);
  try {
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
    const accepted = await runLoad(
      {
        kind: 'ingest',
        url: `${service.urls.pipe}/pipe/v1/events`,
        institutionId,
        secret,
        subjectRef: 'client-bench',
        tag: `bench-${randomBytes(4).toString('hex')}`,
        ...bounds,
      },
      mode === 'nats' ? [service, infra.nats, infra.store] : [service, infra.store],
      {
        // Measure from a drained queue: every warm-up event stored first.
        afterWarmup: async (warm) => {
          baseline = await waitFor(warm.ok);
          go = performance.now();
        },
        storeCommands: infra.storeCommands,
      },
    );
    const target = baseline + accepted.ok;
    const storedCount = await waitFor(target);
    const storedRate = (storedCount - baseline) / ((performance.now() - go) / 1000);
    progress(`ingest signed (${mode}): ${rate(accepted.perSecond)}/s accepted, ${rate(storedRate)}/s stored`);
    return { accepted, storedRate, missing: target - storedCount };
  } finally {
    await stop();
  }
}

type Bounds = LoadBounds;

/** The partner load of the ingest part (the alerts part sends the same): the first concurrency, the run's warm-up and bounds. */
export function ingestBounds(): Bounds {
  return { connections: KNOBS.concurrency[0]!, warmup: KNOBS.warmup, maxRequests: KNOBS.requests, maxSeconds: KNOBS.seconds };
}

export async function benchIngest(infra: Infra): Promise<void> {
  heading('(c) Ingest: signed partner events against raw insertOne');
  const bounds = ingestBounds();
  const connections = bounds.connections;
  const rawMongo = infra.database('ingest-raw');
  const raw = await runLoad({ kind: 'insert', mongoUrl: rawMongo, collection: 'bench_raw_inserts', tag: 'raw', ...bounds }, [infra.store], {
    storeCommands: infra.storeCommands,
  });
  progress(`ingest raw insertOne: ${rate(raw.perSecond)}/s`);
  const nats = await signedRun(infra, 'nats', bounds);
  const embedded = await signedRun(infra, 'embedded', bounds);

  const unexpected = (r: SignedRun) => (r.missing > 0 ? `${r.missing} not stored after ${STORE_WAIT_MS / 1000} s` : '');
  const rows = [
    [
      'raw insertOne of a care-event-sized document, same store',
      rate(raw.perSecond),
      fixed(raw.p50),
      fixed(raw.p99),
      ratio(1),
      cpuCell(raw.cpu),
      fixed(raw.storeCommands),
      problems(raw),
    ],
    ...(
      [
        ['NATS: signed event → 202 (JetStream publish acknowledged)', nats],
        ['embedded: signed event → 202 (stored before the reply)', embedded],
      ] as const
    ).flatMap(([what, r]) => [
      [
        what,
        rate(r.accepted.perSecond),
        fixed(r.accepted.p50),
        fixed(r.accepted.p99),
        ratio(r.accepted.perSecond / raw.perSecond),
        cpuCell(r.accepted.cpu),
        fixed(r.accepted.storeCommands),
        problems(r.accepted),
      ],
      [
        `${what.split(':')[0]}: signed event → visible in care_events (end to end)`,
        rate(r.storedRate),
        '',
        '',
        ratio(r.storedRate / raw.perSecond),
        '',
        '',
        unexpected(r),
      ],
    ]),
  ];
  table(['path', 'events/s', 'p50 ms', 'p99 ms', 'vs raw insertOne', 'CPU ms per event (total = by process)', 'store commands per event', 'unexpected'], rows);
  note(
    `${connections} connections each; up to ${KNOBS.requests} events or ${KNOBS.seconds} s. All events come from one institution for one linked client. ` +
      `The end-to-end rate counts from the start of the signed run until the last accepted event is visible (polled every 100 ms); CPU and store commands of the 202 rows cover the accept path and whatever the consumer did meanwhile.`,
  );
  finding({
    part: 'ingest',
    what: `202 rate vs raw insertOne, c=${connections} (NATS)`,
    value: ratio(nats.accepted.perSecond / raw.perSecond),
    target: '≥ 0.5×',
    meets: nats.accepted.perSecond >= 0.5 * raw.perSecond,
  });
  finding({
    part: 'ingest',
    what: 'stored (end to end) vs raw insertOne (NATS)',
    value: ratio(nats.storedRate / raw.perSecond),
    target: '≥ 0.4×',
    meets: nats.storedRate >= 0.4 * raw.perSecond,
  });
  finding({
    part: 'ingest',
    what: `202 (= stored) rate vs raw insertOne, c=${connections} (embedded)`,
    value: ratio(embedded.accepted.perSecond / raw.perSecond),
    target: '≥ 0.5×',
    meets: embedded.accepted.perSecond >= 0.5 * raw.perSecond,
  });
}
