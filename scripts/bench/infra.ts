// The servers every part shares, each on a free loopback port: nats-server (JetStream) and the
// embedded FerretDB, or the ones NATS_URL / MONGO_URL name. Each part takes its own database.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { MongoClient } from 'mongodb';
import { connect } from '@nats-io/transport-node';
import { ensureFerretDbBinary, startFerretDb } from '../../src/store/embedded/ferretdb.js';
import { spawnServerProcess, waitForPort } from '../../src/store/embedded/process.js';
import { dropDatabases, ferretDbBinDir, natsServerBinary, repoRoot, uniqueDatabaseName, withDatabase } from '../../test/harness/servers.js';
import { listenerPort } from './ports.js';
import { progress } from './report.js';

/** A process whose CPU time a part reports; `pid` is absent for servers run by someone else. */
export interface Watched {
  label: string;
  pid?: number;
}

export interface Infra {
  natsUrl: string;
  nats: Watched;
  store: Watched;
  versions: Record<string, string>;
  /** Data commands (find, insert, update…) the store has served so far, as its serverStatus counts them. */
  storeCommands(): Promise<number | undefined>;
  /** A new, uniquely named database on the store; dropped when the run ends. */
  database(prefix: string): string;
  stop(): Promise<void>;
}

const log = (line: string) => progress(line);

async function startNatsServer(): Promise<{ url: string; pid?: number; stop(): Promise<void> }> {
  if (process.env.NATS_URL) return { url: process.env.NATS_URL, stop: async () => {} };
  const storeDir = mkdtempSync(path.join(os.tmpdir(), 'carecircle-bench-nats-'));
  const port = await listenerPort();
  const proc = spawnServerProcess(natsServerBinary(), ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', storeDir], {
    name: 'nats-server',
    log,
    captureStdout: true,
  });
  try {
    await waitForPort(port, { timeoutMs: 30_000, exited: proc.exited, name: 'nats-server' });
  } catch (err) {
    await proc.fail(err as Error);
    rmSync(storeDir, { recursive: true, force: true });
    throw err;
  }
  proc.started();
  return {
    url: `nats://127.0.0.1:${port}`,
    ...(proc.child.pid ? { pid: proc.child.pid } : {}),
    stop: async () => {
      await proc.stop();
      rmSync(storeDir, { recursive: true, force: true });
    },
  };
}

async function startStore(): Promise<{ url: string; pid?: number; stop(): Promise<void> }> {
  if (process.env.MONGO_URL) return { url: process.env.MONGO_URL, stop: async () => {} };
  const bin = await ensureFerretDbBinary({ binDir: ferretDbBinDir, repoRoot, log });
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'carecircle-bench-ferretdb-'));
  const server = await startFerretDb({ bin, dataDir, port: 0, log });
  return {
    url: server.url,
    pid: server.pid,
    stop: async () => {
      await server.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

async function natsVersion(url: string): Promise<string> {
  const nc = await connect({ servers: url });
  try {
    return `nats-server ${nc.info?.version ?? 'unknown'}${process.env.NATS_URL ? ' (NATS_URL)' : ''}`;
  } finally {
    await nc.close();
  }
}

/** The FerretDB module the embedded wrapper is built from (its binary reports "unknown"). */
function ferretDbModuleVersion(): string {
  const gomod = readFileSync(path.join(repoRoot, 'scripts/ferretdb/go.mod'), 'utf8');
  return /FerretDB\/FerretDB\s+(v\S+)/.exec(gomod)?.[1] ?? 'unknown';
}

async function storeVersion(client: MongoClient): Promise<string> {
  const info = (await client.db('admin').command({ buildInfo: 1 })) as { version?: string; ferretdbVersion?: string };
  if (info.ferretdbVersion === undefined) return `MongoDB ${info.version}${process.env.MONGO_URL ? ' (MONGO_URL)' : ''}`;
  const version = info.ferretdbVersion === 'unknown' ? ferretDbModuleVersion() : info.ferretdbVersion;
  return `FerretDB ${version} (MongoDB ${info.version} wire), ${process.env.MONGO_URL ? 'MONGO_URL' : 'embedded, SQLite'}`;
}

const DATA_COMMANDS = ['find', 'insert', 'update', 'delete', 'findAndModify', 'aggregate', 'count', 'getMore', 'distinct', 'bulkWrite'];

async function dataCommands(client: MongoClient): Promise<number | undefined> {
  try {
    const status = (await client.db('admin').command({ serverStatus: 1 })) as { metrics?: { commands?: Record<string, { total?: unknown }> } };
    const commands = status.metrics?.commands;
    if (!commands) return undefined;
    return DATA_COMMANDS.reduce((sum, name) => sum + Number(commands[name]?.total ?? 0), 0);
  } catch {
    return undefined;
  }
}

export async function startInfra(): Promise<Infra> {
  const [nats, store] = await Promise.all([startNatsServer(), startStore()]);
  const databases: string[] = [];
  const admin = await new MongoClient(store.url, { serverSelectionTimeoutMS: 10_000 }).connect();
  const [natsV, storeV] = await Promise.all([natsVersion(nats.url), storeVersion(admin)]);
  return {
    natsUrl: nats.url,
    nats: { label: 'nats-server', ...(nats.pid ? { pid: nats.pid } : {}) },
    store: { label: process.env.MONGO_URL ? 'store' : 'FerretDB', ...(store.pid ? { pid: store.pid } : {}) },
    versions: { NATS: natsV, store: storeV },
    storeCommands: () => dataCommands(admin),
    database: (prefix) => {
      const name = uniqueDatabaseName(`bench_${prefix}`);
      databases.push(name);
      return withDatabase(store.url, name);
    },
    stop: async () => {
      // A store of someone else's keeps running: leave nothing of ours in it.
      await admin.close();
      if (process.env.MONGO_URL) for (const db of databases) await dropDatabases(withDatabase(store.url, db), db).catch(() => {});
      await Promise.all([nats.stop(), store.stop()]);
    },
  };
}
