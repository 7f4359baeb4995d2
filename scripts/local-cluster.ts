// `npm run local-cluster`: a NATS cluster (three JetStream servers) and a MongoDB-compatible store
// on loopback ports of their own, for trying carecircle scaled out on one machine (README, "Run it
// scaled out"). Prints the environment the roles take, keeps running until Ctrl-C, then stops them.
import { spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { ensureFerretDbBinary, startFerretDb } from '../src/store/embedded/ferretdb.js';
import { findExecutable, isExecutableFile, isPortFree, spawnServerProcess, waitForPort, type ServerProcess } from '../src/store/embedded/process.js';
import { PACKAGE_ROOT } from '../src/version.js';

const USAGE = `usage: npm run local-cluster [-- --nats-port 4222] [--route-port 6222] [--store-port 27018] [--nodes 3] [--data-dir .carecircle/local-cluster]
  NATS server i (from 0) takes client port nats-port+i and route port route-port+i.`;

const say = (line: string) => process.stderr.write(`[local-cluster] ${line}\n`);
function fail(message: string): never {
  say(`ERROR: ${message}`);
  process.exit(1);
}

let args;
try {
  args = parseArgs({
    options: {
      'nats-port': { type: 'string', default: '4222' },
      'route-port': { type: 'string', default: '6222' },
      'store-port': { type: 'string', default: '27018' },
      nodes: { type: 'string', default: '3' },
      'data-dir': { type: 'string', default: path.join(PACKAGE_ROOT, '.carecircle', 'local-cluster') },
      help: { type: 'boolean' },
    },
  }).values;
} catch (err) {
  process.stderr.write(`${(err as Error).message}\n${USAGE}\n`);
  process.exit(2);
}
if (args.help) {
  process.stdout.write(`${USAGE}\n`);
  process.exit(0);
}
const number = (name: 'nats-port' | 'route-port' | 'store-port' | 'nodes', min: number, max: number): number => {
  const v = Number(args[name]);
  if (!Number.isInteger(v) || v < min || v > max) {
    process.stderr.write(`--${name} ${args[name]}: must be a whole number from ${min} to ${max}\n${USAGE}\n`);
    process.exit(2);
  }
  return v;
};
const nodes = number('nodes', 1, 5);
const natsPort = number('nats-port', 1, 65535 - nodes);
const routePort = number('route-port', 1, 65535 - nodes);
const storePort = number('store-port', 1, 65535);
const dataDir = path.resolve(args['data-dir']);

// The pinned nats-server and the FerretDB wrapper, built with Go when missing (quick when present).
// The servers this command starts are its own: whatever NATS_URL or MONGO_URL this shell has does not count.
const provisioned = spawnSync('bash', [path.join(PACKAGE_ROOT, 'scripts', 'provision.sh')], {
  stdio: ['ignore', 'inherit', 'inherit'],
  env: { ...process.env, PROVISION_QUIET: '1', NATS_URL: '', MONGO_URL: '' },
});
if (provisioned.status !== 0) fail('scripts/provision.sh could not provision nats-server and FerretDB: install what it names above, then run again');
const pinned = path.join(PACKAGE_ROOT, '.carecircle', 'bin', 'nats-server');
const natsBin =
  process.env.NATS_SERVER_BIN ?? (isExecutableFile(pinned) ? pinned : findExecutable('nats-server', ['/usr/sbin', '/usr/local/sbin', '/usr/local/bin']));
if (!natsBin) fail('no nats-server: run bash scripts/provision.sh (needs Go) or install one (Debian: apt-get install nats-server)');

const clientPorts = Array.from({ length: nodes }, (_, i) => natsPort + i);
const routePorts = nodes > 1 ? Array.from({ length: nodes }, (_, i) => routePort + i) : [];
const taken: string[] = [];
for (const [what, port] of [
  ...clientPorts.map((p) => ['NATS', p] as const),
  ...routePorts.map((p) => ['NATS route', p] as const),
  ['store', storePort] as const,
]) {
  if (!(await isPortFree(port))) taken.push(`${port} (${what})`);
}
if (taken.length)
  fail(`port ${taken.join(', ')} already in use: is a local cluster running already? Otherwise pick others with --nats-port, --route-port and --store-port`);

const running: { stop(): Promise<void> }[] = [];
// The servers' processes do not hold the event loop open: this does, until Ctrl-C.
const keepAlive = setInterval(() => undefined, 1 << 30);
const stopAll = async () => {
  await Promise.allSettled(running.splice(0).map((s) => s.stop()));
};
let stopping = false;
const shutdown = () => {
  if (stopping) return;
  stopping = true;
  say('stopping');
  void stopAll().then(() => {
    clearInterval(keepAlive);
    process.exit(0);
  });
};
process.on('SIGINT', shutdown);
process.on('SIGTERM', shutdown);

try {
  const routes = routePorts.map((p) => `nats://127.0.0.1:${p}`).join(',');
  const started = await Promise.all(
    clientPorts.map(async (port, i): Promise<ServerProcess> => {
      const name = `n${i + 1}`;
      const storeDir = path.join(dataDir, 'nats', name);
      mkdirSync(storeDir, { recursive: true });
      const cluster = nodes > 1 ? ['--cluster_name', 'carecircle-local', '--cluster', `nats://127.0.0.1:${routePorts[i]}`, '--routes', routes] : [];
      const proc = spawnServerProcess(natsBin, ['-a', '127.0.0.1', '-p', String(port), '-n', name, '-js', '-sd', storeDir, ...cluster], {
        name: `nats-server ${name}`,
        log: say,
        captureStdout: true,
      });
      running.push(proc);
      try {
        await waitForPort(port, { timeoutMs: 30_000, exited: proc.exited, name: `nats-server ${name}` });
      } catch (err) {
        await proc.fail(err as Error);
        throw err;
      }
      proc.started();
      return proc;
    }),
  );
  const natsUrl = clientPorts.map((p) => `nats://127.0.0.1:${p}`).join(',');

  const ferretdb = await ensureFerretDbBinary({ binDir: path.join(PACKAGE_ROOT, '.carecircle', 'bin'), repoRoot: PACKAGE_ROOT, log: say });
  const store = await startFerretDb({ bin: ferretdb, dataDir: path.join(dataDir, 'db'), port: storePort, log: say });
  running.push(store);

  // The roles create their streams at start: wait until the cluster has elected its JetStream leader.
  const nc = await connect({ servers: natsUrl.split(','), maxReconnectAttempts: -1 });
  try {
    const until = Date.now() + 60_000;
    for (;;) {
      try {
        await (await jetstreamManager(nc, { timeout: 2_000 })).getAccountInfo();
        break;
      } catch (err) {
        if (Date.now() > until) throw new Error(`JetStream did not become ready within 60 s: ${(err as Error).message}`);
        await new Promise((r) => setTimeout(r, 250));
      }
    }
  } finally {
    await nc.close();
  }

  say(
    `${started.length} NATS server${started.length > 1 ? 's' : ''} on ${clientPorts.join(', ')} and a store on ${storePort} are ready; data in ${dataDir}; Ctrl-C stops them`,
  );
  say('in each terminal that runs a role:');
  process.stdout.write(`export NATS_URL=${natsUrl} NATS_REPLICAS=${Math.min(nodes, 3)} MONGO_URL=mongodb://127.0.0.1:${storePort}/carecircle METRICS_PORT=0\n`);
} catch (err) {
  await stopAll();
  fail((err as Error).message);
}
