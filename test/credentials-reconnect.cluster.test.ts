// A worker cut off from NATS for a few seconds misses what is revoked meanwhile (core NATS does not
// replay it, and the revoker stops waiting for a silent process after 3 s): once back, it forgets
// what it kept, so the very next request with a revoked key, or from an integration deactivated
// meanwhile, is refused. One worker, behind a link the test cuts, and a gateway on NATS directly.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { NatsBus } from '../src/bus/nats.js';
import { API_KEYS, KeyStore, type ApiKeyRecord } from '../src/keys/keys.js';
import { createLogger } from '../src/log.js';
import { caregiverWithKey } from './harness/identity.js';
import { startNatsLink, type NatsLink } from './harness/natsLink.js';
import { startRole, type RoleProcess } from './harness/processes.js';
import { freshDatabaseUrl } from './harness/servers.js';
import { startTestService, surfaceEnv, type TestService } from './harness/service.js';
import { family, onboard, partnerStore, postEvent, shareWith, TEST_DATA_KEY, visit } from './ingest.fixtures.js';

const namespace = `rc${randomBytes(3).toString('hex')}`;
let link: NatsLink;
let worker: RoleProcess;
let gateway: TestService;
let watcher: NatsBus;
/** The worker's id on the member list, and how many of its heartbeats were heard. */
let workerId: string | undefined;
let workerHeartbeats = 0;

beforeAll(async () => {
  const natsUrl = inject('natsUrl');
  const mongoUrl = freshDatabaseUrl(inject('mongoUrl'));
  const surfaces = await surfaceEnv();
  const publicUrls = Object.fromEntries(Object.entries(surfaces).filter(([k]) => k.endsWith('_URL')));
  const env = {
    MONGO_URL: mongoUrl,
    BUS_NAMESPACE: namespace,
    DATA_KEY: TEST_DATA_KEY,
    RATE_MCP_KEY_PER_MIN: '100000',
    RATE_INGEST_PER_MIN: '100000',
    ...publicUrls,
  };
  // Listening before anything starts: the first process heard on the member list is the worker.
  watcher = await NatsBus.connect(natsUrl, createLogger('silent'), 'reconnect-test');
  watcher.subscribe(`${namespace}.cc.creds.members`, (msg) => {
    const { member } = msg.data as { member: string };
    workerId ??= member;
    if (member === workerId) workerHeartbeats++;
  });
  await watcher.flush();
  link = await startNatsLink(natsUrl);
  worker = startRole('worker', { ...env, NATS_URL: link.url });
  await Promise.all([worker.waitFor(/workers serving/), worker.waitFor(/ingest consumer started/)]);
  gateway = await startTestService({ nats: true, role: 'gateway', mongoUrl, env: { ...env, ...surfaces, NATS_URL: natsUrl } });
}, 60_000);

afterAll(async () => {
  await gateway?.stop();
  await worker?.kill('SIGKILL');
  await link?.close();
  await watcher?.close();
});

const until = (check: () => boolean) => vi.waitFor(() => expect(check(), 'the worker never got there').toBe(true), { timeout: 30_000, interval: 20 });

const logged = (msg: string) => worker.lines.filter((l) => l.includes(`"msg":"${msg}"`)).length;

/**
 * Cuts the worker off from NATS (at its next heartbeat), runs `meanwhile` through the gateway, and
 * lets the worker back. Resolves once the worker is heard on the member list again: it has then
 * heard its own heartbeat too, before anything the test sends next, so the heartbeat rule alone
 * would trust what it kept again.
 */
async function cutOff(meanwhile: () => Promise<void>): Promise<void> {
  const disconnects = logged('nats disconnect');
  link.cutOn(new RegExp(`PUB ${namespace}\\.cc\\.creds\\.members`));
  await link.cut();
  await until(() => logged('nats disconnect') > disconnects);
  await meanwhile();
  // The change returned without the worker: it waited for it, then counted it as silent.
  expect(gateway.credentials.lastReach).toEqual({ acknowledged: 0, silent: 1 });
  const heard = workerHeartbeats;
  link.restore();
  await until(() => workerHeartbeats > heard);
}

const ping = (apiKey: string) =>
  fetch(`${gateway.urls.app}/api/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${apiKey}` },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'ping', arguments: {} } }),
  }).then(async (res) => (await res.arrayBuffer(), res.status));

describe('credentials - a worker back on NATS after missing a revocation', { timeout: 120_000 }, () => {
  it('when a key the worker keeps is revoked while it is cut off from NATS, then the first request with the key once it is back is refused', async () => {
    const { apiKey, keyId } = await caregiverWithKey(gateway, 'cut-off@example.com');
    // Served twice by the one worker: the key is in its memory.
    expect([await ping(apiKey), await ping(apiKey)]).toEqual([200, 200]);
    await cutOff(async () => {
      const { uid } = (await gateway.store.db.collection<ApiKeyRecord>(API_KEYS).findOne({ _id: keyId }))!;
      await new KeyStore(gateway.store.db, gateway.credentials).revoke(uid, keyId);
    });
    expect(await ping(apiKey)).toBe(403);
  });

  it('when an integration the worker keeps is deactivated while it is cut off from NATS, then the first event once it is back gets 403', async () => {
    const partner = await onboard(gateway.store.db, gateway.credentials);
    await shareWith(gateway, partner, 'client-cut', await family(gateway.store.db, gateway.credentials, gateway.config));
    let n = 0;
    const send = async () => (await postEvent(gateway.urls.pipe!, partner, visit(partner, 'client-cut', { source_event_id: `cut-${n++}` }))).status;
    expect([await send(), await send()]).toEqual([202, 202]);
    await cutOff(() => partnerStore(gateway.store.db, gateway.credentials).deactivate(partner.institutionId));
    expect(await send()).toBe(403);
  });
});
