/**
 * A MongoDB-compatible server for runs without `MONGO_URL` (the embedded default of `npm start`)
 * and for the test harness.
 *
 * Order of preference: a real `mongod` on PATH; else the FerretDB wrapper
 * (`scripts/ferretdb`, MongoDB wire protocol over SQLite) at `binDir/ferretdb`, built from
 * source with Go on first use. The child process never outlives this process.
 */
import { mkdirSync } from 'node:fs';
import { ensureFerretDbBinary, startFerretDb } from './embedded/ferretdb.js';
import { startMongod } from './embedded/mongod.js';
import { findExecutable, freePort, isPortFree } from './embedded/process.js';

export interface EmbeddedMongo {
  url: string;
  /** The server's process. */
  pid: number;
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
    return { url: server.url, pid: server.pid, stop: server.stop };
  }

  const bin = await ensureFerretDbBinary({ binDir: opts.binDir, repoRoot: opts.repoRoot, log: opts.log });
  // FerretDB reports the address it bound, so a busy port becomes port 0 (the kernel picks one).
  const busy = !(await isPortFree(wanted));
  const server = await startFerretDb({ bin, dataDir: opts.dataDir, port: busy ? 0 : wanted, log: opts.log });
  if (busy) opts.log(`port ${wanted} is busy; FerretDB listens on ${server.port}`);
  return { url: server.url, pid: server.pid, stop: server.stop };
}
