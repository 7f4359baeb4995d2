// A request can fail, but it cannot take the worker pool down: replies larger than NATS carries
// are refused by name, and the gateway does not walk a failed request through the pool.
import { afterEach, describe, expect, inject, it, vi } from 'vitest';
import { RPC } from '../src/rpc/codes.js';
import { startRole, type RoleProcess } from './harness/processes.js';
import { freshDatabaseUrl } from './harness/servers.js';
import { postJson, rpc, startTestService } from './harness/service.js';

const refusalsIn = (workers: RoleProcess[]) => workers.flatMap((w) => w.lines.filter((l) => l.includes('reply too large')));

/** Log lines cross a pipe after the reply crossed the socket: wait for them, with a bound. */
const eventually = (check: () => boolean, what: string, timeoutMs = 5_000) =>
  vi.waitFor(() => expect(check(), `never happened: ${what}`).toBe(true), { timeout: timeoutMs, interval: 20 });

describe('workers survive what a request makes them do', () => {
  const cleanup: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const c of cleanup.splice(0).reverse()) await c();
  });

  it('when a batch of 100 searches makes a reply larger than NATS max_payload, then it gets a named 413 and both workers keep serving', async () => {
    const mongoUrl = freshDatabaseUrl(inject('mongoUrl'));
    const env = { NATS_URL: inject('natsUrl'), MONGO_URL: mongoUrl, BUS_NAMESPACE: `payload${process.pid}`, BUS_TIMEOUT_MS: '2000' };
    const workers = [startRole('worker', env), startRole('worker', env)];
    for (const w of workers) cleanup.push(() => w.kill('SIGKILL'));
    await Promise.all(workers.map((w) => w.waitFor(/workers serving/)));
    const gateway = await startTestService({
      nats: true,
      role: 'gateway',
      mongoUrl,
      env: { ...env, GATEWAY_RETRY_WINDOW_MS: '6000', MCP_MAX_BATCH: '100', RATE_DIRECTORY_MCP_PER_MIN: '100000' },
    });
    cleanup.push(() => gateway.stop());
    const url = `${gateway.urls.site}/api/mcp`;

    const batch = Array.from({ length: 100 }, (_, i) =>
      rpc('tools/call', { name: 'search_care_resources', arguments: { query: `care ${i}`, limit: 25 } }, i + 1),
    );
    const res = await postJson(url, batch, { 'mcp-protocol-version': '2025-03-26' });
    expect(res.status).toBe(413);
    expect(res.json.error.code).toBe(RPC.INVALID_REQUEST);
    expect(res.json.error.message).toMatch(/reply too large/i);
    expect(res.json.error.data.hint).toMatch(/fewer items per batch or a smaller limit/);

    // The refusal is deterministic: one worker saw the request once, and nobody died.
    await eventually(() => refusalsIn(workers).length > 0, 'a worker logged the refusal');
    expect(workers.map((w) => w.child.exitCode)).toEqual([null, null]);
    const after = await Promise.all(
      Array.from({ length: 20 }, (_, i) => postJson(url, rpc('tools/call', { name: 'search_care_resources', arguments: { query: 'respite', limit: 2 } }, i))),
    );
    expect(after.map((r) => r.status)).toEqual(Array(20).fill(200));
    expect(workers.map((w) => w.child.exitCode)).toEqual([null, null]);
    expect(refusalsIn(workers)).toHaveLength(1);
  });
});
