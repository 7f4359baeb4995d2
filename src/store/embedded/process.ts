/**
 * Child server processes that never outlive this process, and the loopback port and executable
 * lookups used to start them.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { accessSync, constants, statSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import type { Readable } from 'node:stream';

/** How long a server may take to accept connections after it was spawned. */
export const START_TIMEOUT_MS = 60_000;
const STOP_GRACE_MS = 5_000;
const TAIL_BYTES = 64 * 1024;

/** What starting a local database server takes: its binary, data directory, port and a log sink. */
export interface ServerLaunch {
  bin: string;
  dataDir: string;
  port: number;
  log: (line: string) => void;
  timeoutMs?: number;
}

export interface StartedServer {
  url: string;
  port: number;
  pid: number;
  stop(): Promise<void>;
}

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

/** Runs a short command to completion, rejecting with its stderr when it fails. */
export function run(bin: string, args: string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv }): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    execFile(bin, args, { cwd: opts.cwd, env: opts.env, maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${[bin, ...args].join(' ')}: ${err.message}\n${stderr}`.trim()));
      else resolve({ stdout, stderr });
    });
  });
}

// ---------------------------------------------------------------------------------------------
// Executables

/** First executable `name` on PATH, then in `extraDirs`. */
export function findExecutable(name: string, extraDirs: string[] = []): string | undefined {
  const dirs = [...(process.env.PATH ?? '').split(path.delimiter).filter(Boolean), ...extraDirs];
  for (const dir of dirs) {
    const candidate = path.join(dir, name);
    if (isExecutableFile(candidate)) return candidate;
  }
  return undefined;
}

export function isExecutableFile(p: string): boolean {
  try {
    if (!statSync(p).isFile()) return false;
    accessSync(p, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

// ---------------------------------------------------------------------------------------------
// Loopback ports

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
export async function waitForPort(port: number, opts: { timeoutMs: number; exited?: Promise<unknown>; name: string }): Promise<void> {
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
