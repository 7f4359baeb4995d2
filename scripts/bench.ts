// Benchmarks you can run beside a running carecircle: every server on a free loopback port, the
// load from a process of its own, every figure side by side in one run and summed up as ratios.
//   npm run bench                      every part: directory, workspace, ingest, bridge, growth, portal, alerts, digests
//   npm run bench -- <part> [<part>…]  only those parts
// BENCH_REQUESTS, BENCH_SECONDS, BENCH_CONCURRENCY (and the rest in scripts/bench/knobs.ts) tune it;
// NATS_URL / MONGO_URL use running servers instead of starting nats-server and FerretDB.
import { readFileSync } from 'node:fs';
import os from 'node:os';
import { VERSION } from '../src/version.js';
import { benchAlerts } from './bench/alerts.js';
import { benchBridge } from './bench/bridge.js';
import { benchDigests } from './bench/digests.js';
import { benchDirectory } from './bench/directory.js';
import { benchGrowth } from './bench/growth.js';
import { benchIngest } from './bench/ingest.js';
import { benchPortal } from './bench/portal.js';
import { benchWorkspace } from './bench/workspace.js';
import { startInfra, type Infra } from './bench/infra.js';
import { KNOBS } from './bench/knobs.js';
import { machineLines, note, printSummary, progress } from './bench/report.js';

const PARTS: Record<string, (infra: Infra) => Promise<void>> = {
  directory: benchDirectory,
  workspace: benchWorkspace,
  ingest: benchIngest,
  bridge: benchBridge,
  growth: benchGrowth,
  portal: benchPortal,
  alerts: benchAlerts,
  digests: benchDigests,
};

const asked = process.argv.slice(2);
const unknown = asked.filter((p) => !(p in PARTS));
if (unknown.length) {
  process.stderr.write(`unknown part ${unknown.join(', ')}; parts: ${Object.keys(PARTS).join(', ')}\n`);
  process.exit(2);
}
const parts = asked.length ? asked : Object.keys(PARTS);

const sdkVersion = (JSON.parse(readFileSync(new URL('../node_modules/@modelcontextprotocol/sdk/package.json', import.meta.url), 'utf8')) as { version: string })
  .version;
progress(`starting nats-server and the store for: ${parts.join(', ')}`);
const infra = await startInfra();
const started = Date.now();
let failed = false;
try {
  process.stdout.write(`## carecircle benchmarks\n\n`);
  note(machineLines({ carecircle: VERSION, ...infra.versions, 'MCP TypeScript SDK': sdkVersion }).join('\n'));
  note(
    `- knobs: BENCH_REQUESTS=${KNOBS.requests} BENCH_SECONDS=${KNOBS.seconds} BENCH_CONCURRENCY=${KNOBS.concurrency.join(',')} BENCH_WARMUP=${KNOBS.warmup} BENCH_ROUNDS=${KNOBS.rounds} BENCH_LOG_LEVEL=${KNOBS.logLevel}`,
  );
  for (const part of parts) {
    try {
      await PARTS[part]!(infra);
    } catch (err) {
      failed = true;
      process.stderr.write(`bench ${part} failed: ${(err as Error).stack ?? String(err)}\n`);
      note(`\n(${part} failed: ${(err as Error).message})`);
    }
  }
  printSummary();
  note(
    `Ran ${parts.join(', ')} in ${((Date.now() - started) / 1000).toFixed(0)} s; load average at the end ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}.`,
  );
} finally {
  await infra.stop();
}
process.exit(failed ? 1 : 0);
