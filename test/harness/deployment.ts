// A NATS-mode deployment as operators run it: one gateway process and worker processes on a real
// nats-server and one database, with a test-side database handle to check what was stored.
import { MongoClient, type Db } from 'mongodb';
import { vi } from 'vitest';
import type { Config } from '../../src/config.js';
import { startRole, type RoleProcess } from './processes.js';
import { surfaceEnv, testConfig } from './service.js';

export interface Deployment {
  /** Listener URLs by surface (site, app, auth, pipe, apex). */
  urls: Record<'site' | 'app' | 'auth' | 'pipe' | 'apex', string>;
  /** The configuration every role was started with, as a process would load it. */
  config: Config;
  roles: { name: string; process: RoleProcess }[];
  db: Db;
  /** Roles that are no longer running, with how they ended. */
  dead(): string[];
  stop(): Promise<void>;
}

async function answers(url: string, timeoutMs: number, gateway: RoleProcess): Promise<void> {
  let exited: number | null = null;
  await vi.waitFor(
    async () => {
      // A gateway that exited will never answer: stop asking (the error below says so).
      if ((exited = gateway.child.exitCode) !== null) return;
      if (
        !(await fetch(url).then(
          (r) => r.ok,
          () => false,
        ))
      )
        throw new Error(`${url} never answered`);
    },
    { timeout: timeoutMs, interval: 100 },
  );
  if (exited !== null) {
    await gateway.closed;
    throw new Error(`gateway exited with ${exited}; ${gateway.tail()}`);
  }
}

type DeploymentOptions = { natsUrl: string; mongoUrl: string; workers?: number; env?: Record<string, string> };

export async function startDeployment(opts: DeploymentOptions): Promise<Deployment> {
  // A port picked free can be taken by an outgoing connection before the gateway binds it: then
  // the whole deployment starts again on new ports (the workers' links name the surfaces too).
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(opts);
    } catch (err) {
      if (attempt >= 3 || !/EADDRINUSE|address already in use/i.test(String((err as Error).message))) throw err;
    }
  }
}

async function startOnce(opts: DeploymentOptions): Promise<Deployment> {
  const surfaces = await surfaceEnv();
  const env = { NATS_URL: opts.natsUrl, MONGO_URL: opts.mongoUrl, BUS_NAMESPACE: `dep${process.pid}${Date.now() % 100_000}`, ...surfaces, ...opts.env };
  const roles: Deployment['roles'] = [];
  const client = new MongoClient(opts.mongoUrl);
  const stop = async () => {
    await Promise.all(roles.map((r) => r.process.kill('SIGKILL')));
    await client.close();
  };
  try {
    for (let i = 0; i < (opts.workers ?? 2); i++) roles.push({ name: `worker ${i + 1}`, process: startRole('worker', env) });
    await Promise.all(roles.map((r) => r.process.waitFor(/workers serving/, 60_000)));
    const gateway = startRole('gateway', env);
    roles.push({ name: 'gateway', process: gateway });
    await answers(`${surfaces.SITE_URL}/healthz`, 60_000, gateway);
    await client.connect();
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    urls: { site: surfaces.SITE_URL!, app: surfaces.APP_URL!, auth: surfaces.AUTH_URL!, pipe: surfaces.PIPE_URL!, apex: surfaces.APEX_URL! },
    config: testConfig(env),
    roles,
    db: client.db(),
    dead: () =>
      roles
        .filter((r) => r.process.child.exitCode !== null || r.process.child.signalCode !== null)
        .map((r) => `${r.name} (exit ${r.process.child.exitCode ?? r.process.child.signalCode})`),
    stop,
  };
}
