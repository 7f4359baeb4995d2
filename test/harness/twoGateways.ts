// One deployment behind a balancer, for tests of what must hold on the very next request
// everywhere: two gateways (A in this process with the public listeners, B beside it) and two
// worker processes, on the run's NATS server and a database of its own.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, inject } from 'vitest';
import { startRole, type RoleProcess } from './processes.js';
import { freshDatabaseUrl } from './servers.js';
import { startTestService, surfaceEnv, type TestService } from './service.js';

export interface TwoGateways {
  a: TestService;
  b: TestService;
  /** The worker processes (their output lines say what each handled). */
  workers: RoleProcess[];
  stop(): Promise<void>;
}

export async function startTwoGateways(namespace: string): Promise<TwoGateways> {
  const mongoUrl = freshDatabaseUrl(inject('mongoUrl'));
  const surfaces = await surfaceEnv();
  // Every process names the same public URLs (gateway A's), as one deployment behind a balancer.
  const publicUrls = Object.fromEntries(Object.entries(surfaces).filter(([k]) => k.endsWith('_URL')));
  // These tests assert what every request sees after a change, never how fast it is answered. On a
  // starved machine (load 8 on 2 cores) a POST such as creating a workspace or removing a member took
  // the worker up to 5 s of store work, and a POST is not sent twice: past the 5 s default the
  // gateway answers 503 while the worker goes on. A wider budget keeps load from failing them.
  const budget = { BUS_TIMEOUT_MS: '20000', GATEWAY_RETRY_WINDOW_MS: '20000' };
  const env = {
    NATS_URL: inject('natsUrl'),
    MONGO_URL: mongoUrl,
    BUS_NAMESPACE: `${namespace}${randomBytes(3).toString('hex')}`,
    RATE_MCP_KEY_PER_MIN: '100000',
    ...budget,
    ...publicUrls,
  };
  const workers: RoleProcess[] = [startRole('worker', env), startRole('worker', env)];
  const started: TestService[] = [];
  try {
    await Promise.all(workers.map((w) => w.waitFor(/workers serving/)));
    started.push(await startTestService({ nats: true, role: 'gateway', mongoUrl, env: { ...env, ...surfaces } }));
    started.push(await startTestService({ nats: true, role: 'gateway', mongoUrl, env }));
  } catch (err) {
    // A start that failed half-way leaves no process behind to slow the rest of the run.
    await Promise.all([...started.map((s) => s.stop()), ...workers.map((w) => w.kill('SIGKILL'))]);
    throw err;
  }
  const [a, b] = started as [TestService, TestService];
  return {
    a,
    b,
    workers,
    stop: async () => {
      await b.stop();
      await a.stop();
      await Promise.all(workers.map((w) => w.kill('SIGKILL')));
    },
  };
}

/** The deployment for a test file: started before its tests, stopped after them. Its gateways are
 *  read inside tests (`gateways().a`). */
export function twoGatewaysForFile(namespace: string): () => TwoGateways {
  let cluster: TwoGateways | undefined;
  beforeAll(async () => {
    cluster = await startTwoGateways(namespace);
  }, 60_000);
  afterAll(async () => {
    await cluster?.stop();
  });
  return () => {
    if (!cluster) throw new Error('the two-gateway deployment has not started');
    return cluster;
  };
}
