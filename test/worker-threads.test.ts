// The embedded run's worker threads (DIRECTORY_THREADS): the public directory answered on a thread
// of its own, a thread that stops replaced while every request it had is still answered, and a
// stop that lets the requests in hand finish. The answers themselves are held to the main thread's
// by test/lean-path.test.ts.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { directoryThreadCount } from '../src/worker/threads.js';
import { postJson, rpc, startTestService, testConfig, type TestService } from './harness/service.js';

const search = (query: string, id: number) => rpc('tools/call', { name: 'search_care_resources', arguments: { query, limit: 3 } }, id);

/** One metric's value from the service's /metrics (0 when absent). */
async function metric(svc: TestService, name: string): Promise<number> {
  const text = await (await fetch(svc.urls.metrics!)).text();
  return Number(new RegExp(`^${name} (\\d+)`, 'm').exec(text)?.[1] ?? 0);
}

describe('worker threads of the embedded run', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService({ env: { DIRECTORY_THREADS: '1' } });
  });
  afterAll(async () => svc?.stop());

  it('when DIRECTORY_THREADS is auto, then there is one thread where a second core can run it; 0 keeps the directory on the main thread', async () => {
    expect(directoryThreadCount(testConfig({ DIRECTORY_THREADS: '3' }))).toBe(3);
    expect(directoryThreadCount(testConfig({ DIRECTORY_THREADS: '0' }))).toBe(0);
    expect([0, 1]).toContain(directoryThreadCount(testConfig({})));
    expect(() => testConfig({ DIRECTORY_THREADS: 'many' })).toThrow(/DIRECTORY_THREADS/);
    const none = await startTestService({ env: { DIRECTORY_THREADS: '0' } });
    try {
      expect(none.workerThreads).toBeUndefined();
      expect((await postJson(`${none.urls.site}/api/mcp`, search('hospice', 1))).status).toBe(200);
    } finally {
      await none.stop();
    }
  });

  it('when the directory is asked, then its thread answers and /metrics counts the thread', async () => {
    expect(svc.workerThreads?.serving()).toBe(1);
    const res = await postJson(`${svc.urls.site}/api/mcp`, search('alzheimers helpline', 7), { 'mcp-protocol-version': '2025-06-18' });
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ id: 7, result: { structuredContent: { query: 'alzheimers helpline', results: expect.any(Array) } } });
    expect(await metric(svc, 'carecircle_worker_threads')).toBe(1);
  });

  it('when the thread stops in the middle of requests, then each is answered 200 or 503 with Retry-After, a new thread takes over, and the restart is counted', async () => {
    const restartsBefore = await metric(svc, 'carecircle_worker_thread_restarts_total');
    const inFlight = Array.from({ length: 40 }, (_, i) => postJson(`${svc.urls.site}/api/mcp`, search(`caregiver support ${i}`, i + 1)));
    // Once one is answered the rest are on their way: stop the thread with them in hand.
    await Promise.race(inFlight);
    await svc.workerThreads!.crashOne();
    const answers = await Promise.all(inFlight);
    for (const a of answers) {
      expect([200, 503]).toContain(a.status);
      if (a.status === 503) {
        expect(a.headers.get('retry-after')).toMatch(/^\d+$/);
        expect(a.json).toMatchObject({ error: { code: -32030 } });
      }
    }
    // The replacement joins after a short wait; until then requests are 503, never lost.
    await vi.waitFor(async () => expect((await postJson(`${svc.urls.site}/api/mcp`, search('respite', 1))).status).toBe(200), {
      timeout: 10_000,
      interval: 50,
    });
    expect(svc.workerThreads!.serving()).toBe(1);
    expect(await metric(svc, 'carecircle_worker_thread_restarts_total')).toBe(restartsBefore + 1);
    expect(await metric(svc, 'carecircle_worker_threads')).toBe(1);
  });

  it('when the service stops with requests in hand, then each is answered before the thread ends', async () => {
    const other = await startTestService({ env: { DIRECTORY_THREADS: '1' } });
    const inFlight = Array.from({ length: 30 }, (_, i) =>
      postJson(`${other.urls.site}/api/mcp`, search(`meals on wheels ${i}`, i + 1)).then(
        (r) => r.status,
        () => 'no connection',
      ),
    );
    // Once one is answered the rest are on their way: stop with them in hand.
    await Promise.race(inFlight);
    await other.stop();
    const statuses = await Promise.all(inFlight);
    // A request the listener took is answered; one that came after it closed gets no connection.
    expect(statuses.filter((s) => s !== 200 && s !== 'no connection')).toEqual([]);
    expect(statuses).toContain(200);
    expect(other.workerThreads!.serving()).toBe(0);
  });
});
