// carecircle on a three-node NATS cluster: streams and buckets replicated NATS_REPLICAS times, a
// cluster that lost a bucket's quorum answered as the outage it is, and the chaos suite, bounded:
// one round of killing a worker, the cron leader, a gateway, the NATS node leading the ingest
// stream and the database (5 s) under steady signed ingest (one note in five mentions a fall and
// alerts two members by mail) and MCP load. Every event a partner was told was accepted is stored
// exactly once, and every alert due is mailed once. `npm run chaos` runs the longer version
// (scripts/chaos.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NatsBus } from '../src/bus/nats.js';
import { createLogger } from '../src/log.js';
import { RPC } from '../src/rpc/codes.js';
import { chaosLine, runChaos } from './harness/chaos.js';
import { startNatsCluster, type NatsCluster } from './harness/natsCluster.js';
import { postJson, rpc, startTestService } from './harness/service.js';

describe('NATS_REPLICAS on a cluster', () => {
  let cluster: NatsCluster;
  beforeAll(async () => {
    cluster = await startNatsCluster(3);
  });
  afterAll(() => cluster?.stop());

  it('when a bus asks for three replicas, then its streams and key-value buckets get three, and existing single copies are scaled up', async () => {
    const spec = { name: 'REPLICAS_TEST', subjects: ['replicas.test'], duplicateWindowMs: 60_000, retention: 'workqueue' as const };
    const single = await NatsBus.connect(cluster.url, createLogger('silent'), 'replicas-1', { replicas: 1 });
    const triple = await NatsBus.connect(cluster.url, createLogger('silent'), 'replicas-3', { replicas: 3 });
    try {
      await single.durable.ensureStream(spec);
      await single.kv.bucket({ name: 'replicas_test' });
      expect([await cluster.replicas('REPLICAS_TEST'), await cluster.replicas('KV_replicas_test')]).toEqual([1, 1]);

      await triple.durable.ensureStream(spec);
      await triple.kv.bucket({ name: 'replicas_test' });
      await triple.kv.bucket({ name: 'replicas_new' });
      expect([await cluster.replicas('REPLICAS_TEST'), await cluster.replicas('KV_replicas_test'), await cluster.replicas('KV_replicas_new')]).toEqual([
        3, 3, 3,
      ]);
      await cluster.settled(['REPLICAS_TEST', 'KV_replicas_test', 'KV_replicas_new']);
    } finally {
      await single.close();
      await triple.close();
    }
  });

  it(
    'when the cluster loses the quorum of the rate-limit bucket, then the MCP endpoint answers 503 with Retry-After, not 500',
    { timeout: 90_000 },
    async () => {
      const svc = await startTestService({
        env: { NATS_URL: cluster.url, NATS_REPLICAS: '3', BUS_NAMESPACE: 'quorum', BUS_TIMEOUT_MS: '3000', GATEWAY_RETRY_WINDOW_MS: '6000' },
      });
      try {
        const search = () =>
          postJson(`${svc.urls.site}/api/mcp`, rpc('tools/call', { name: 'search_care_resources', arguments: { query: 'respite care', limit: 2 } }, 'q-1'));
        expect((await search()).status).toBe(200);
        await cluster.settled(['KV_cc_rate_limits_quorum']);
        // Two of three copies gone: the bucket can be read but no longer written until one is back.
        await cluster.nodes[0]!.kill();
        await cluster.nodes[1]!.kill();
        const res = await search();
        expect({ status: res.status, retryAfter: Number(res.headers.get('retry-after')) > 0 }).toEqual({ status: 503, retryAfter: true });
        expect(res.json).toMatchObject({ id: 'q-1', error: { code: RPC.UNAVAILABLE } });
      } finally {
        await Promise.all([cluster.nodes[0]!.start(), cluster.nodes[1]!.start()]);
        await svc.stop();
        await cluster.settled(['KV_cc_rate_limits_quorum']);
      }
    },
  );
});

describe('chaos on a NATS cluster', () => {
  it(
    'when a worker, the cron leader, a gateway, the stream-leading NATS node and the database are killed under load, then no accepted event is lost or stored twice, and no alert is lost or mailed twice',
    { timeout: 480_000 },
    async () => {
      const counts = await runChaos({
        rounds: 1,
        eventsPerSecond: 15,
        mcpPerSecond: 5,
        calmMs: 3_000,
        dbOutageMs: 5_000,
        ...(process.env.CHAOS_LOG_DIR ? { logDir: process.env.CHAOS_LOG_DIR } : {}),
      });
      const { faults, answers, ...figures } = counts;
      console.log(`${faults.map((f) => `  ${f}`).join('\n')}\n${JSON.stringify({ ...figures, answers }, null, 1)}\n${chaosLine(counts)}`);

      expect(Object.values(counts.replicas)).toEqual([3, 3, 3]);
      expect(counts.failovers).toHaveLength(1);
      expect(counts.failovers[0]).toMatch(/^n\d → n\d$/);
      expect(counts.crashed).toEqual([]);
      // The partner retried each event under its id until it was accepted: the service came back.
      expect(counts.notAccepted).toEqual({});
      expect(counts.accepted).toBe(counts.sent);
      expect({ lost: counts.lost, duplicated: counts.duplicated }).toEqual({ lost: 0, duplicated: 0 });
      expect(counts.stored).toBe(counts.accepted);
      // Alerts: every accepted note that mentions a fall mailed once to each member (a copy sent
      // again under the same Message-ID after a kill mid-send is counted apart, as `resent`), and
      // the other cron process took over the lease of the one killed.
      expect(counts.alerts.due).toBeGreaterThan(0);
      expect({ lost: counts.alerts.lost, doubled: counts.alerts.doubled, stray: counts.alerts.stray }).toEqual({ lost: 0, doubled: 0, stray: 0 });
      expect(counts.alerts.delivered).toBe(counts.alerts.due);
      expect(counts.cronLeaders).toHaveLength(1);
      expect(counts.cronLeaders[0]).toMatch(/^cron (\d) \(pid \d+\) → cron (?!\1)\d \(pid \d+\) after/);
      // Faults are answered 503 (or not at all, from the gateway that is down), never 500.
      expect(Object.keys(counts.mcp).filter((status) => !['200', '503', 'net'].includes(status))).toEqual([]);
    },
  );
});
