/**
 * The FerretDB wrapper (`scripts/ferretdb`, MongoDB wire protocol over SQLite): built from
 * source with Go when missing or stale, then started as a child server process.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { findExecutable, isExecutableFile, run, spawnServerProcess, START_TIMEOUT_MS, type ServerLaunch, type StartedServer } from './process.js';

/** Sources whose content decides whether the FerretDB binary is current. */
const FERRETDB_SOURCES = ['go.mod', 'go.sum', 'main.go'] as const;

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

  opts.log(state === 'missing' ? 'building FerretDB (first run only, about a minute)…' : 'rebuilding FerretDB (its sources changed)…');
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

/**
 * Starts the FerretDB wrapper on 127.0.0.1:`port` (0 = any free port) with its SQLite files in
 * `dataDir`, and resolves once it printed `ready <uri>` (it is then accepting connections).
 */
export async function startFerretDb(opts: ServerLaunch): Promise<StartedServer> {
  mkdirSync(opts.dataDir, { recursive: true });
  const proc = spawnServerProcess(opts.bin, ['-listen-addr', `127.0.0.1:${opts.port}`, '-sqlite-dir', opts.dataDir, '-log-level', 'warn'], {
    name: 'ferretdb',
    log: opts.log,
  });
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
