import { describe, expect, it } from 'vitest';
import { useTestDatabase } from '../../test/harness/database.js';
import { Lease } from './lease.js';

const t = useTestDatabase();

describe('cron lease - one leader at a time', () => {
  it('when many contenders race, then exactly one leads; it renews; others take over only after expiry', async () => {
    let now = 1_000;
    const db = t.db;
    const others = await Promise.all(Array.from({ length: 4 }, () => t.connect()));
    try {
      const contenders = others.map((c, i) => new Lease(c.db, 'race', `p${i}`, 60_000, () => now));
      const won = await Promise.all(contenders.map((l) => l.acquire()));
      expect(won.filter(Boolean)).toHaveLength(1);
      const leader = contenders[won.indexOf(true)]!;
      const follower = contenders[(won.indexOf(true) + 1) % contenders.length]!;
      now += 30_000;
      expect(await leader.acquire()).toBe(true);
      expect(await follower.acquire()).toBe(false);
      now += 61_000;
      expect(await follower.acquire()).toBe(true);
      expect(await leader.acquire()).toBe(false);
      await follower.release();
      expect(await new Lease(db, 'race', 'late', 60_000, () => now).acquire()).toBe(true);
    } finally {
      await Promise.all(others.map((c) => c.close()));
    }
  });

  it('when jobs of one holder ask at the same moment, then every one of them leads', async () => {
    const lease = new Lease(t.db, 'together', 'p1', 60_000);
    expect(await Promise.all([lease.acquire(), lease.acquire(), lease.acquire()])).toEqual([true, true, true]);
    expect(await Promise.all([lease.acquire(), lease.acquire()])).toEqual([true, true]);
  });
});
