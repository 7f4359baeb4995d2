import { describe, expect, it } from 'vitest';
import { useTestDatabase } from '../../test/harness/database.js';
import { perMinute, RateLimiter } from './rateLimit.js';

const t = useTestDatabase();

describe('rate limiter - token bucket in MongoDB', () => {
  it('admits the capacity, then refuses with a retry delay, then refills with time', async () => {
    let now = 1_000_000;
    const limiter = new RateLimiter(t.db, () => now);
    const policy = { capacity: 3, refillMs: 10_000 };
    const results = [];
    for (let i = 0; i < 4; i++) results.push(await limiter.take('k1', policy));
    expect(results.map((r) => r.allowed)).toEqual([true, true, true, false]);
    expect(results[3]?.retryAfterSec).toBe(10);
    now += 10_000;
    expect((await limiter.take('k1', policy)).allowed).toBe(true);
    expect((await limiter.take('k1', policy)).allowed).toBe(false);
  });

  it('concurrent takers from separate connections never spend the same token', async () => {
    const other = await t.connect();
    try {
      const a = new RateLimiter(t.db);
      const b = new RateLimiter(other.db);
      const policy = perMinute(10);
      const takes = await Promise.all(Array.from({ length: 30 }, (_, i) => (i % 2 ? a : b).take('shared', policy)));
      expect(takes.filter((t) => t.allowed)).toHaveLength(10);
    } finally {
      await other.close();
    }
  });

  it('a burst far above the attempt limit is still admitted up to the capacity', async () => {
    const limiter = new RateLimiter(t.db);
    const takes = await Promise.all(Array.from({ length: 80 }, () => limiter.take('hot', perMinute(1000))));
    expect(takes.filter((t) => !t.allowed)).toEqual([]);
  });

  it('a cost spends that many tokens at once, or none, with the wait until enough are back', async () => {
    let now = 2_000_000;
    const limiter = new RateLimiter(t.db, () => now);
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
  });

  it('concurrent batches and single takers from separate connections never admit more than the capacity', async () => {
    const other = await t.connect();
    try {
      // A fixed clock: no token is minted while they race.
      const a = new RateLimiter(t.db, () => 3_000_000);
      const b = new RateLimiter(other.db, () => 3_000_000);
      const policy = perMinute(20);
      const costs = [5, 1, 4, 1, 5, 3, 1, 5, 2, 4, 1, 5];
      const takes = await Promise.all(costs.map((cost, i) => (i % 2 ? a : b).take('mixed', policy, cost)));
      const admitted = takes.reduce((sum, r, i) => sum + (r.allowed ? costs[i]! : 0), 0);
      expect(admitted).toBeLessThanOrEqual(20);
      expect(admitted).toBeGreaterThanOrEqual(10);
    } finally {
      await other.close();
    }
  });

  it('keys are independent, and sweep removes tokens that left their window', async () => {
    let now = 5_000_000;
    const limiter = new RateLimiter(t.db, () => now);
    const policy = { capacity: 1, refillMs: 60_000 };
    await limiter.sweep(); // earlier tests' tokens, minted at earlier fake times
    expect((await limiter.take('ip:1', policy)).allowed).toBe(true);
    expect((await limiter.take('ip:2', policy)).allowed).toBe(true);
    expect((await limiter.take('ip:1', policy)).allowed).toBe(false);
    expect(await limiter.sweep()).toBe(0);
    now += 3 * 60_000;
    expect(await limiter.sweep()).toBe(2);
    expect((await limiter.take('ip:1', policy)).allowed).toBe(true);
  });
});
