// Part (e): how the embedded store's reads grow with everyone's data. list_care_events for one
// loved one and Settings' recent activity (GET /api/activity) at 1k, 10k and 100k stored rows
// in each collection, seeded directly, the family's own rows always the same 50.
import { performance } from 'node:perf_hooks';
import { MongoClient, type Collection } from 'mongodb';
import { databaseName } from '../../src/store/mongo.js';
import { careEvent, signUpFamily, type Family } from './family.js';
import type { Infra } from './infra.js';
import { KNOBS } from './knobs.js';
import { carecircleEnv, startCarecircle, stopAll, type Child } from './procs.js';
import { MCP_HEADERS } from './queries.js';
import { finding, fixed, heading, note, progress, table } from './report.js';

const OWN_ROWS = 50;
const BATCH = 1_000;
const DEFAULT_BUS_TIMEOUT_MS = 5_000;

export function growthSizes(max: number): number[] {
  const sizes = [1_000, 10_000, 100_000].filter((s) => s < max);
  return [...sizes, max];
}

function auditRow(n: number, uid: string, now = Date.now()) {
  return { _id: `aud_bench_${n}`, uid, tenant: 'family', method: 'tools/call', tool: 'list_care_events', success: true, durationMs: 4, authMethod: 'api-key', at: new Date(now - ((n * 7_919) % 31_536_000) * 1000) };
}

/** Grows both collections from `from` to `to` rows; row n < 50 belongs to the family, the rest to one of many others. */
async function seed(events: Collection, audit: Collection, family: Family, from: number, to: number): Promise<void> {
  let last = performance.now();
  const started = last;
  for (let n = from; n < to; n += BATCH) {
    const upto = Math.min(to, n + BATCH);
    const ids = Array.from({ length: upto - n }, (_, i) => n + i);
    const own = (i: number) => i < OWN_ROWS;
    await events.insertMany(ids.map((i) => (own(i) ? careEvent(i, family.lovedOneId, family.workspaceId) : careEvent(i, `lo_bench_${Math.floor(i / OWN_ROWS)}`, `ws_bench_${Math.floor(i / OWN_ROWS)}`))) as never[], { ordered: false });
    await audit.insertMany(ids.map((i) => auditRow(i, own(i) ? family.uid : `dev-bench-${Math.floor(i / OWN_ROWS)}`)) as never[], { ordered: false });
    if (performance.now() - last > 10_000 || upto === to) {
      last = performance.now();
      progress(`growth: seeded ${upto}/${to} rows in each collection (${((last - started) / 1000).toFixed(0)} s for this step)`);
    }
  }
}

/** p50 and max of timed calls: one uncounted warm-up, then up to N, at least 3, within the time budget. */
async function timeCalls(call: () => Promise<void>): Promise<{ p50: number; max: number; calls: number }> {
  await call();
  const samples: number[] = [];
  const budget = performance.now() + KNOBS.seconds * 2 * 1000;
  while (samples.length < KNOBS.growthCalls && (samples.length < 3 || performance.now() < budget)) {
    const t = performance.now();
    await call();
    samples.push(performance.now() - t);
  }
  samples.sort((a, b) => a - b);
  return { p50: samples[Math.floor(samples.length / 2)]!, max: samples[samples.length - 1]!, calls: samples.length };
}

export async function benchGrowth(infra: Infra): Promise<void> {
  heading('(e) Embedded store growth: one family\'s reads as every family\'s rows grow');
  const children: Child[] = [];
  // Slow reads must finish to be measured, not be cut off by the gateway's wait for a worker.
  const { env, cleanup } = await carecircleEnv(infra.database('growth'), { BUS_TIMEOUT_MS: '600000', GATEWAY_RETRY_WINDOW_MS: '600000' });
  const client = await new MongoClient(env.MONGO_URL!).connect();
  try {
    const sizes = growthSizes(KNOBS.growthMax);
    progress(`growth: starting carecircle embedded; sizes ${sizes.join(', ')} (BENCH_GROWTH_MAX=${KNOBS.growthMax}); a progress line every 10 s of seeding`);
    const service = await startCarecircle('carecircle', 'all', env);
    children.push(service);
    const appUrl = service.urls.app!;
    const family = await signUpFamily(appUrl, env);
    const db = client.db(databaseName(env.MONGO_URL!));
    const [events, audit] = [db.collection('care_events'), db.collection('mcp_audit_log')];

    const listBody = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'list_care_events', arguments: { lovedOneId: family.lovedOneId, limit: 20 } } });
    const listEvents = async () => {
      const res = await fetch(`${appUrl}/api/mcp`, { method: 'POST', headers: { ...MCP_HEADERS, cookie: family.cookie }, body: listBody });
      const json = (await res.json()) as { result?: { structuredContent?: { events?: unknown[] } }; error?: unknown };
      if (res.status !== 200 || json.error) throw new Error(`list_care_events: ${res.status} ${JSON.stringify(json).slice(0, 300)}`);
    };
    const activity = async () => {
      const res = await fetch(`${appUrl}/api/activity`, { headers: { cookie: family.cookie, accept: 'application/json' } });
      if (res.status !== 200) throw new Error(`GET /api/activity: ${res.status} ${(await res.text()).slice(0, 300)}`);
      await res.arrayBuffer();
    };

    const rows: (string | number)[][] = [];
    let seeded = 0;
    let last: { size: number; list: number; activity: number } | undefined;
    for (const size of sizes) {
      const t = performance.now();
      await seed(events, audit, family, seeded, size);
      const seconds = (performance.now() - t) / 1000;
      seeded = size;
      const list = await timeCalls(listEvents);
      const act = await timeCalls(activity);
      progress(`growth ${size}: list_care_events p50 ${fixed(list.p50)} ms, /api/activity p50 ${fixed(act.p50)} ms`);
      rows.push([size, `${seconds.toFixed(1)} s`, `${fixed(list.p50, 1)} (${fixed(list.max, 1)})`, `${fixed(act.p50, 1)} (${fixed(act.max, 1)})`, `${list.calls} / ${act.calls}`]);
      last = { size, list: list.p50, activity: act.p50 };
    }
    table(['rows in care_events and in mcp_audit_log', 'seeding this step', 'list_care_events p50 ms (max)', 'GET /api/activity p50 ms (max)', 'calls'], rows);
    note(
      `One at a time, with the session cookie, after one uncounted call. The family's loved one has ${OWN_ROWS} of the care events (the call asks for its newest 20) and the user ${OWN_ROWS} of the audit rows (Settings shows the newest); ` +
        `every other ${OWN_ROWS} rows belong to another family. Rows are inserted ${BATCH} at a time with insertMany. BUS_TIMEOUT_MS is raised so slow reads complete: ` +
        `at the default ${DEFAULT_BUS_TIMEOUT_MS / 1000} s, a read slower than that is answered 503.`,
    );
    if (last) {
      finding({ part: 'growth', what: `list_care_events p50 at ${last.size} rows`, value: `${fixed(last.list, 1)} ms`, ...(last.size >= 100_000 ? { target: '≤ 50 ms at 100k', meets: last.list <= 50 } : {}) });
      finding({ part: 'growth', what: `Settings' recent activity p50 at ${last.size} rows`, value: `${fixed(last.activity, 1)} ms` });
    }
  } finally {
    await stopAll(children);
    await client.close();
    cleanup();
  }
}
