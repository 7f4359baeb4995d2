import { MongoClient } from 'mongodb';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { freshDatabaseUrl } from '../../test/harness/servers.js';
import { databaseName } from '../store/mongo.js';
import { Lease } from './lease.js';

let client: MongoClient;
let url: string;
beforeAll(async () => {
  url = freshDatabaseUrl(inject('mongoUrl'));
  client = await new MongoClient(url).connect();
});
afterAll(async () => {
  await client.db(databaseName(url)).dropDatabase();
  await client.close();
});

describe('cron lease - one leader at a time', () => {
  it('when many contenders race, then exactly one leads; it renews; others take over only after expiry', async () => {
    let now = 1_000;
    const db = client.db(databaseName(url));
    const others = await Promise.all(Array.from({ length: 4 }, () => new MongoClient(url).connect()));
    try {
      const contenders = others.map((c, i) => new Lease(c.db(databaseName(url)), 'race', `p${i}`, 60_000, () => now));
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
});
