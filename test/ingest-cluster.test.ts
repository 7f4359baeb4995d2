// The ingest scaled out over real NATS: a worker killed while a burst is in flight, and two pipe
// gateways sharing one database and one stream. Every 202'd event is stored exactly once.
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { PartnerClient } from '../src/partner/client.js';
import { startRole } from './harness/processes.js';
import { freshDatabaseUrl } from './harness/servers.js';
import { startTestService, type TestService } from './harness/service.js';
import { careEvents, drained, family, onboard, postEvent, shareWith, TEST_DATA_KEY, visit } from './ingest.fixtures.js';

const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

describe('ingest cluster', () => {
  it('when a worker is killed while a burst is in flight, then every 202 event is stored exactly once', async () => {
    const mongoUrl = freshDatabaseUrl(inject('mongoUrl'));
    const env = {
      NATS_URL: inject('natsUrl'),
      MONGO_URL: mongoUrl,
      BUS_NAMESPACE: `ingkill${process.pid}`,
      DATA_KEY: TEST_DATA_KEY,
      INGEST_ACK_WAIT_MS: '1000',
      BUS_TIMEOUT_MS: '1000',
      RATE_INGEST_PER_MIN: '100000',
      APP_URL: 'http://localhost:8081', // the worker checks link requests come from the app's origin
    };
    const workers = [startRole('worker', env), startRole('worker', env)];
    for (const w of workers) cleanup.push(() => w.kill('SIGKILL'));
    await Promise.all(workers.map((w) => w.waitFor(/ingest consumer started/)));
    const gateway: TestService = await startTestService({ nats: true, role: 'gateway', mongoUrl, env: { ...env, GATEWAY_RETRY_WINDOW_MS: '8000' } });
    cleanup.push(() => gateway.stop());

    const partner = await onboard(gateway.store.db, gateway.credentials);
    const fam = await family(gateway.store.db, gateway.credentials, gateway.config);
    await shareWith(gateway, partner, 'client-burst', fam);
    // The partner's own client, with its retry rule (delays shortened for the test).
    const client = new PartnerClient({
      baseUrl: gateway.urls.pipe!,
      institutionId: partner.institutionId,
      secret: partner.secret,
      sleep: (ms) => sleep(Math.min(ms, 100)),
    });

    const TOTAL = 150;
    const accepted = new Map<string, string>();
    const refused: string[] = [];
    let next = 0;
    let killed: Promise<unknown> | undefined;
    await Promise.all(
      Array.from({ length: 10 }, async () => {
        while (next < TOTAL) {
          const i = next++;
          if (i === 50) killed = workers[0]!.kill('SIGKILL');
          const r = await client.sendEvent({ ...visit(partner, 'client-burst'), source_event_id: `burst-${i}` });
          if (r.ok) accepted.set(`burst-${i}`, r.eventId!);
          else refused.push(`${i}: ${r.reason}`);
        }
      }),
    );
    await killed;
    expect(refused).toEqual([]);
    expect(accepted.size).toBe(TOTAL);
    expect(workers[0]!.lines.some((l) => l.includes('"msg":"event accepted"'))).toBe(true);

    await drained(gateway.bus, gateway.config);
    const rows = await careEvents(gateway.store.db).find({ lovedOneId: fam.lovedOneId }).toArray();
    expect(rows).toHaveLength(TOTAL);
    expect(new Set(rows.map((r) => r.sourceEventId)).size).toBe(TOTAL);
    expect(Object.fromEntries(rows.map((r) => [r.sourceEventId, r._id]))).toEqual(Object.fromEntries(accepted));
  });

  it('when two pipe gateways take events and duplicates at once, then each event is stored once', async () => {
    const mongoUrl = freshDatabaseUrl(inject('mongoUrl'));
    const env = { BUS_NAMESPACE: `ing2gw${process.pid}`, DATA_KEY: TEST_DATA_KEY, RATE_INGEST_PER_MIN: '100000', APP_URL: 'http://localhost:8081' };
    const worker = await startTestService({ nats: true, role: 'worker', mongoUrl, env });
    cleanup.push(() => worker.stop());
    const gateways = [
      await startTestService({ nats: true, role: 'gateway', mongoUrl, env }),
      await startTestService({ nats: true, role: 'gateway', mongoUrl, env }),
    ];
    for (const g of gateways) cleanup.push(() => g.stop());

    const partner = await onboard(worker.store.db, worker.credentials);
    const fam = await family(worker.store.db, worker.credentials, worker.config);
    await shareWith(gateways[0]!, partner, 'client-2gw', fam);
    const dup = JSON.stringify(visit(partner, 'client-2gw', { source_event_id: 'dup-both' }));
    const replies = await Promise.all([
      ...Array.from({ length: 20 }, (_, i) => postEvent(gateways[i % 2]!.urls.pipe!, partner, undefined, { body: dup })),
      ...Array.from({ length: 20 }, (_, i) => postEvent(gateways[i % 2]!.urls.pipe!, partner, visit(partner, 'client-2gw', { source_event_id: `each-${i}` }))),
    ]);
    expect(replies.map((r) => r.status)).toEqual(Array(40).fill(202));
    expect(new Set(replies.slice(0, 20).map((r) => r.json.event_id)).size).toBe(1);

    await drained(worker.bus, worker.config);
    const rows = await careEvents(worker.store.db).find({ lovedOneId: fam.lovedOneId }).toArray();
    expect(rows.map((r) => r.sourceEventId).sort()).toEqual(['dup-both', ...Array.from({ length: 20 }, (_, i) => `each-${i}`)].sort());
  });
});
