// The MCP audit log off the reply path: exactly one row per authenticated, parsed request, none
// lost: in one process through the shutdown, and over NATS through a worker killed with SIGKILL.
import { MongoClient } from 'mongodb';
import { afterEach, describe, expect, inject, it, vi } from 'vitest';
import { databaseName } from '../src/store/mongo.js';
import { auditStream, AuditLog, type AuditRow } from '../src/workspace/audit.js';
import { caregiverWithKey } from './harness/identity.js';
import { startRole, type RoleProcess } from './harness/processes.js';
import { freshDatabaseUrl } from './harness/servers.js';
import { postJson, rpc, startTestService, surfaceEnv, type TestService } from './harness/service.js';
import { openTimelines } from '../src/store/timeline/timelines.js';

const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

async function auditRows(mongoUrl: string): Promise<number> {
  const mongo = await new MongoClient(mongoUrl).connect();
  try {
    return await mongo.db(databaseName(mongoUrl)).collection('mcp_audit_log').countDocuments();
  } finally {
    await mongo.close();
  }
}

/** `n` workspace requests one after another, each answered 200. */
async function calls(svc: TestService, apiKey: string, n: number): Promise<void> {
  for (let i = 0; i < n; i++) {
    const res = await postJson(`${svc.urls.app}/api/mcp`, rpc('tools/call', { name: 'ping', arguments: {} }, i), { authorization: `Bearer ${apiKey}` });
    expect(res.status).toBe(200);
  }
}

describe('audit rows off the reply path', () => {
  it('when a batch is inserted again (a redelivery), then each row is stored once and nothing fails', async () => {
    const mongoUrl = freshDatabaseUrl(inject('mongoUrl'));
    const mongo = await new MongoClient(mongoUrl).connect();
    cleanup.push(() => mongo.close());
    const log = new AuditLog(await openTimelines(mongo.db(databaseName(mongoUrl))));
    const row = (i: number): AuditRow => ({
      _id: `aud_redelivered_${i}`,
      uid: 'u1',
      tenant: 'family',
      method: 'tools/call',
      tool: 'ping',
      success: true,
      durationMs: 1,
      authMethod: 'api-key',
      at: new Date(),
    });
    await log.insert([row(1), row(2)]);
    await log.insert([row(1), row(2), row(3)]);
    expect((await log.recent('u1', 10)).map((r) => r._id).sort()).toEqual(['aud_redelivered_1', 'aud_redelivered_2', 'aud_redelivered_3']);
  });

  it('when one process serves N requests and stops at once, then exactly N rows are stored', async () => {
    const svc = await startTestService({ env: { RATE_MCP_KEY_PER_MIN: '100000' } });
    let stopped = false;
    cleanup.push(() => (stopped ? Promise.resolve() : svc.stop()));
    const { apiKey } = await caregiverWithKey(svc, 'audit-embedded@example.com');
    await calls(svc, apiKey, 30);
    // The last rows may still wait for their batch: the shutdown writes them.
    await svc.stop();
    stopped = true;
    expect(await auditRows(svc.mongoUrl)).toBe(30);
  });

  it('when a worker is killed with SIGKILL between requests over NATS, then the other worker stores every row: exactly N', async () => {
    const mongoUrl = freshDatabaseUrl(inject('mongoUrl'));
    const surfaces = await surfaceEnv();
    const publicUrls = Object.fromEntries(Object.entries(surfaces).filter(([k]) => k.endsWith('_URL')));
    const env = { NATS_URL: inject('natsUrl'), MONGO_URL: mongoUrl, BUS_NAMESPACE: `audit${process.pid}`, RATE_MCP_KEY_PER_MIN: '100000', ...publicUrls };
    const workers: RoleProcess[] = [startRole('worker', env), startRole('worker', env)];
    for (const w of workers) cleanup.push(() => w.kill('SIGKILL'));
    await Promise.all(workers.map((w) => w.waitFor(/workers serving/)));
    const gateway = await startTestService({ nats: true, role: 'gateway', mongoUrl, env: { ...env, ...surfaces } });
    cleanup.push(() => gateway.stop());
    const { apiKey } = await caregiverWithKey(gateway, 'audit-nats@example.com');

    await calls(gateway, apiKey, 40);
    // Rows published by the killed worker and not yet inserted are delivered to the other one.
    await workers[0]!.kill('SIGKILL');
    await calls(gateway, apiKey, 20);
    await expect.poll(() => auditRows(mongoUrl), { timeout: 30_000, interval: 250 }).toBe(60);
    // And no more than that: once the stream has nothing left to deliver (a row the killed worker
    // held comes back after the ack wait), a redelivered row is stored once.
    const stream = auditStream(env.BUS_NAMESPACE);
    await vi.waitFor(
      async () => expect(await gateway.bus.durable!.consumerState(stream.stream.name, stream.consumer.durable)).toEqual({ pending: 0, ackPending: 0 }),
      { timeout: 30_000, interval: 250 },
    );
    expect(await auditRows(mongoUrl)).toBe(60);
  }, 120_000);
});
