// One behaviour suite for both limiters: in memory (one process) and on NATS key-value (two
// connections standing for two gateways), plus what only the shared one has to prove.
import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { startNats } from '../../test/harness/servers.js';
import type { KvBucket, KvWriteOptions } from '../bus/kv.js';
import { NatsBus } from '../bus/nats.js';
import { createLogger } from '../log.js';
import { openLimiter } from './index.js';
import { KvLimiter } from './kvLimiter.js';
import { BucketStates, perMinute, type Clock, type Limiter, type TakeResult } from './limiter.js';
import { MemoryLimiter } from './memory.js';

const log = createLogger('silent');
const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

async function natsBus(url = inject('natsUrl')): Promise<NatsBus> {
  const bus = await NatsBus.connect(url, log, 'limiter-test');
  cleanup.push(() => bus.close());
  return bus;
}

const namespace = () => `limits${randomBytes(5).toString('hex')}`;

/** Two limiters sharing their buckets, as two gateway processes do. */
type Pair = (clock?: Clock) => Promise<[Limiter, Limiter]>;

const impls: [string, Pair][] = [
  [
    'memory',
    async (clock) => {
      const one = new MemoryLimiter(clock); // a single process: both callers share it
      return [one, one];
    },
  ],
  [
    'nats',
    async (clock) => {
      const ns = namespace();
      return [openLimiter(await natsBus(), ns, log, clock), openLimiter(await natsBus(), ns, log, clock)];
    },
  ],
];

const admitted = (takes: TakeResult[]) => takes.filter((t) => t.allowed).length;

describe.each(impls)('rate limiter (%s)', (_name, pair) => {
  it('admits the capacity, then refuses with a retry delay, then refills with time', async () => {
    let now = 1_000_000;
    const [limiter] = await pair(() => now);
    const policy = { capacity: 3, refillMs: 10_000 };
    const results = [];
    for (let i = 0; i < 4; i++) results.push(await limiter.take('k1', policy));
    expect(results).toEqual([
      { allowed: true, remaining: 2, retryAfterSec: 0 },
      { allowed: true, remaining: 1, retryAfterSec: 0 },
      { allowed: true, remaining: 0, retryAfterSec: 0 },
      { allowed: false, remaining: 0, retryAfterSec: 10 },
    ]);
    now += 10_000;
    expect((await limiter.take('k1', policy)).allowed).toBe(true);
    expect((await limiter.take('k1', policy)).allowed).toBe(false);
  });

  it('counts refills and retry delays from the epoch-aligned token times, rounding waits up', async () => {
    let now = 3_000_250; // token 2000 was minted at 3_000_000; 2001 comes at 3_001_500
    const [limiter] = await pair(() => now);
    const policy = { capacity: 4, refillMs: 1_500 };
    expect((await limiter.take('r', policy, 4)).remaining).toBe(0);
    expect(await limiter.take('r', policy)).toEqual({ allowed: false, remaining: 0, retryAfterSec: 2 }); // 1.25 s
    now += 1_250;
    expect(await limiter.take('r', policy)).toEqual({ allowed: true, remaining: 0, retryAfterSec: 0 });
    expect(await limiter.take('r', policy, 3)).toEqual({ allowed: false, remaining: 0, retryAfterSec: 5 }); // the third is minted 4.5 s on
    now += 3_000;
    expect(await limiter.take('r', policy)).toEqual({ allowed: true, remaining: 1, retryAfterSec: 0 });
    now += 3_600_000; // idle: full again, never fuller than the capacity
    expect(await limiter.take('r', policy, 5)).toMatchObject({ allowed: false });
    expect(await limiter.take('r', policy, 4)).toEqual({ allowed: true, remaining: 0, retryAfterSec: 0 });
  });

  it('a cost spends that many tokens at once, or none, with the wait until enough are back', async () => {
    let now = 2_000_000;
    const [limiter] = await pair(() => now);
    const policy = { capacity: 10, refillMs: 1_000 };
    expect(await limiter.take('batch', policy, 8)).toMatchObject({ allowed: true, remaining: 2 });
    // 2 free, 5 wanted: refused whole, and nothing spent.
    expect(await limiter.take('batch', policy, 5)).toEqual({ allowed: false, remaining: 0, retryAfterSec: 3 });
    expect((await limiter.take('batch', policy, 2)).allowed).toBe(true);
    expect((await limiter.take('batch', policy)).allowed).toBe(false);
    now += 3_000;
    expect((await limiter.take('batch', policy, 3)).allowed).toBe(true);
    expect((await limiter.take('batch', policy, 11)).allowed).toBe(false);
    await expect(limiter.take('batch', policy, 0)).rejects.toThrow(RangeError);
    await expect(limiter.take('batch', policy, 1.5)).rejects.toThrow(RangeError);
  });

  it('keys are independent', async () => {
    const [limiter] = await pair(() => 5_000_000);
    const policy = { capacity: 1, refillMs: 60_000 };
    expect((await limiter.take('ip:1', policy)).allowed).toBe(true);
    expect((await limiter.take('ip:2', policy)).allowed).toBe(true);
    expect((await limiter.take('ip:1', policy)).allowed).toBe(false);
  });

  it('a burst far above any retry bound is admitted up to the capacity, in one process', async () => {
    const [limiter] = await pair();
    const takes = await Promise.all(Array.from({ length: 80 }, () => limiter.take('hot', perMinute(1000))));
    expect(takes.filter((t) => !t.allowed)).toEqual([]);
  });

  it('takers in two processes never spend the same token: 30 over two admit exactly 10', async () => {
    const [a, b] = await pair(() => 7_000_000);
    const takes = await Promise.all(Array.from({ length: 30 }, (_, i) => (i % 2 ? a : b).take('shared', perMinute(10))));
    expect(admitted(takes)).toBe(10);
  });

  it('75 concurrent takes over two processes admit exactly 60, and every refusal says when to retry', async () => {
    const [a, b] = await pair(() => 8_000_000);
    const takes = await Promise.all(Array.from({ length: 75 }, (_, i) => (i % 2 ? a : b).take('burst', perMinute(60))));
    expect(admitted(takes)).toBe(60);
    for (const t of takes.filter((x) => !x.allowed)) expect(t.retryAfterSec).toBeGreaterThanOrEqual(1);
  });

  it('concurrent batches and single takes over two processes admit at most the capacity, and refuse only what no longer fits', async () => {
    const [a, b] = await pair(() => 9_000_000);
    const costs = [5, 1, 4, 1, 5, 3, 1, 5, 2, 4, 1, 5];
    const takes = await Promise.all(costs.map((cost, i) => (i % 2 ? a : b).take('mixed', perMinute(20), cost)));
    const spent = takes.reduce((sum, r, i) => sum + (r.allowed ? costs[i]! : 0), 0);
    expect(spent).toBeLessThanOrEqual(20);
    // Tokens only ran out during the run, so every refused cost exceeds what is left at the end.
    for (const [i, t] of takes.entries()) if (!t.allowed) expect(costs[i]!).toBeGreaterThan(20 - spent);
  });
});

describe('rate limiter state in memory', () => {
  it('forgets buckets once they are full again, so idle keys cost nothing', () => {
    const states = new BucketStates<{ fullAt: number }>();
    for (let i = 0; i < 3000; i++) states.set(`k${i}`, { fullAt: 1_000 + i }, 0);
    expect(states.size).toBe(3000);
    for (let i = 0; i < 5000; i++) states.set(`later${i}`, { fullAt: 1_000_000 }, 500_000);
    expect(states.size).toBe(5000); // the 3000 full ones were swept on the way
  });
});

/** A real bucket that counts its round trips and records the TTLs written. */
function counting(open: () => Promise<KvBucket>) {
  const calls = { get: 0, write: 0, ttls: [] as number[] };
  const wrapped = async (): Promise<KvBucket> => {
    const bucket = await open();
    return {
      expires: bucket.expires,
      get: (key) => (calls.get++, bucket.get(key)),
      write: (key, value, options: KvWriteOptions) => (calls.write++, calls.ttls.push(options.ttlMs), bucket.write(key, value, options)),
    };
  };
  return { calls, wrapped };
}

describe('rate limiter on NATS key-value', () => {
  async function counted(clock: Clock) {
    const name = `test_rate_${randomBytes(5).toString('hex')}`;
    const bus = await natsBus();
    const c = counting(() => bus.kv.bucket({ name }));
    return { ...c, limiter: new KvLimiter(c.wrapped, clock), other: new KvLimiter(async () => (await natsBus()).kv.bucket({ name }), clock) };
  }

  it('costs one round trip per uncontended take, and one read for a refusal', async () => {
    let now = 1_000_000;
    const { calls, limiter } = await counted(() => now);
    const policy = { capacity: 5, refillMs: 10_000 };
    for (let i = 0; i < 5; i++) expect((await limiter.take('solo', policy)).allowed).toBe(true);
    expect(calls).toMatchObject({ get: 0, write: 5 });
    expect(await limiter.take('solo', policy)).toEqual({ allowed: false, remaining: 0, retryAfterSec: 10 });
    expect(calls).toMatchObject({ get: 1, write: 5 });
    now += 10_000;
    expect((await limiter.take('solo', policy)).allowed).toBe(true);
    expect(calls).toMatchObject({ get: 1, write: 6 });
  });

  it('decides on the current state when another process took meanwhile, retry delay included', async () => {
    const now = 1_000_000;
    const { calls, limiter, other } = await counted(() => now);
    const policy = { capacity: 3, refillMs: 10_000 };
    expect((await limiter.take('k', policy)).allowed).toBe(true);
    expect(admitted(await Promise.all([other.take('k', policy), other.take('k', policy)]))).toBe(2);
    // What this process remembers says two are free; the write finds the key moved on and reads it.
    expect(await limiter.take('k', policy)).toEqual({ allowed: false, remaining: 0, retryAfterSec: 10 });
    expect(calls).toMatchObject({ get: 1, write: 2 });
  });

  it('writes each state with a TTL that outlasts the time to refill the bucket', async () => {
    const now = 1_000_000;
    const { calls, limiter } = await counted(() => now);
    await limiter.take('t', { capacity: 3, refillMs: 10_000 }); // token 98 of 98..100: full again at 1_010_000
    const [ttl] = calls.ttls;
    expect(ttl).toBeGreaterThanOrEqual(10_000);
    expect(ttl).toBeLessThanOrEqual(20_000);
  });

  it('without JetStream on the server, takes fail with a hint instead of admitting unchecked', async () => {
    const server = await startNats({ jetstream: false });
    cleanup.push(() => server.stop());
    const limiter = openLimiter(await natsBus(server.url), namespace(), log);
    await expect(limiter.take('k', perMinute(10))).rejects.toThrow(/JetStream/);
  });
});
