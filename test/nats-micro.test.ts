// Workers as a NATS service: the micro protocol's discovery subjects list each worker process with
// one endpoint per slice subject in the shared queue group, and count the requests it served.
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { startRole } from './harness/processes.js';
import { freshDatabaseUrl } from './harness/servers.js';
import { postJson, rpc, startTestService } from './harness/service.js';

interface EndpointInfo {
  name: string;
  subject: string;
  queue_group: string;
}
interface EndpointStats extends EndpointInfo {
  num_requests: number;
  num_errors: number;
  processing_time: number;
}
interface Instance<E> {
  name: string;
  id: string;
  version: string;
  endpoints: E[];
}

/** Every instance of the carecircle service that answers the verb, over all processes on the server. */
async function discover<E extends EndpointInfo>(nc: NatsConnection, verb: 'INFO' | 'STATS', namespace: string): Promise<Instance<E>[]> {
  const replies = await nc.requestMany(`$SRV.${verb}.carecircle`, '', { maxWait: 1_000 });
  const out: Instance<E>[] = [];
  for await (const m of replies) out.push(m.json<Instance<E>>());
  // Other tests share the server: keep the instances serving this test's namespace.
  return out.filter((i) => i.endpoints.some((e) => e.subject.startsWith(`${namespace}.`)));
}

describe('workers as a NATS service', () => {
  const cleanup: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const c of cleanup.splice(0).reverse()) await c();
  });

  it('when two workers serve, then $SRV.INFO lists both with one endpoint per slice in the workers queue group, and $SRV.STATS counts a request', async () => {
    const mongoUrl = freshDatabaseUrl(inject('mongoUrl'));
    const namespace = `micro${process.pid}`;
    const env = { NATS_URL: inject('natsUrl'), MONGO_URL: mongoUrl, BUS_NAMESPACE: namespace };
    const workers = [startRole('worker', env), startRole('worker', env)];
    for (const w of workers) cleanup.push(() => w.kill('SIGKILL'));
    await Promise.all(workers.map((w) => w.waitFor(/workers serving/)));
    const gateway = await startTestService({ nats: true, role: 'gateway', mongoUrl, env });
    cleanup.push(() => gateway.stop());
    const nc = await connect({ servers: inject('natsUrl') });
    cleanup.push(() => nc.close());

    const info = await discover<EndpointInfo>(nc, 'INFO', namespace);
    expect(info).toHaveLength(2);
    for (const instance of info) {
      expect(instance.name).toBe('carecircle');
      const directory = instance.endpoints.find((e) => e.name === 'directory');
      expect(directory).toEqual(expect.objectContaining({ subject: `${namespace}.cc.http.directory`, queue_group: 'workers' }));
      expect(instance.endpoints.every((e) => e.subject === `${namespace}.cc.http.${e.name}`)).toBe(true);
      expect(instance.endpoints.map((e) => e.name)).toEqual(expect.arrayContaining(['workspace', 'site', 'app']));
    }

    const res = await postJson(
      `${gateway.urls.site}/api/mcp`,
      rpc('tools/call', { name: 'search_care_resources', arguments: { query: 'respite care', limit: 2 } }),
    );
    expect(res.status).toBe(200);

    const stats = await discover<EndpointStats>(nc, 'STATS', namespace);
    const served = stats.flatMap((i) => i.endpoints.filter((e) => e.name === 'directory'));
    expect(served).toHaveLength(2);
    // The queue group gave the request to exactly one of the two workers, and its time was counted.
    expect(served.map((e) => e.num_requests).sort()).toEqual([0, 1]);
    expect(served.find((e) => e.num_requests === 1)!.processing_time).toBeGreaterThan(0);
    expect(served.every((e) => e.num_errors === 0)).toBe(true);
  });
});
