// A FerretDB of a test file's own, for tests that stop and start the database (outages) without
// disturbing the run's shared one.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ensureFerretDbBinary, startFerretDb } from '../../src/store/embedded/ferretdb.js';
import type { StartedServer } from '../../src/store/embedded/process.js';
import { ferretDbBinDir, freePort, repoRoot } from './servers.js';

export interface PrivateFerretDb {
  /** A MongoDB URL naming `database` on this server. */
  url(database: string): string;
  /** Starts it again on the same port and data (after `stop`). */
  start(): Promise<void>;
  stop(): Promise<void>;
  /** Stops it and removes its data. */
  remove(): Promise<void>;
}

export async function startPrivateFerretDb(name: string): Promise<PrivateFerretDb> {
  const quiet = () => undefined;
  const bin = await ensureFerretDbBinary({ binDir: ferretDbBinDir, repoRoot, log: quiet });
  const port = await freePort();
  const dataDir = mkdtempSync(path.join(os.tmpdir(), `carecircle-${name}-`));
  let server: StartedServer | undefined;
  const start = async () => {
    server = await startFerretDb({ bin, dataDir, port, log: quiet });
  };
  const stop = async () => {
    await server?.stop();
    server = undefined;
  };
  await start();
  return {
    url: (database) => `mongodb://127.0.0.1:${port}/${database}`,
    start,
    stop,
    remove: async () => {
      await stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
