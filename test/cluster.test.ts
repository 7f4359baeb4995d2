// Scaling out: worker processes in one queue group over real NATS, as operators run them.
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, inject, it, vi } from 'vitest';
import { startRole, type RoleProcess } from './harness/processes.js';
import { freshDatabaseUrl } from './harness/servers.js';
import { postJson, rpc, startTestService, type TestService } from './harness/service.js';

const handled = (p: RoleProcess) => p.lines.filter((l) => l.includes('"msg":"handled"')).length;

/** Log lines cross a pipe after the reply crossed the socket: wait for them, with a bound. */
const eventually = (check: () => boolean, what: string, timeoutMs = 5_000) =>
  vi.waitFor(() => expect(check(), `never happened: ${what}`).toBe(true), { timeout: timeoutMs, interval: 20 });

describe('cluster - worker processes in a queue group', () => {
  const cleanup: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const c of cleanup.splice(0).reverse()) await c();
  });

  it('when two workers serve and one is killed, then the other carries on with no failed request', async () => {
    const mongoUrl = freshDatabaseUrl(inject('mongoUrl'));
    const env = { NATS_URL: inject('natsUrl'), MONGO_URL: mongoUrl, BUS_NAMESPACE: `cluster${process.pid}`, BUS_TIMEOUT_MS: '1000' };
    const workers = [startRole('worker', env), startRole('worker', env)];
    for (const w of workers) cleanup.push(() => w.kill('SIGKILL'));
    await Promise.all(workers.map((w) => w.waitFor(/workers serving/)));
    const gateway: TestService = await startTestService({
      nats: true,
      role: 'gateway',
      mongoUrl,
      env: { ...env, GATEWAY_RETRY_WINDOW_MS: '8000', RATE_DIRECTORY_MCP_PER_MIN: '100000' },
    });
    cleanup.push(() => gateway.stop());
    const url = `${gateway.urls.site}/api/mcp`;
    const search = () => postJson(url, rpc('tools/call', { name: 'search_care_resources', arguments: { query: 'respite care', limit: 2 } }));

    // Warm-up: both members of the queue group take work.
    const warm = await Promise.all(Array.from({ length: 40 }, search));
    expect(warm.map((r) => (r.status === 200 ? 'ok' : `${r.status} ${r.text}`))).toEqual(Array(40).fill('ok'));
    await eventually(() => handled(workers[0]!) > 0 && handled(workers[1]!) > 0, 'both workers served warm-up requests');

    // A steady stream of requests while worker 0 dies without warning.
    const results: Promise<Awaited<ReturnType<typeof search>>>[] = [];
    for (let i = 0; i < 60; i++) {
      results.push(search());
      if (i === 20) await workers[0]!.kill('SIGKILL');
      await sleep(5);
    }
    const settled = await Promise.all(results);
    expect(settled.map((r) => r.status).filter((s) => s !== 200)).toEqual([]);
    expect(settled.every((r) => Array.isArray(JSON.parse(r.json.result.content[0].text).results))).toBe(true);
    await eventually(() => handled(workers[1]!) >= 60 - 21, 'the survivor served the requests after the kill');
  });

  it('when a worker gets SIGTERM under load, then it finishes its work, exits 0, and no request fails', async () => {
    const mongoUrl = freshDatabaseUrl(inject('mongoUrl'));
    const env = { NATS_URL: inject('natsUrl'), MONGO_URL: mongoUrl, BUS_NAMESPACE: `drain${process.pid}` };
    const workers = [startRole('worker', env), startRole('worker', env)];
    for (const w of workers) cleanup.push(() => w.kill('SIGKILL'));
    await Promise.all(workers.map((w) => w.waitFor(/workers serving/)));
    const gateway = await startTestService({ nats: true, role: 'gateway', mongoUrl, env: { ...env, RATE_DIRECTORY_MCP_PER_MIN: '100000' } });
    cleanup.push(() => gateway.stop());
    const search = () => postJson(`${gateway.urls.site}/api/mcp`, rpc('tools/call', { name: 'search_care_resources', arguments: { query: 'hospice' } }));
    const results: ReturnType<typeof search>[] = [];
    let code: Promise<number | null> | undefined;
    for (let i = 0; i < 40; i++) {
      results.push(search());
      if (i === 10) code = workers[0]!.kill('SIGTERM');
      await sleep(5);
    }
    expect((await Promise.all(results)).map((r) => r.status).filter((s) => s !== 200)).toEqual([]);
    expect(await code).toBe(0);
    expect(workers[0]!.lines.some((l) => l.includes('"msg":"stopped"'))).toBe(true);
  });
});
