// Benchmarks, measured side by side in one run and reported as ratios (never as test assertions).
//   npm run bench                 directory: tools/call search_care_resources, three ways
import { performance } from 'node:perf_hooks';
import { loadConfig } from '../src/config.js';
import { createDirectoryServer, loadDirectory } from '../src/directory/handler.js';
import { createLogger } from '../src/log.js';
import { startService } from '../src/service.js';
import { openStore } from '../src/store/mongo.js';
import { perMinute, RateLimiter } from '../src/store/rateLimit.js';
import { startMongo, startNats } from '../test/harness/servers.js';

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

const which = process.argv[2] ?? 'directory';
const benches: Record<string, () => Promise<void>> = { directory: benchDirectory };
const bench = benches[which];
if (!bench) {
  process.stderr.write(`unknown bench "${which}"; available: ${Object.keys(benches).join(', ')}\n`);
  process.exit(2);
}
await bench();
process.exit(0);
