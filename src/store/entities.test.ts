import { MongoClient } from 'mongodb';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { API_KEY_MACHINE } from '../../machines/apiKey.js';
import { freshDatabaseUrl } from '../../test/harness/servers.js';
import { EntityConflict, EntityNotFound, EntityStore, TransitionRefused } from './entities.js';
import { databaseName } from './mongo.js';

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

describe('entity store - XState snapshots in MongoDB', () => {
  it('when created and sent an event, then the stored snapshot follows; refused events are named', async () => {
    const store = new EntityStore(client.db(databaseName(url)));
    await store.create(API_KEY_MACHINE, 'k1', { keyId: 'k1', uid: 'u1' });
    await expect(store.create(API_KEY_MACHINE, 'k1', { keyId: 'k1', uid: 'u1' })).rejects.toBeInstanceOf(EntityConflict);
    await expect(store.send(API_KEY_MACHINE, 'k1', { type: 'REVOKE', at: 't', by: 'intruder' })).rejects.toBeInstanceOf(TransitionRefused);
    expect((await store.load(API_KEY_MACHINE, 'k1'))?.value).toBe('active');
    await store.send(API_KEY_MACHINE, 'k1', { type: 'REVOKE', at: 't', by: 'u1' });
    expect((await store.load(API_KEY_MACHINE, 'k1'))?.value).toBe('revoked');
    await expect(store.send(API_KEY_MACHINE, 'nope', { type: 'REVOKE', at: 't', by: 'u1' })).rejects.toBeInstanceOf(EntityNotFound);
  });

  it('when two processes send the same event at once, then exactly one transition happens', async () => {
    const other = await new MongoClient(url).connect();
    try {
      const a = new EntityStore(client.db(databaseName(url)));
      const b = new EntityStore(other.db(databaseName(url)));
      await a.create(API_KEY_MACHINE, 'k2', { keyId: 'k2', uid: 'u1' });
      const results = await Promise.allSettled([a, b, a, b].map((s) => s.send(API_KEY_MACHINE, 'k2', { type: 'REVOKE', at: 't', by: 'u1' })));
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      expect(results.filter((r) => r.status === 'rejected').every((r) => (r as PromiseRejectedResult).reason instanceof TransitionRefused)).toBe(true);
    } finally {
      await other.close();
    }
  });

  it('when a stored snapshot belongs to another machine version, then it is refused', async () => {
    const db = client.db(databaseName(url));
    await new EntityStore(db).create(API_KEY_MACHINE, 'k3', { keyId: 'k3', uid: 'u1' });
    await expect(new EntityStore(db).load({ ...API_KEY_MACHINE, version: 2 }, 'k3')).rejects.toBeInstanceOf(EntityConflict);
  });
});
