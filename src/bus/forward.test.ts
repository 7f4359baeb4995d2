// The gateway's retry rule on a real (in-process) bus: send again only while no worker answered,
// never a request a worker failed, and hand a request that workers never answer to a few at most.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { startNats } from '../../test/harness/servers.js';
import { createLogger } from '../log.js';
import { metrics } from '../metrics/index.js';
import type { HttpRequestEnvelope } from './envelopes.js';
import { HandlerFailure } from './errors.js';
import { forward, RequestRejectedError, UnavailableError, WorkerFailedError } from './forward.js';
import { MemoryBus } from './memory.js';
import { NatsBus } from './nats.js';
import { QUEUE } from './subjects.js';

const envelope: HttpRequestEnvelope = { v: 1, method: 'POST', path: '/x', query: {}, headers: {}, body: { hello: 1 }, clientIp: '127.0.0.1', requestId: 'r1' };
const ok = { status: 200, headers: {}, body: { ok: true } };
const opts = { timeoutMs: 200, retryWindowMs: 5_000, idempotent: true };

describe('forward - retries only while no worker answered', () => {
  let bus: MemoryBus;
  const release: (() => void)[] = [];
  afterEach(async () => {
    for (const r of release.splice(0)) r();
    await bus?.close();
  });

  it('when a worker answers with a failure, then it is not sent to another worker', async () => {
    bus = new MemoryBus();
    let calls = 0;
    for (let i = 0; i < 3; i++)
      bus.serve('s', QUEUE, async () => {
        calls++;
        throw new Error('boom');
      });
    await expect(forward(bus, 's', envelope, opts)).rejects.toBeInstanceOf(WorkerFailedError);
    expect(calls).toBe(1);
  });

  it('when a worker names the cause, then the error says it: dependency down, request at fault, reply too large', async () => {
    bus = new MemoryBus();
    bus.serve('down', QUEUE, async () => {
      throw new HandlerFailure('unavailable', 'database down');
    });
    bus.serve('bad', QUEUE, async () => {
      throw new HandlerFailure('rejected', 'too deep');
    });
    bus.serve('big', QUEUE, async () => ({ ...ok, body: 'x'.repeat(5_000) }), { maxReplyBytes: 1_000 });
    await expect(forward(bus, 'down', envelope, opts)).rejects.toMatchObject({ name: 'UnavailableError', reason: 'dependency', retryAfterSec: 2 });
    await expect(forward(bus, 'bad', envelope, opts)).rejects.toMatchObject({ name: 'RequestRejectedError', status: 400, reason: 'unprocessable' });
    await expect(forward(bus, 'big', envelope, opts)).rejects.toMatchObject({ name: 'RequestRejectedError', status: 413, reason: 'reply_too_large' });
  });

  it('when workers take a request and never answer, then at most maxAttempts of them get it', async () => {
    bus = new MemoryBus();
    let calls = 0;
    for (let i = 0; i < 4; i++)
      bus.serve('stall', QUEUE, () => {
        calls++;
        return new Promise((resolve) => release.push(() => resolve(ok)));
      });
    const started = Date.now();
    const err = await forward(bus, 'stall', envelope, { ...opts, maxAttempts: 2 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UnavailableError);
    expect(err).toMatchObject({ reason: 'no_worker' });
    expect(calls).toBe(2);
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('when a request is not idempotent, then a timeout is not sent again', async () => {
    bus = new MemoryBus();
    let calls = 0;
    bus.serve('stall', QUEUE, () => {
      calls++;
      return new Promise((resolve) => release.push(() => resolve(ok)));
    });
    await expect(forward(bus, 'stall', envelope, { ...opts, idempotent: false })).rejects.toBeInstanceOf(UnavailableError);
    expect(calls).toBe(1);
  });

  it('when no worker is subscribed yet, then it waits within the window, without counting attempts', async () => {
    bus = new MemoryBus();
    const foundNobody = async () => (await metrics.busNoResponders.get()).values.find((v) => v.labels.subject === 'late')?.value ?? 0;
    const before = await foundNobody();
    const answered = forward(bus, 'late', envelope, { ...opts, maxAttempts: 1 });
    // The worker subscribes once the request has found nobody twice, more often than maxAttempts.
    await vi.waitFor(async () => expect(await foundNobody()).toBeGreaterThanOrEqual(before + 2), { timeout: 2_000, interval: 10 });
    bus.serve('late', QUEUE, async () => ok);
    await expect(answered).resolves.toMatchObject({ status: 200 });
  });

  it("when the request cannot be encoded, then it is rejected at once as the request's fault", async () => {
    bus = new MemoryBus();
    let calls = 0;
    bus.serve('s', QUEUE, async () => (calls++, ok));
    let deep: unknown = [];
    for (let i = 0; i < 20_000; i++) deep = [deep];
    await expect(forward(bus, 's', { ...envelope, body: deep }, opts)).rejects.toBeInstanceOf(RequestRejectedError);
    expect(calls).toBe(0);
  });

  it('when the bus itself is down, then its timeouts do not count as workers that never answered: it retries for the whole window', async () => {
    const nats = await startNats({ jetstream: false });
    const down = await NatsBus.connect(nats.url, createLogger('silent'), 'forward-test');
    try {
      await nats.stop();
      const started = Date.now();
      const err = await forward(down, 'nobody', envelope, { timeoutMs: 200, retryWindowMs: 1_200, idempotent: true, maxAttempts: 1 }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(UnavailableError);
      expect(Date.now() - started).toBeGreaterThanOrEqual(1_100);
    } finally {
      await down.close().catch(() => undefined);
    }
  });
});
