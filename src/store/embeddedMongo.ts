/**
 * A MongoDB-compatible server for runs without `MONGO_URL` (the embedded default of `npm start`)
 * and for the test harness.
 *
 * Order of preference: a real `mongod` on PATH; else the FerretDB wrapper
 * (`scripts/ferretdb`, MongoDB wire protocol over SQLite) at `binDir/ferretdb`, built from
 * source with Go on first use. The child process never outlives this process.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { accessSync, constants, existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';

export interface EmbeddedMongo {
  url: string;
  stop(): Promise<void>;
}

export interface StartEmbeddedMongoOptions {
  /** Where the server keeps its data (mongod `--dbpath`, FerretDB `-sqlite-dir`). Created if missing. */
  dataDir: string;
  /** Preferred port (default 27017); a free one is picked (and logged) if it is busy. */
  port?: number;
  /** Where the FerretDB wrapper lives (`binDir/ferretdb`) and is built to. */
  binDir: string;
  /** Repository root, holding `scripts/ferretdb`. */
  repoRoot: string;
  log: (line: string) => void;
}

const START_TIMEOUT_MS = 60_000;
const STOP_GRACE_MS = 5_000;
const TAIL_BYTES = 64 * 1024;
/** Sources whose content decides whether the FerretDB binary is current. */
const FERRETDB_SOURCES = ['go.mod', 'go.sum', 'main.go'] as const;

export async function startEmbeddedMongo(opts: StartEmbeddedMongoOptions): Promise<EmbeddedMongo> {
  const wanted = opts.port ?? 27017;
  mkdirSync(opts.dataDir, { recursive: true });

  const mongod = findExecutable('mongod');
  if (mongod) {
    let port = wanted;
    if (!(await isPortFree(port))) {
      port = await freePort();
      opts.log(`port ${wanted} is busy; mongod will listen on ${port}`);
    }
    const server = await startMongod({ bin: mongod, dataDir: opts.dataDir, port, log: opts.log });
    return { url: server.url, stop: server.stop };
  }

  const bin = await ensureFerretDbBinary({ binDir: opts.binDir, repoRoot: opts.repoRoot, log: opts.log });
  // FerretDB reports the address it bound, so a busy port becomes port 0 (the kernel picks one).
  const busy = !(await isPortFree(wanted));
  const server = await startFerretDb({ bin, dataDir: opts.dataDir, port: busy ? 0 : wanted, log: opts.log });
  if (busy) opts.log(`port ${wanted} is busy; FerretDB listens on ${server.port}`);
  return { url: server.url, stop: server.stop };
}

// ---------------------------------------------------------------------------------------------
// FerretDB binary

export class MissingToolError extends Error {
  override name = 'MissingToolError';
}

export function ferretDbBinaryPath(binDir: string): string {
  return path.join(binDir, 'ferretdb');
}

/** Hex SHA-256 over the wrapper's sources; stored beside the binary as `ferretdb.sha256`. */
export function ferretDbSourceHash(srcDir: string): string {
  const h = createHash('sha256');
  for (const f of FERRETDB_SOURCES) h.update(readFileSync(path.join(srcDir, f)));
  return h.digest('hex');
}

/**
 * `missing`, `stale` (sources changed since it was built) or `fresh`. With a stamp file the
 * content hash decides; without one, the binary is stale when older than any source.
 */
export function ferretDbBinaryState(bin: string, srcDir: string): 'missing' | 'stale' | 'fresh' {
  if (!isExecutableFile(bin)) return 'missing';
  const stampFile = `${bin}.sha256`;
  if (existsSync(stampFile)) {
    return readFileSync(stampFile, 'utf8').trim() === ferretDbSourceHash(srcDir) ? 'fresh' : 'stale';
  }
  const built = statSync(bin).mtimeMs;
  const newest = Math.max(...FERRETDB_SOURCES.map((f) => statSync(path.join(srcDir, f)).mtimeMs));
  return built >= newest ? 'fresh' : 'stale';
}

export interface GoToolchain {
  bin: string;
  version: string;
}

/** The Go version the wrapper's go.mod asks for, e.g. `1.24`. */
export function requiredGoVersion(srcDir: string): string {
  const m = /^go\s+(\d+\.\d+)/m.exec(readFileSync(path.join(srcDir, 'go.mod'), 'utf8'));
  return m?.[1] ?? '1.24';
}

/** A Go toolchain new enough to build the wrapper, or undefined (with the reason in `why`). */
export async function findGo(srcDir: string): Promise<{ go?: GoToolchain; why: string }> {
  const need = requiredGoVersion(srcDir);
  const bin = findExecutable('go', ['/usr/local/go/bin', path.join(os.homedir(), 'go', 'bin'), '/usr/lib/go/bin']);
  if (!bin) return { why: `no Go toolchain found (need Go >= ${need})` };
  let version: string;
  try {
    version = (await run(bin, ['env', 'GOVERSION'], {})).stdout.trim();
  } catch (err) {
    return { why: `${bin} does not run: ${(err as Error).message}` };
  }
  if (compareVersions(version.replace(/^go/, ''), need) < 0) {
    return { why: `${bin} is ${version}, but the FerretDB wrapper needs Go >= ${need}` };
  }
  return { go: { bin, version }, why: '' };
}

export function missingMongoHelp(why: string, bin: string, need: string): string {
  return (
    `No MongoDB-compatible server available: no \`mongod\` on PATH, no FerretDB binary at ${bin}, ` +
    `and it cannot be built: ${why}.\n` +
    `Do one of:\n` +
    `  - set MONGO_URL=mongodb://HOST:PORT/carecircle to use a running MongoDB;\n` +
    `  - install Go >= ${need} (https://go.dev/dl/; Debian bookworm's golang-go is 1.19, too old) ` +
    `and run \`bash scripts/provision.sh\` (or start again: it builds on first run);\n` +
    `  - install MongoDB so that \`mongod\` is on PATH.`
  );
}

const builds = new Map<string, Promise<string>>();

/**
 * Path of a current FerretDB wrapper binary in `binDir`, building it with Go when it is
 * missing or its sources changed. A stale binary is kept (with a warning) when Go is missing.
 * Builds go to a temporary file and are renamed into place, so concurrent builders are safe.
 */
export function ensureFerretDbBinary(opts: { binDir: string; repoRoot: string; log: (line: string) => void }): Promise<string> {
  const bin = ferretDbBinaryPath(opts.binDir);
  let p = builds.get(bin);
  if (!p) {
    p = ensureFerretDbBinaryOnce(bin, opts);
    builds.set(bin, p);
    p.catch(() => builds.delete(bin));
  }
  return p;
}

async function ensureFerretDbBinaryOnce(bin: string, opts: { binDir: string; repoRoot: string; log: (line: string) => void }): Promise<string> {
  const srcDir = path.join(opts.repoRoot, 'scripts', 'ferretdb');
  if (!existsSync(path.join(srcDir, 'main.go'))) {
    if (isExecutableFile(bin)) return bin;
    throw new MissingToolError(`FerretDB wrapper sources not found in ${srcDir} and no binary at ${bin}`);
  }
  const state = ferretDbBinaryState(bin, srcDir);
  if (state === 'fresh') return bin;

  const { go, why } = await findGo(srcDir);
  if (!go) {
    if (state === 'stale') {
      opts.log(`FerretDB at ${bin} is older than its sources but cannot be rebuilt (${why}); using it as is`);
      return bin;
    }
    throw new MissingToolError(missingMongoHelp(why, bin, requiredGoVersion(srcDir)));
  }

  opts.log(
    state === 'missing'
      ? 'building FerretDB (first run only, about a minute)…'
      : 'rebuilding FerretDB (its sources changed)…',
  );
  mkdirSync(opts.binDir, { recursive: true });
  const tmp = `${bin}.tmp-${process.pid}-${Date.now()}`;
  const started = Date.now();
  try {
    await run(go.bin, ['build', '-buildvcs=false', '-o', tmp, '.'], {
      cwd: srcDir,
      env: { ...process.env, CGO_ENABLED: '0' },
    });
    renameSync(tmp, bin);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw new Error(`building FerretDB in ${srcDir} with ${go.bin} (${go.version}) failed:\n${(err as Error).message}`);
  }
  const stamp = `${bin}.sha256.tmp-${process.pid}`;
  writeFileSync(stamp, `${ferretDbSourceHash(srcDir)}\n`);
  renameSync(stamp, `${bin}.sha256`);
  opts.log(`built FerretDB at ${bin} in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  return bin;
}

// ---------------------------------------------------------------------------------------------
// Servers

export interface StartedServer {
  url: string;
  port: number;
  pid: number;
  stop(): Promise<void>;
}

/**
 * Starts the FerretDB wrapper on 127.0.0.1:`port` (0 = any free port) with its SQLite files in
 * `dataDir`, and resolves once it printed `ready <uri>` (it is then accepting connections).
 */
export async function startFerretDb(opts: {
  bin: string;
  dataDir: string;
  port: number;
  log: (line: string) => void;
  timeoutMs?: number;
}): Promise<StartedServer> {
  mkdirSync(opts.dataDir, { recursive: true });
  const proc = spawnServerProcess(
    opts.bin,
    ['-listen-addr', `127.0.0.1:${opts.port}`, '-sqlite-dir', opts.dataDir, '-log-level', 'warn'],
    { name: 'ferretdb', log: opts.log },
  );
  const timeoutMs = opts.timeoutMs ?? START_TIMEOUT_MS;
  let uri: string;
  try {
    uri = await new Promise<string>((resolve, reject) => {
      const rl = createInterface({ input: proc.child.stdout as Readable });
      const timer = setTimeout(() => reject(new Error(`FerretDB did not report ready within ${timeoutMs / 1000} s`)), timeoutMs);
      rl.on('line', (line) => {
        const m = /^ready\s+(mongodb:\/\/\S+)/.exec(line);
        if (m?.[1]) {
          clearTimeout(timer);
          resolve(m[1]);
        }
      });
      void proc.exited.then((code) => {
        clearTimeout(timer);
        reject(new Error(`FerretDB exited (${code}) before it was ready`));
      });
    });
  } catch (err) {
    await proc.fail(err as Error);
    throw err;
  }
  proc.started();
  const port = Number(new URL(uri).port);
  return { url: uri, port, pid: proc.child.pid ?? -1, stop: proc.stop };
}

/** Starts `mongod` on 127.0.0.1:`port` and resolves once the port accepts connections. */
export async function startMongod(opts: {
  bin: string;
  dataDir: string;
  port: number;
  log: (line: string) => void;
  timeoutMs?: number;
}): Promise<StartedServer> {
  mkdirSync(opts.dataDir, { recursive: true });
  const proc = spawnServerProcess(opts.bin, ['--dbpath', opts.dataDir, '--bind_ip', '127.0.0.1', '--port', String(opts.port)], {
    name: 'mongod',
    log: opts.log,
    captureStdout: true, // mongod logs to stdout
  });
  try {
    await waitForPort(opts.port, { timeoutMs: opts.timeoutMs ?? START_TIMEOUT_MS, exited: proc.exited, name: 'mongod' });
  } catch (err) {
    await proc.fail(err as Error);
    throw err;
  }
  proc.started();
  return { url: `mongodb://127.0.0.1:${opts.port}/`, port: opts.port, pid: proc.child.pid ?? -1, stop: proc.stop };
}

// ---------------------------------------------------------------------------------------------
// Child processes that never outlive us

export interface ServerProcess {
  child: ChildProcess;
  /** Resolves with the exit code (or signal name) once the child is gone. */
  exited: Promise<number | string | null>;
  /** Last output kept for diagnostics (stderr, plus stdout when captured). */
  tail(): string;
  /** Marks start-up as done: unexpected exits from now on are logged with the output tail. */
  started(): void;
  /** Start-up failed: forwards the output tail to `log` and stops the child. */
  fail(err: Error): Promise<void>;
  /** SIGTERM, then SIGKILL after 5 s; resolves once the child has exited. Idempotent. */
  stop(): Promise<void>;
}

const live = new Set<ChildProcess>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const child of live) {
      try {
        child.kill('SIGTERM');
      } catch {
        /* already gone */
      }
    }
  });
}

let setprivPath: string | null | undefined;

/**
 * Spawns a server process that is SIGTERMed when this process exits (an `exit` hook) and, where
 * util-linux `setpriv` exists, also when this process dies without running its hooks
 * (parent-death signal). Its stdout is left readable for the caller; stderr (and stdout when
 * `captureStdout`) is kept as a tail and shown through `log` only on failure. The child and
 * its pipes do not keep the event loop alive.
 */
export function spawnServerProcess(
  bin: string,
  args: string[],
  opts: { name: string; log: (line: string) => void; captureStdout?: boolean; cwd?: string; env?: NodeJS.ProcessEnv },
): ServerProcess {
  installExitHook();
  if (setprivPath === undefined) setprivPath = process.platform === 'linux' ? (findExecutable('setpriv', ['/usr/bin', '/bin']) ?? null) : null;
  const [cmd, argv] = setprivPath ? [setprivPath, ['--pdeathsig', 'TERM', '--', bin, ...args]] : [bin, args];
  const child = spawn(cmd, argv, { stdio: ['ignore', 'pipe', 'pipe'], cwd: opts.cwd, env: opts.env ?? process.env });
  live.add(child);

  let tail = '';
  const keep = (chunk: Buffer): void => {
    tail = (tail + chunk.toString('utf8')).slice(-TAIL_BYTES);
  };
  child.stderr?.on('data', keep);
  if (opts.captureStdout) child.stdout?.on('data', keep);

  let stopping = false;
  let isStarted = false;
  const exited = new Promise<number | string | null>((resolve) => {
    child.once('error', (err) => {
      tail += `\n${opts.name}: ${err.message}`;
      live.delete(child);
      resolve(null);
    });
    child.once('exit', (code, signal) => {
      live.delete(child);
      if (isStarted && !stopping) forward(`${opts.name} exited unexpectedly (${code ?? signal})`);
      resolve(code ?? signal);
    });
  });

  const forward = (headline: string): void => {
    opts.log(headline);
    for (const line of tail.split('\n')) if (line.trim()) opts.log(`${opts.name}: ${line}`);
  };

  let stopPromise: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopPromise ??= (async () => {
      stopping = true;
      if (child.exitCode === null && child.signalCode === null && child.pid !== undefined) {
        child.ref(); // keep the event loop alive until the exit is seen
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
        await exited;
        clearTimeout(timer);
      }
      live.delete(child);
    })();
    return stopPromise;
  };

  return {
    child,
    exited,
    tail: () => tail,
    started: () => {
      isStarted = true;
      child.unref();
      unrefStream(child.stdout);
      unrefStream(child.stderr);
    },
    fail: async (err: Error) => {
      await stop();
      forward(`${opts.name} failed to start: ${err.message}`);
    },
    stop,
  };
}

function unrefStream(s: Readable | null): void {
  const maybe = s as (Readable & { unref?: () => void }) | null;
  maybe?.unref?.();
}

// ---------------------------------------------------------------------------------------------
// Small helpers

/** First executable `name` on PATH, then in `extraDirs`. */
export function findExecutable(name: string, extraDirs: string[] = []): string | undefined {
  const dirs = [...(process.env.PATH ?? '').split(path.delimiter).filter(Boolean), ...extraDirs];
  for (const dir of dirs) {
    const candidate = path.join(dir, name);
    if (isExecutableFile(candidate)) return candidate;
  }
  return undefined;
}

function isExecutableFile(p: string): boolean {
  try {
    if (!statSync(p).isFile()) return false;
    accessSync(p, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** A TCP port on 127.0.0.1 that was free a moment ago. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.once('error', reject);
    srv.listen({ port: 0, host: '127.0.0.1', exclusive: true }, () => {
      const addr = srv.address();
      srv.close(() => (addr && typeof addr === 'object' ? resolve(addr.port) : reject(new Error('no port'))));
    });
  });
}

export function isPortFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.unref();
    srv.once('error', () => resolve(false));
    srv.listen({ port, host: '127.0.0.1', exclusive: true }, () => srv.close(() => resolve(true)));
  });
}

/** Resolves once 127.0.0.1:`port` accepts a TCP connection; rejects on timeout or when `exited` settles first. */
export async function waitForPort(
  port: number,
  opts: { timeoutMs: number; exited?: Promise<unknown>; name: string },
): Promise<void> {
  const deadline = Date.now() + opts.timeoutMs;
  let gone = false;
  let exitInfo: unknown;
  void opts.exited?.then((code) => {
    gone = true;
    exitInfo = code;
  });
  for (;;) {
    if (gone) throw new Error(`${opts.name} exited (${String(exitInfo)}) before it accepted connections`);
    if (await canConnect(port)) return;
    if (Date.now() > deadline) throw new Error(`${opts.name} did not accept connections on port ${port} within ${opts.timeoutMs / 1000} s`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export function canConnect(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = net.connect({ port, host });
    const done = (ok: boolean): void => {
      sock.destroy();
      resolve(ok);
    };
    sock.setTimeout(1000, () => done(false));
    sock.once('connect', () => done(true));
    sock.once('error', () => done(false));
  });
}

/** Compares `major.minor` of two Go versions (`1.26.8`, `1.24`). */
function compareVersions(a: string, b: string): number {
  const parse = (v: string): [number, number] => {
    const m = /^(\d+)\.(\d+)/.exec(v);
    return [Number(m?.[1] ?? 0), Number(m?.[2] ?? 0)];
  };
  const [amaj, amin] = parse(a);
  const [bmaj, bmin] = parse(b);
  return amaj - bmaj || amin - bmin;
}

function run(
  bin: string,
  args: string[],
  opts: { cwd?: string; env?: NodeJS.ProcessEnv },
): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    execFile(bin, args, { cwd: opts.cwd, env: opts.env, maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${[bin, ...args].join(' ')}: ${err.message}\n${stderr}`.trim()));
      else resolve({ stdout, stderr });
    });
  });
}
