// Part (d): what the stdio bridge (carecircle-mcp) adds to a call: tools/call ping through the
// bridge next to the same call straight over HTTP, interleaved, one call at a time (latency).
import { spawn } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { post as postOnce } from '../../bridge/transport.js';
import { repoRoot } from '../../test/harness/servers.js';
import { signUpFamily } from './family.js';
import type { Infra } from './infra.js';
import { KNOBS } from './knobs.js';
import { carecircleEnv, startCarecircle, stopAll, type Child } from './procs.js';
import { MCP_HEADERS } from './queries.js';
import { finding, fixed, heading, note, progress, table } from './report.js';

const WARMUP = 50;

/** The bridge on pipes, as an assistant runs it: one line out, one line back per request. */
function startBridge(env: Record<string, string>) {
  const child = spawn(process.execPath, ['bridge/bin.js', '--log-level', 'warn'], {
    cwd: repoRoot,
    env: { ...process.env, ...env },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
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

const quantile = (samples: number[], q: number) => {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
};

export async function benchBridge(infra: Infra): Promise<void> {
  heading('(d) Bridge: tools/call ping through the stdio bridge against straight HTTP');
  const children: Child[] = [];
  const { env, cleanup } = await carecircleEnv(infra.database('bridge'));
  let bridge: ReturnType<typeof startBridge> | undefined;
  try {
    progress('bridge: starting carecircle embedded, a family with an API key, and carecircle-mcp…');
    const service = await startCarecircle('carecircle', 'all', env);
    children.push(service);
    const appUrl = service.urls.app!;
    const family = await signUpFamily(appUrl, env);
    bridge = startBridge({ CARECIRCLE_URL: appUrl, CARECIRCLE_API_KEY: family.apiKey });
    const init = await bridge.call('initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bench', version: '1' } });
    if (init.error) throw new Error(`initialize through the bridge failed: ${JSON.stringify(init.error)}`);

    const ping = { name: 'ping', arguments: {} };
    const viaBridge = async () => {
      const reply = await bridge!.call('tools/call', ping);
      if (reply.error) throw new Error(`bridge call failed: ${JSON.stringify(reply.error)}`);
    };
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: ping });
    const headers = { ...MCP_HEADERS, authorization: `Bearer ${family.apiKey}` };
    // The same HTTP client the bridge sends with, so the difference is the stdio hop and the
    // bridge's own work, not one client against another.
    const endpoint = new URL(`${appUrl}/api/mcp`);
    const viaHttp = async () => {
      const res = await postOnce(endpoint, headers, body, AbortSignal.timeout(30_000));
      if (res.status !== 200) throw new Error(`HTTP ${res.status}: ${res.text}`);
    };
    for (let i = 0; i < WARMUP; i++) {
      await viaBridge();
      await viaHttp();
    }

    const samples = { bridge: [] as number[], http: [] as number[] };
    const deadline = performance.now() + KNOBS.seconds * 3 * 1000;
    for (let i = 0; i < KNOBS.bridgeRounds && performance.now() < deadline; i++) {
      // Alternate which goes first, so neither always runs on a warmer connection.
      for (const which of i % 2 === 0 ? (['http', 'bridge'] as const) : (['bridge', 'http'] as const)) {
        const t = performance.now();
        await (which === 'bridge' ? viaBridge() : viaHttp());
        samples[which].push(performance.now() - t);
      }
    }
    const rows = [
      ['HTTP straight to APP_URL/api/mcp', samples.http],
      ['stdio → carecircle-mcp → HTTP', samples.bridge],
    ] as const;
    table(
      ['path', 'calls', 'p50 ms', 'p90 ms', 'p99 ms'],
      rows.map(([label, s]) => [label, s.length, fixed(quantile(s, 0.5)), fixed(quantile(s, 0.9)), fixed(quantile(s, 0.99))]),
    );
    const overhead = quantile(samples.bridge, 0.5) - quantile(samples.http, 0.5);
    note(`Embedded carecircle, API key (key lookup, rate limit and audit on). Bridge overhead at the median: ${fixed(overhead)} ms.`);
    finding({ part: 'bridge', what: 'overhead at p50 (bridge − HTTP)', value: `${fixed(overhead)} ms`, target: '≤ 1 ms', meets: overhead <= 1 });
  } finally {
    await bridge?.stop();
    await stopAll(children);
    cleanup();
  }
}
