// Bridge benchmark (npm run bench -- bridge): a `tools/call ping` round trip through the stdio
// bridge next to the same call straight over HTTP, interleaved in one run so both see the same
// service and load. One call at a time: the figure is latency, not throughput.
import { spawn } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { loadConfig } from '../src/config.js';
import { createLogger } from '../src/log.js';
import { startService } from '../src/service.js';
import { freePort, repoRoot, startMongo, startNats } from '../test/harness/servers.js';

const ROUNDS = Number(process.env.BENCH_BRIDGE_ROUNDS ?? 500);
const WARMUP = 50;

interface Summary {
  label: string;
  p50: number;
  p90: number;
  p99: number;
}

function summarise(label: string, samples: number[]): Summary {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
  return { label, p50: at(0.5), p90: at(0.9), p99: at(0.99) };
}

/** The bridge on pipes, as an assistant runs it: one line out, one line back per request. */
function startBridge(env: Record<string, string>) {
  const child = spawn(process.execPath, ['bridge/bin.js', '--log-level', 'warn'], { cwd: repoRoot, env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'inherit'] });
  const waiting = new Map<number, (reply: { result?: unknown; error?: unknown }) => void>();
  createInterface({ input: child.stdout }).on('line', (line) => {
    const reply = JSON.parse(line) as { id: number; result?: unknown; error?: unknown };
    waiting.get(reply.id)?.(reply);
    waiting.delete(reply.id);
  });
  let nextId = 1;
  const call = (method: string, params: Record<string, unknown>) =>
    new Promise<{ result?: unknown; error?: unknown }>((resolve) => {
      const id = nextId++;
      waiting.set(id, resolve);
      child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
    });
  const stop = () => new Promise<void>((resolve) => (child.once('close', () => resolve()), child.stdin.end()));
  return { call, stop };
}

export async function benchBridge(): Promise<void> {
  process.stderr.write(`bridge bench: ${ROUNDS} round trips each way, one at a time; starting NATS, a MongoDB-compatible server and carecircle…\n`);
  const [mongo, nats] = await Promise.all([startMongo(), startNats({ jetstream: false })]);
  const [app, auth, site] = await Promise.all([freePort(), freePort(), freePort()]);
  const config = loadConfig({
    LOG_LEVEL: 'silent', MONGO_URL: mongo.url, NATS_URL: nats.url, RATE_MCP_KEY_PER_MIN: '100000000',
    SITE_PORT: String(site), APP_PORT: String(app), AUTH_PORT: String(auth),
    SITE_URL: `http://127.0.0.1:${site}`, APP_URL: `http://127.0.0.1:${app}`, AUTH_URL: `http://127.0.0.1:${auth}`,
  });
  const svc = await startService('all', config, createLogger('silent'));
  let bridge: ReturnType<typeof startBridge> | undefined;
  try {
    const { mintDevIdToken } = await import('../src/identity/devIdp.js');
    const idToken = await mintDevIdToken(svc.store.db, config, { email: 'bridge-bench@example.com' });
    const session = await fetch(`${svc.urls.app}/api/auth/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ idToken }) });
    const cookie = session.headers.get('set-cookie')!.split(';')[0]!;
    const post = (path: string, body: unknown) =>
      fetch(`${svc.urls.app}${path}`, { method: 'POST', headers: { cookie, origin: config.appUrl, 'content-type': 'application/json' }, body: JSON.stringify(body) }).then((r) => r.json() as Promise<{ apiKey: string }>);
    await post('/api/workspace', { familyName: 'Bench family', firstName: 'Ada', lastName: 'Bench' });
    const { apiKey } = await post('/api/keys', { name: 'bridge bench' });

    bridge = startBridge({ CARECIRCLE_URL: config.appUrl, CARECIRCLE_API_KEY: apiKey });
    const init = await bridge.call('initialize', { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'bench', version: '1' } });
    if (init.error) throw new Error(`initialize through the bridge failed: ${JSON.stringify(init.error)}`);

    const ping = { name: 'ping', arguments: {} };
    const viaBridge = async () => {
      const reply = await bridge!.call('tools/call', ping);
      if (reply.error) throw new Error(`bridge call failed: ${JSON.stringify(reply.error)}`);
    };
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: ping });
    const headers = { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-03-26' };
    const viaHttp = async () => {
      const res = await fetch(`${config.appUrl}/api/mcp`, { method: 'POST', headers, body });
      if (res.status !== 200) throw new Error(`HTTP ${res.status}: ${await res.text()}`);
      await res.arrayBuffer();
    };

    for (let i = 0; i < WARMUP; i++) {
      await viaBridge();
      await viaHttp();
    }
    const samples = { bridge: [] as number[], http: [] as number[] };
    for (let i = 0; i < ROUNDS; i++) {
      // Alternate which goes first, so neither always runs on a warmer connection.
      const order = i % 2 === 0 ? (['http', 'bridge'] as const) : (['bridge', 'http'] as const);
      for (const which of order) {
        const t = performance.now();
        await (which === 'bridge' ? viaBridge() : viaHttp());
        samples[which].push(performance.now() - t);
      }
    }
    const http = summarise('HTTP straight to {APP_URL}/api/mcp', samples.http);
    const through = summarise('stdio → carecircle-mcp → HTTP', samples.bridge);
    process.stdout.write(`\ntools/call ping, ${ROUNDS} round trips each, one at a time (HTTP → NATS → worker, key auth, rate limit and audit on):\n\n`);
    process.stdout.write(`| path | p50 ms | p90 ms | p99 ms |\n| --- | ---: | ---: | ---: |\n`);
    for (const r of [http, through]) process.stdout.write(`| ${r.label} | ${r.p50.toFixed(2)} | ${r.p90.toFixed(2)} | ${r.p99.toFixed(2)} |\n`);
    const overhead = through.p50 - http.p50;
    process.stdout.write(`\nBridge overhead at the median: ${overhead.toFixed(2)} ms (${((overhead / http.p50) * 100).toFixed(0)}% of the direct round trip).\n`);
  } finally {
    await bridge?.stop();
    await svc.stop();
    await Promise.all([mongo.stop(), nats.stop()]);
  }
}
