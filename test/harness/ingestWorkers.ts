// Two worker processes and a gateway over real NATS on a database of their own: the deployment the
// cross-worker ingest tests keep under load while records change elsewhere.
import { afterAll, beforeAll, inject } from 'vitest';
import { startRole, type RoleProcess } from './processes.js';
import { freshDatabaseUrl } from './servers.js';
import { startTestService, type TestService } from './service.js';
import { TEST_DATA_KEY } from '../ingest.fixtures.js';

export interface IngestWorkers {
  workers: RoleProcess[];
  gateway: TestService;
  /** The gateway's pipe URL. */
  pipe: string;
  /** The deployment's configuration, for another process to join it. */
  env: Record<string, string>;
}

/** Starts the deployment before the file's tests (bus namespace `<namespace><pid>`) and stops it after. */
export function useTwoIngestWorkers(namespace: string): IngestWorkers {
  const d = { workers: [] as RoleProcess[] } as IngestWorkers;
  beforeAll(async () => {
    const mongoUrl = freshDatabaseUrl(inject('mongoUrl'));
    d.env = {
      NATS_URL: inject('natsUrl'),
      MONGO_URL: mongoUrl,
      BUS_NAMESPACE: `${namespace}${process.pid}`,
      DATA_KEY: TEST_DATA_KEY,
      RATE_INGEST_PER_MIN: '100000',
      APP_URL: 'http://localhost:8081',
    };
    d.workers = [startRole('worker', d.env), startRole('worker', d.env)];
    await Promise.all(d.workers.map((w) => w.waitFor(/ingest consumer started/)));
    d.gateway = await startTestService({ nats: true, role: 'gateway', mongoUrl, env: d.env });
    d.pipe = d.gateway.urls.pipe!;
  }, 60_000);
  afterAll(async () => {
    await d.gateway?.stop();
    await Promise.all(d.workers.map((w) => w.kill('SIGKILL')));
  });
  return d;
}
