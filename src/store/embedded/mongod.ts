/** Starts a real `mongod` from PATH as the embedded MongoDB-compatible server. */
import { mkdirSync } from 'node:fs';
import { spawnServerProcess, START_TIMEOUT_MS, waitForPort, type ServerLaunch, type StartedServer } from './process.js';

/** Starts `mongod` on 127.0.0.1:`port` and resolves once the port accepts connections. */
export async function startMongod(opts: ServerLaunch): Promise<StartedServer> {
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
