// Child processes of the benchmark: carecircle roles and the SDK server, each reporting its
// listener URLs over IPC, plus the CPU time any process has used so far (from /proc).
import { type ChildProcess, execFileSync, fork } from 'node:child_process';
import { once } from 'node:events';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { MongoClient, type Db } from 'mongodb';
import { passThroughCredentials } from '../../src/auth/credentials.js';
import { CONFIG_KEYS } from '../../src/config.js';
import { FamilyShares } from '../../src/ingest/familyShare.js';
import { PartnerStore } from '../../src/partner/records.js';
import { parseDataKey, SecretBox } from '../../src/partner/secretBox.js';
import { databaseName } from '../../src/store/mongo.js';
import { signUpFamily, type Family } from './family.js';
import type { Watched } from './infra.js';
import { KNOBS } from './knobs.js';
import { listenerPort } from './ports.js';

const here = path.dirname(fileURLToPath(import.meta.url));

let ticksPerSecond: number | undefined;
function clockTicks(): number {
  if (ticksPerSecond === undefined) {
    try {
      ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      ticksPerSecond = 100;
    }
  }
  return ticksPerSecond;
}

/** User + system CPU milliseconds a process has used, or undefined where /proc cannot tell. */
export function cpuMs(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) / clockTicks()) * 1000;
  } catch {
    return undefined;
  }
}

export interface Child extends Watched {
  urls: Record<string, string>;
  stop(): Promise<void>;
}

/** Forks a TypeScript entry with IPC and exactly `env`; resolves once it sends `{ type: 'ready', urls }`. Its stdout goes to `logFile`. */
export async function forkReady(label: string, entry: string, args: string[], env: NodeJS.ProcessEnv, logFile?: string): Promise<Child> {
  const out = logFile ? openSync(logFile, 'a') : 'ignore';
  const child: ChildProcess = fork(path.join(here, entry), args, {
    execArgv: ['--import', 'tsx'],
    cwd: path.resolve(here, '../..'),
    env,
    stdio: ['ignore', out, 'pipe', 'ipc'],
  });
  if (typeof out === 'number') closeSync(out);
  const logTail = () => (logFile ? `; log: ${readFileSync(logFile, 'utf8').slice(-3000)}` : '');
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => void (stderr = (stderr + chunk.toString()).slice(-4000)));
  const exited = once(child, 'exit');
  const urls = await new Promise<Record<string, string>>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${label} did not start within 180 s: ${stderr}${logTail()}`)), 180_000);
    child.on('message', (m: { type?: string; urls?: Record<string, string> }) => {
      if (m.type !== 'ready') return;
      clearTimeout(timer);
      resolve(m.urls ?? {});
    });
    void exited.then(([code]) => (clearTimeout(timer), reject(new Error(`${label} exited (${String(code)}) before it was ready: ${stderr}${logTail()}`))));
  });
  return {
    label,
    ...(child.pid ? { pid: child.pid } : {}),
    urls,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.send('stop');
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

const LISTENERS = [
  ['SITE_PORT', 'SITE_URL'],
  ['APP_PORT', 'APP_URL'],
  ['AUTH_PORT', 'AUTH_URL'],
  ['PIPE_PORT', 'PIPE_URL'],
  ['APEX_PORT', 'APEX_URL'],
  ['SMTP_PORT', ''],
] as const;

/** Every listener of a deployment on a new free port, with the public URLs that name them (hosts are checked). */
async function assignListeners(env: Record<string, string>): Promise<void> {
  for (const [portKey, urlKey] of LISTENERS) {
    const port = await listenerPort();
    env[portKey] = String(port);
    if (urlKey) env[urlKey] = `http://127.0.0.1:${port}`;
  }
}

/** Environment of one carecircle deployment: every listener on a free loopback port, its own data. */
export async function carecircleEnv(mongoUrl: string, extra: Record<string, string> = {}): Promise<{ env: Record<string, string>; cleanup(): void }> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'carecircle-bench-data-'));
  const env: Record<string, string> = {
    NODE_ENV: 'development',
    LOG_LEVEL: KNOBS.logLevel,
    BIND_HOST: '127.0.0.1',
    // Several processes share this host: each takes a free metrics port.
    METRICS_PORT: '0',
    DATA_DIR: dataDir,
    MONGO_URL: mongoUrl,
    // A fixed key, so the bench itself can store partner secrets the service can read.
    DATA_KEY: Buffer.alloc(32, 7).toString('base64'),
    // The limits stay on the path but never refuse: a 429 would measure nothing.
    RATE_DIRECTORY_MCP_PER_MIN: '100000000',
    RATE_MCP_KEY_PER_MIN: '100000000',
    RATE_MCP_SESSION_PER_MIN: '100000000',
    RATE_INGEST_PER_MIN: '100000000',
    ...extra,
  };
  await assignListeners(env);
  return { env, cleanup: () => rmSync(dataDir, { recursive: true, force: true }) };
}

/** The bench's environment without carecircle settings: each deployment is configured by the bench alone. */
function withoutCarecircleSettings(): Record<string, string> {
  const names = new Set<string>(Object.values(CONFIG_KEYS).map((k) => k.env));
  return Object.fromEntries(Object.entries(process.env).filter((e): e is [string, string] => e[1] !== undefined && !names.has(e[0])));
}

/**
 * One carecircle role in its own process, logging to DATA_DIR/<role>.log. A port taken between
 * pick and bind moves every listener to new ports (in `env`, so roles started later share them).
 */
export async function startCarecircle(label: string, role: string, env: Record<string, string>): Promise<Child> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await forkReady(label, 'serve.ts', [role], { ...withoutCarecircleSettings(), ...env }, path.join(env.DATA_DIR!, `${role}.log`));
    } catch (err) {
      if (attempt >= 3 || !/EADDRINUSE/.test((err as Error).message)) throw err;
      await assignListeners(env);
    }
  }
}

/** Stops every child, newest first, even when one of them fails to stop. */
export async function stopAll(children: { stop(): Promise<void> }[]): Promise<void> {
  for (const child of [...children].reverse()) await child.stop().catch(() => {});
}

/** A deployment the partner parts send to: one carecircle process (all roles), its family, and an agency linked to the family's loved one as `client-bench`. */
export interface PartnerDeployment {
  env: Record<string, string>;
  service: Child;
  /** The deployment's database, on a handle of the bench's own. */
  db: Db;
  family: Family;
  institutionId: string;
  secret: string;
  stop(): Promise<void>;
}

/** Starts carecircle on `mongoUrl` with `extra` settings, signs up a family, and links a partner agency to its loved one. */
export async function startPartnerDeployment(mongoUrl: string, extra: Record<string, string> = {}): Promise<PartnerDeployment> {
  const { env, cleanup } = await carecircleEnv(mongoUrl, extra);
  const client = await new MongoClient(env.MONGO_URL!).connect();
  const children: Child[] = [];
  const stop = async () => {
    await stopAll(children);
    await client.close();
    cleanup();
  };
  try {
    const service = await startCarecircle('carecircle', 'all', env);
    children.push(service);
    const db = client.db(databaseName(env.MONGO_URL!));
    const family = await signUpFamily(service.urls.app!, env);
    // The service runs in a process of its own: this handle keeps nothing it could serve stale.
    const credentials = passThroughCredentials(db);
    const partners = new PartnerStore(db, new SecretBox(parseDataKey(env.DATA_KEY!)), credentials);
    const { institution, secret } = await partners.create({ name: 'Bench Home Care', id: 'bench-home' });
    const shares = new FamilyShares(db, credentials);
    const { linkCode } = await shares.enable(institution._id, 'client-bench');
    await shares.link(linkCode!.code, { lovedOneId: family.lovedOneId, workspaceId: family.workspaceId, uid: family.uid });
    return { env, service, db, family, institutionId: institution._id, secret: secret.value, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
