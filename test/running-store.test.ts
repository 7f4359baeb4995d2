// The embedded run records where its store listens, and the carecircle commands use that store or
// refuse: never a second server on the service's files, never whatever else holds the default port.
import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { MongoClient } from 'mongodb';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createLogger } from '../src/log.js';
import { PARTNER_COLLECTIONS } from '../src/partner/records.js';
import { startService, type RunningService } from '../src/service.js';
import { STORE_ADDRESS_FILE } from '../src/store/embedded/address.js';
import { postEvent, visit } from './ingest.fixtures.js';
import { ferretDbBinDir, freePort, repoRoot } from './harness/servers.js';
import { surfaceEnv, testConfig } from './harness/service.js';

const run = promisify(execFile);

const dirs: string[] = [];
/** A DATA_DIR of its own, with the FerretDB build the suite already has (no build per test). */
function dataDir(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'cc-running-store-'));
  dirs.push(dir);
  mkdirSync(path.join(dir, 'bin'));
  symlinkSync(path.join(ferretDbBinDir, 'ferretdb'), path.join(dir, 'bin', 'ferretdb'));
  copyFileSync(path.join(ferretDbBinDir, 'ferretdb.sha256'), path.join(dir, 'bin', 'ferretdb.sha256'));
  return dir;
}
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** The carecircle command as an operator types it beside the service: no MONGO_URL, no NATS_URL. */
async function carecircle(dir: string, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, ['--import', 'tsx', path.join(repoRoot, 'src/cli.ts'), ...args], {
      cwd: repoRoot,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', NODE_ENV: 'test', LOG_LEVEL: 'silent', DATA_DIR: dir },
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

describe('the store of the embedded run', () => {
  // Another MongoDB-compatible server holds the port the embedded store asks for (27017 by
  // default): the suite's own, so the test needs neither 27017 nor a second server of its own.
  const otherUrl = inject('mongoUrl');
  const takenPort = Number(new URL(otherUrl).port);
  let dir: string;
  let service: RunningService;
  let pipeUrl: string;

  beforeAll(async () => {
    dir = dataDir();
    const config = testConfig({ ...(await surfaceEnv()), DATA_DIR: dir, EMBEDDED_DB_PORT: String(takenPort), DIRECTORY_THREADS: '0', METRICS_PORT: 'off' });
    service = await startService('all', config, createLogger(config.logLevel));
    pipeUrl = service.urls.pipe!;
  });
  afterAll(async () => {
    await service?.stop();
  });

  it('when the port it asks for is taken, then it records the free one it got, and `carecircle partner` writes to that store', async () => {
    const recorded = JSON.parse(readFileSync(path.join(dir, STORE_ADDRESS_FILE), 'utf8'));
    expect(recorded).toMatchObject({ pid: process.pid, url: expect.stringMatching(/^mongodb:\/\/127\.0\.0\.1:\d+\/carecircle$/) });
    expect(Number(new URL(recorded.url).port)).not.toBe(takenPort);

    const created = await carecircle(dir, 'partner', 'create', '--name', 'Elsewhere Home Care', '--id', 'elsewhere-home', '--json');
    expect(created.stderr).toBe('');
    expect(created.code).toBe(0);
    const { secret_id: secretId, secret } = JSON.parse(created.stdout);

    // The service knows the agency: a signed event is refused for family-share (404), not as unknown (403).
    const reply = await postEvent(
      pipeUrl,
      { institutionId: 'elsewhere-home', secretId, secret },
      visit({ institutionId: 'elsewhere-home', secretId, secret }, 'client-1'),
    );
    expect(reply.status).toBe(404);
    const other = new MongoClient(otherUrl);
    try {
      expect(
        await other
          .db('carecircle')
          .collection(PARTNER_COLLECTIONS.institutions)
          .countDocuments({ _id: 'elsewhere-home' as never }),
      ).toBe(0);
    } finally {
      await other.close();
    }
    const listed = await carecircle(dir, 'deadletters', 'list');
    expect({ code: listed.code, stdout: listed.stdout }).toEqual({ code: 0, stdout: 'no dead letters\n' });
  });

  it('when it is running, then a second run on the same DATA_DIR refuses instead of opening the same files', async () => {
    const config = testConfig({ ...(await surfaceEnv()), DATA_DIR: dir, DIRECTORY_THREADS: '0', METRICS_PORT: 'off' });
    await expect(startService('all', config, createLogger(config.logLevel))).rejects.toThrow(
      `carecircle is already running on DATA_DIR ${dir} (process ${process.pid})`,
    );
    expect(existsSync(path.join(dir, STORE_ADDRESS_FILE))).toBe(true);
  });
});

describe('carecircle commands without a running service', () => {
  it('when nothing runs on DATA_DIR, then partner and deadletters refuse and start no server of their own', async () => {
    const dir = dataDir();
    for (const args of [
      ['partner', 'list'],
      ['deadletters', 'list'],
    ]) {
      const { code, stdout, stderr } = await carecircle(dir, ...args);
      expect({ args, code, stdout }).toEqual({ args, code: 1, stdout: '' });
      expect(stderr).toContain('start carecircle first with npm start, or set MONGO_URL');
    }
    expect(existsSync(path.join(dir, 'db'))).toBe(false);
  });

  it('when the run that recorded its store has died, then the record is stale: commands refuse, and the next start replaces it', async () => {
    const dir = dataDir();
    const gone = spawn(process.execPath, ['-e', '']);
    await once(gone, 'exit');
    writeFileSync(
      path.join(dir, STORE_ADDRESS_FILE),
      JSON.stringify({ url: `mongodb://127.0.0.1:1/carecircle`, pid: gone.pid, serverPid: gone.pid, startedAt: new Date().toISOString() }),
    );
    const { code, stderr } = await carecircle(dir, 'partner', 'list');
    expect(code).toBe(1);
    expect(stderr).toContain(`was left by process ${gone.pid}, which has stopped`);
    expect(stderr).toContain('start carecircle first with npm start, or set MONGO_URL');

    const config = testConfig({ ...(await surfaceEnv()), DATA_DIR: dir, EMBEDDED_DB_PORT: '0', DIRECTORY_THREADS: '0', METRICS_PORT: 'off' });
    const service = await startService('all', config, createLogger(config.logLevel));
    try {
      expect(JSON.parse(readFileSync(path.join(dir, STORE_ADDRESS_FILE), 'utf8')).pid).toBe(process.pid);
    } finally {
      await service.stop();
    }
    // A clean stop takes the record away.
    expect(existsSync(path.join(dir, STORE_ADDRESS_FILE))).toBe(false);
  });

  it('when the recorded processes exist but its store does not answer (a reused pid), then commands refuse and the next start replaces the record', async () => {
    const dir = dataDir();
    const url = `mongodb://127.0.0.1:${await freePort()}/carecircle`;
    writeFileSync(path.join(dir, STORE_ADDRESS_FILE), JSON.stringify({ url, pid: process.pid, serverPid: process.pid, startedAt: new Date().toISOString() }));
    const { code, stderr } = await carecircle(dir, 'deadletters', 'list');
    expect(code).toBe(1);
    expect(stderr).toContain(`the store carecircle (process ${process.pid}) recorded in ${path.join(dir, STORE_ADDRESS_FILE)} does not answer`);

    const config = testConfig({ ...(await surfaceEnv()), DATA_DIR: dir, EMBEDDED_DB_PORT: '0', DIRECTORY_THREADS: '0', METRICS_PORT: 'off' });
    const service = await startService('all', config, createLogger(config.logLevel));
    try {
      expect(JSON.parse(readFileSync(path.join(dir, STORE_ADDRESS_FILE), 'utf8')).url).not.toBe(url);
    } finally {
      await service.stop();
    }
  });
});
