// Benchmarks, measured side by side in one run and reported as ratios (never as test assertions).
//   npm run bench                 directory: tools/call search_care_resources, three ways
//   npm run bench -- ingest       partner ingest: signed events through JetStream to MongoDB, beside raw insertOne
//   npm run bench -- bridge       tools/call ping through the stdio bridge (carecircle-mcp), beside straight HTTP
import { performance } from 'node:perf_hooks';
import { loadConfig } from '../src/config.js';
import { createDirectoryServer, loadDirectory } from '../src/directory/handler.js';
import { createLogger } from '../src/log.js';
import { startService } from '../src/service.js';
import { openStore } from '../src/store/mongo.js';
import { perMinute, RateLimiter } from '../src/store/rateLimit.js';
import { startMongo, startNats } from '../test/harness/servers.js';
import { benchBridge } from './bench-bridge.js';
import { benchIngest } from './bench-ingest.js';

const log = createLogger('silent');
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 3000);

interface Result {
  label: string;
  rps: number;
  p50: number;
  p99: number;
}

async function measure(label: string, once: () => Promise<void>): Promise<Result> {
  for (let i = 0; i < Math.min(200, REQUESTS / 10); i++) await once(); // warm-up
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next++ < REQUESTS) {
        const t = performance.now();
        await once();
        latencies.push(performance.now() - t);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0;
  const result = { label, rps: REQUESTS / seconds, p50: at(0.5), p99: at(0.99) };
  process.stderr.write(`  ${label}: ${result.rps.toFixed(0)} req/s\n`);
  return result;
}

const searchCall = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'search_care_resources', arguments: { query: 'respite care for dementia', limit: 5 } } };

async function viaHttp(url: string): Promise<void> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(searchCall) });
  if (res.status !== 200) throw new Error(`HTTP ${res.status}: ${await res.text()}`);
  await res.arrayBuffer();
}

async function benchDirectory(): Promise<void> {
  process.stderr.write(`directory bench: ${REQUESTS} requests, ${CONCURRENCY} concurrent; starting NATS and a MongoDB-compatible server…\n`);
  const [mongo, nats] = await Promise.all([startMongo(), startNats({ jetstream: false })]);
  const results: Result[] = [];
  try {
    const server = createDirectoryServer(loadDirectory('http://localhost:8080'));
    results.push(
      await measure('handler in-process (no HTTP, no bus)', async () => {
        const reply = await server.handlePost({ method: 'POST', headers: {}, body: searchCall }, { requestId: 'b', clientIp: '127.0.0.1' });
        if (reply.status !== 200) throw new Error(`status ${reply.status}`);
      }),
    );
    const store = await openStore(mongo.url, log);
    const limiter = new RateLimiter(store.db);
    let n = 0;
    results.push(
      await measure('shared rate limit alone (MongoDB read + insert)', async () => {
        if (!(await limiter.take(`bench-${n++ % 64}`, perMinute(100_000_000))).allowed) throw new Error('refused');
      }),
    );
    await store.close();
    for (const [label, natsUrl] of [['HTTP → gateway → in-process bus → worker', undefined], ['HTTP → gateway → NATS → worker', nats.url]] as const) {
      const config = loadConfig({ LOG_LEVEL: 'silent', SITE_PORT: '0', MONGO_URL: mongo.url, RATE_DIRECTORY_MCP_PER_MIN: '100000000', ...(natsUrl ? { NATS_URL: natsUrl } : {}) });
      const svc = await startService('all', config, log);
      try {
        results.push(await measure(label, () => viaHttp(`${svc.urls.site}/api/mcp`)));
      } finally {
        await svc.stop();
      }
    }
  } finally {
    await Promise.all([mongo.stop(), nats.stop()]);
  }
  const base = results[0]!.rps;
  process.stdout.write(`\n| path | req/s | p50 ms | p99 ms | vs in-process handler |\n| --- | ---: | ---: | ---: | ---: |\n`);
  for (const r of results) process.stdout.write(`| ${r.label} | ${r.rps.toFixed(0)} | ${r.p50.toFixed(2)} | ${r.p99.toFixed(2)} | ${(r.rps / base).toFixed(3)}× |\n`);
  process.stdout.write(`\nEvery HTTP path includes the shared per-IP rate limit (one read and one insert in MongoDB per request),\nso against FerretDB's SQLite backend the HTTP rows are bounded by the rate-limit row.\n`);
}

async function benchWorkspace(): Promise<void> {
  process.stderr.write(`workspace bench: ${REQUESTS} requests, ${CONCURRENCY} concurrent; starting NATS and a MongoDB-compatible server…\n`);
  const [mongo, nats] = await Promise.all([startMongo(), startNats({ jetstream: false })]);
  const { freePort } = await import('../test/harness/servers.js');
  const [app, auth, site] = await Promise.all([freePort(), freePort(), freePort()]);
  const config = loadConfig({
    LOG_LEVEL: 'silent', MONGO_URL: mongo.url, NATS_URL: nats.url, RATE_MCP_KEY_PER_MIN: '100000000',
    SITE_PORT: String(site), APP_PORT: String(app), AUTH_PORT: String(auth),
    SITE_URL: `http://127.0.0.1:${site}`, APP_URL: `http://127.0.0.1:${app}`, AUTH_URL: `http://127.0.0.1:${auth}`,
  });
  const svc = await startService('all', config, log);
  const results: Result[] = [];
  try {
    const { mintDevIdToken } = await import('../src/identity/devIdp.js');
    const idToken = await mintDevIdToken(svc.store.db, config, { email: 'bench@example.com' });
    const session = await fetch(`${svc.urls.app}/api/auth/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ idToken }) });
    const cookie = session.headers.get('set-cookie')!.split(';')[0]!;
    const post = (path: string, body: unknown) =>
      fetch(`${svc.urls.app}${path}`, { method: 'POST', headers: { cookie, origin: config.appUrl, 'content-type': 'application/json' }, body: JSON.stringify(body) }).then((r) => r.json() as Promise<{ workspace: { id: string }; lovedOne: { id: string }; apiKey: string }>);
    const ws = await post('/api/workspace', { familyName: 'Bench family', firstName: 'Ada', lastName: 'Bench' });
    const { apiKey } = await post('/api/keys', { name: 'bench' });
    const events = svc.store.db.collection('care_events');
    await events.insertMany(Array.from({ length: 50 }, (_, i) => ({ _id: `evt_bench_${i}`, lovedOneId: ws.lovedOne.id, workspaceId: ws.workspace.id, source: 'partner', eventType: 'visit_started', occurredAt: new Date(Date.now() - i * 60_000), receivedAt: new Date(), payload: { caregiver_id: 'c1' } }) as never));
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'list_care_events', arguments: { limit: 20 } } });
    const call = (headers: Record<string, string>) => async () => {
      const res = await fetch(`${svc.urls.app}/api/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
      if (res.status !== 200) throw new Error(`HTTP ${res.status}: ${await res.text()}`);
      await res.arrayBuffer();
    };
    results.push(await measure('session cookie (no rate limit)', call({ cookie })));
    results.push(await measure('API key (rate limit + key lookup)', call({ authorization: `Bearer ${apiKey}` })));
  } finally {
    await svc.stop();
    await Promise.all([mongo.stop(), nats.stop()]);
  }
  const base = results[0]!.rps;
  process.stdout.write(`\ntools/call list_care_events over HTTP → NATS → worker, auth and audit on:\n\n| caller | req/s | p50 ms | p99 ms | vs session cookie |\n| --- | ---: | ---: | ---: | ---: |\n`);
  for (const r of results) process.stdout.write(`| ${r.label} | ${r.rps.toFixed(0)} | ${r.p50.toFixed(2)} | ${r.p99.toFixed(2)} | ${(r.rps / base).toFixed(3)}× |\n`);
}

const which = process.argv[2] ?? 'directory';
const benches: Record<string, () => Promise<void>> = { directory: benchDirectory, workspace: benchWorkspace, ingest: benchIngest, bridge: benchBridge };
const bench = benches[which];
if (!bench) {
  process.stderr.write(`unknown bench "${which}"; available: ${Object.keys(benches).join(', ')}\n`);
  process.exit(2);
}
await bench();
process.exit(0);
