/**
 * Real servers for integration tests: nats-server (JetStream) and a MongoDB-compatible server,
 * each on a free loopback port, with temporary data directories removed on stop. nats-server is
 * the build pinned in `scripts/nats-server` (`.carecircle/bin/nats-server`) when present.
 *
 * `NATS_URL` / `MONGO_URL` point the suite at servers that are already running instead.
 * Most tests do not call these directly: `globalSetup.ts` starts one of each for the run and
 * tests read the URLs with `inject('natsUrl')` / `inject('mongoUrl')`, taking their own
 * database with `freshDatabaseUrl(inject('mongoUrl'))`.
 */
import { createHash, randomBytes } from 'node:crypto';
import { accessSync, constants, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { MongoClient, type CommandStartedEvent } from 'mongodb';
import { ensureFerretDbBinary, startFerretDb } from '../../src/store/embedded/ferretdb.js';
import { findExecutable, freePort as findFreePort, isPortFree, spawnServerProcess, waitForPort } from '../../src/store/embedded/process.js';

export interface RunningServer {
  url: string;
  stop(): Promise<void>;
}

export const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
export const ferretDbBinDir = path.join(repoRoot, '.carecircle', 'bin');

const START_TIMEOUT_MS = 30_000;

function log(line: string): void {
  process.stderr.write(`[test harness] ${line}\n`);
}

// Test listeners take their ports from below the kernel's ephemeral range (32768–60999 on Linux),
// from which every outgoing connection draws its local port. A port picked there by listening on
// port 0 can be taken by one of the dozens of connections a starting process opens (its database
// pool, NATS) before its own listener binds it. Each vitest worker walks its own band, from a
// random start, so files running side by side do not pick the same port either.
const PORT_BAND = 2_000;
const FIRST_PORT = 12_000;
const BANDS = 10;
let portCursor = Math.floor(Math.random() * PORT_BAND);

export async function freePort(): Promise<number> {
  const low = FIRST_PORT + (Number(process.env.VITEST_POOL_ID ?? 0) % BANDS) * PORT_BAND;
  for (let tries = 0; tries < 50; tries++) {
    const port = low + (portCursor++ % PORT_BAND);
    if (await isPortFree(port)) return port;
  }
  return findFreePort();
}

// ---------------------------------------------------------------------------------------------
// Temporary directories, removed on stop and at the latest when the process exits

const tempDirs = new Set<string>();
let tempHook = false;

function makeTempDir(prefix: string): string {
  if (!tempHook) {
    tempHook = true;
    process.on('exit', () => {
      for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
    });
  }
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  tempDirs.add(dir);
  return dir;
}

function removeTempDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
  tempDirs.delete(dir);
}

// ---------------------------------------------------------------------------------------------
// NATS

/** Where `scripts/provision.sh` builds the nats-server pinned in `scripts/nats-server`. */
export const builtNatsServer = path.join(ferretDbBinDir, 'nats-server');

/**
 * `NATS_SERVER_BIN`, else the pinned build in `.carecircle/bin`, else a nats-server on PATH
 * (Debian's package, in /usr/sbin): the build is the version the suite is meant to run against.
 */
export function natsServerBinary(): string {
  const bin = process.env.NATS_SERVER_BIN ?? pinnedNatsServer() ?? findExecutable('nats-server', ['/usr/sbin', '/usr/local/sbin', '/usr/local/bin']);
  if (!bin) {
    throw new Error(
      `nats-server not found at ${builtNatsServer}, on PATH or in /usr/sbin. Build it with ` +
        '`bash scripts/provision.sh` (needs Go), or install one (`apt-get install nats-server` on Debian), ' +
        'or set NATS_URL to a running server.',
    );
  }
  return bin;
}

let staleWarned = false;

function pinnedNatsServer(): string | undefined {
  if (!isExecutable(builtNatsServer)) return undefined;
  // Same hash as provision.sh writes beside the binary: a stale build still runs, with a hint.
  if (!staleWarned) {
    staleWarned = true;
    const src = path.join(repoRoot, 'scripts', 'nats-server');
    const h = createHash('sha256');
    try {
      for (const f of ['go.mod', 'go.sum']) h.update(readFileSync(path.join(src, f)));
      if (readFileSync(`${builtNatsServer}.sha256`, 'utf8').trim() !== h.digest('hex')) {
        log(`${builtNatsServer} is older than scripts/nats-server: run \`bash scripts/provision.sh\` to rebuild it`);
      }
    } catch {
      // no stamp or sources (an installed package): nothing to compare
    }
  }
  return builtNatsServer;
}

function isExecutable(p: string): boolean {
  try {
    accessSync(p, constants.X_OK);
    return statSync(p).isFile();
  } catch {
    return false;
  }
}

/**
 * A real nats-server on 127.0.0.1 and a free port, with JetStream (default on) storing in a
 * temporary directory. With `NATS_URL` set, that server is used and `stop()` does nothing.
 */
export async function startNats(opts: { jetstream?: boolean } = {}): Promise<RunningServer> {
  const external = process.env.NATS_URL;
  if (external) return { url: external, stop: async () => {} };

  const bin = natsServerBinary();
  const jetstream = opts.jetstream ?? true;
  let lastError: Error | undefined;
  // The port is free when picked but could be taken before nats-server binds it: retry then.
  for (let attempt = 1; attempt <= 3; attempt++) {
    const port = await freePort();
    const storeDir = jetstream ? makeTempDir('carecircle-nats-') : undefined;
    const args = ['-a', '127.0.0.1', '-p', String(port), ...(storeDir ? ['-js', '-sd', storeDir] : [])];
    const proc = spawnServerProcess(bin, args, { name: 'nats-server', log, captureStdout: true });
    try {
      await waitForPort(port, { timeoutMs: START_TIMEOUT_MS, exited: proc.exited, name: 'nats-server' });
    } catch (err) {
      lastError = err as Error;
      await proc.stop();
      if (storeDir) removeTempDir(storeDir);
      if (/address already in use/i.test(proc.tail()) && attempt < 3) continue;
      log(`nats-server ${args.join(' ')} failed: ${lastError.message}`);
      for (const line of proc.tail().split('\n')) if (line.trim()) log(`nats-server: ${line}`);
      throw lastError;
    }
    proc.started();
    return {
      url: `nats://127.0.0.1:${port}`,
      stop: async () => {
        await proc.stop();
        if (storeDir) removeTempDir(storeDir);
      },
    };
  }
  throw lastError ?? new Error('nats-server did not start');
}

// ---------------------------------------------------------------------------------------------
// MongoDB

/** `carecircle_test_<16 hex>`: short enough for every MongoDB-compatible server's name limit. */
export function uniqueDatabaseName(prefix = 'carecircle_test'): string {
  return `${prefix}_${randomBytes(8).toString('hex')}`;
}

const URL_RE = /^(mongodb(?:\+srv)?:\/\/[^/?#]+)(?:\/([^?#]*))?(\?[^#]*)?$/;

/** `url` with its database (the path) replaced by `db`, keeping hosts, credentials and options. */
export function withDatabase(url: string, db: string): string {
  const m = URL_RE.exec(url);
  if (!m) throw new Error(`not a MongoDB connection string: ${url.replace(/\/\/[^@/]*@/, '//***@')}`);
  return `${m[1]}/${encodeURIComponent(db)}${m[3] ?? ''}`;
}

/** The database named in a connection string's path, if any. */
export function databaseName(url: string): string | undefined {
  const db = URL_RE.exec(url)?.[2];
  return db ? decodeURIComponent(db) : undefined;
}

/**
 * A URL to a new, uniquely named database on the same server as `url`, named
 * `<url's database>_<random>` so that the owner of `url` can drop it with the others.
 */
export function freshDatabaseUrl(url: string): string {
  return withDatabase(url, uniqueDatabaseName(databaseName(url) ?? 'carecircle_test'));
}

/** A fresh database (as `freshDatabaseUrl`) whose clients report each command they send. */
export function watchedDatabaseUrl(url: string): string {
  const watched = new URL(freshDatabaseUrl(url));
  watched.searchParams.set('monitorCommands', 'true');
  return watched.toString();
}

/** One command a client sent: its name (`find`, `insert`…) and the collection it went to. */
export interface SentCommand {
  name: string;
  collection: string;
}

/** The commands `client` (on a `watchedDatabaseUrl`) sends from now on, as they are sent. */
export function sentCommands(client: MongoClient): SentCommand[] {
  const sent: SentCommand[] = [];
  client.on('commandStarted', (e: CommandStartedEvent) => sent.push({ name: e.commandName, collection: String(e.command[e.commandName]) }));
  return sent;
}

/** Closes `client` (made with `monitorCommands: true`) as soon as an insert into `collection`
 *  succeeds: a process dying right after that write, for a test of what the next run does. */
export function closeAfterInsert(client: MongoClient, collection: string): void {
  const inserts = new Set<number>();
  client.on('commandStarted', (e: CommandStartedEvent) => {
    if (e.commandName === 'insert' && (e.command as { insert?: string }).insert === collection) inserts.add(e.requestId);
  });
  client.on('commandSucceeded', (e) => {
    if (inserts.has(e.requestId)) void client.close();
  });
}

/** Drops `db` and every database whose name starts with `<db>_` (those made by freshDatabaseUrl). */
export async function dropDatabases(url: string, db: string): Promise<void> {
  const client = new MongoClient(url, { serverSelectionTimeoutMS: 5_000 });
  try {
    await client.connect();
    const { databases } = await client.db('admin').admin().listDatabases({ nameOnly: true });
    const names = new Set([db, ...databases.map((d) => d.name).filter((n) => n.startsWith(`${db}_`))]);
    for (const name of names) await client.db(name).dropDatabase();
  } finally {
    await client.close();
  }
}

/**
 * A MongoDB-compatible server and a fresh database on it; the URL names the database
 * (`mongodb://127.0.0.1:PORT/carecircle_test_<random>`).
 *
 * - `MONGO_URL` set: a new database on that server; `stop()` drops it (and the databases
 *   `freshDatabaseUrl` derived from it).
 * - else `mongodb-memory-server`, only if it is installed and its binary can be had;
 * - else the FerretDB wrapper (`.carecircle/bin/ferretdb`, built with Go if missing) on a free
 *   port with a temporary SQLite directory; `stop()` ends it and removes the directory.
 */
export async function startMongo(): Promise<RunningServer> {
  const db = uniqueDatabaseName();

  const external = process.env.MONGO_URL;
  if (external) {
    const url = withDatabase(external, db);
    const client = new MongoClient(url, { serverSelectionTimeoutMS: 10_000 });
    try {
      await client.db(db).command({ ping: 1 });
    } catch (err) {
      throw new Error(`MONGO_URL does not answer: ${(err as Error).message}`);
    } finally {
      await client.close();
    }
    return { url, stop: () => dropDatabases(url, db) };
  }

  const memory = await tryMongoMemoryServer(db);
  if (memory) return memory;

  const bin = await ensureFerretDbBinary({ binDir: ferretDbBinDir, repoRoot, log });
  const dataDir = makeTempDir('carecircle-ferretdb-');
  try {
    const server = await startFerretDb({ bin, dataDir, port: 0, log, timeoutMs: START_TIMEOUT_MS });
    return {
      url: withDatabase(server.url, db),
      stop: async () => {
        await server.stop();
        removeTempDir(dataDir);
      },
    };
  } catch (err) {
    removeTempDir(dataDir);
    throw err;
  }
}

interface MemoryServerLike {
  getUri(dbName?: string): string;
  stop(opts?: { doCleanup?: boolean; force?: boolean }): Promise<boolean>;
}
interface MemoryServerModule {
  MongoMemoryServer: { create(opts?: { instance?: { ip?: string } }): Promise<MemoryServerLike> };
}

/** mongodb-memory-server when it is installed and can get its mongod binary; else undefined. */
async function tryMongoMemoryServer(db: string): Promise<RunningServer | undefined> {
  let mod: MemoryServerModule;
  try {
    const specifier = 'mongodb-memory-server'; // not a dependency: resolved only if someone installed it
    mod = (await import(specifier)) as MemoryServerModule;
  } catch {
    return undefined;
  }
  try {
    const creating = mod.MongoMemoryServer.create({ instance: { ip: '127.0.0.1' } });
    const server = await Promise.race([
      creating,
      new Promise<never>((_, reject) => setTimeout(() => reject(new Error('timed out after 60 s')), 60_000).unref()),
    ]).catch((err: unknown) => {
      void creating.then((s) => s.stop({ doCleanup: true, force: true })).catch(() => {});
      throw err;
    });
    return {
      url: withDatabase(server.getUri(), db),
      stop: async () => {
        await server.stop({ doCleanup: true, force: true });
      },
    };
  } catch (err) {
    log(`mongodb-memory-server is installed but could not start (${(err as Error).message}); using FerretDB`);
    return undefined;
  }
}
