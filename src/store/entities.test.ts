import { describe, expect, it } from 'vitest';
import { API_KEY_MACHINE } from '../../machines/apiKey.js';
import { useTestDatabase } from '../../test/harness/database.js';
import { EntityConflict, EntityNotFound, EntityStore, TransitionRefused } from './entities.js';

const t = useTestDatabase();

describe('entity store - XState snapshots in MongoDB', () => {
  it('when created and sent an event, then the stored snapshot follows; refused events are named', async () => {
    const store = new EntityStore(t.db);
    await store.create(API_KEY_MACHINE, 'k1', { keyId: 'k1', uid: 'u1' });
    await expect(store.create(API_KEY_MACHINE, 'k1', { keyId: 'k1', uid: 'u1' })).rejects.toBeInstanceOf(EntityConflict);
    await expect(store.send(API_KEY_MACHINE, 'k1', { type: 'REVOKE', at: 't', by: 'intruder' })).rejects.toBeInstanceOf(TransitionRefused);
    expect((await store.load(API_KEY_MACHINE, 'k1'))?.value).toBe('active');
    await store.send(API_KEY_MACHINE, 'k1', { type: 'REVOKE', at: 't', by: 'u1' });
    expect((await store.load(API_KEY_MACHINE, 'k1'))?.value).toBe('revoked');
    await expect(store.send(API_KEY_MACHINE, 'nope', { type: 'REVOKE', at: 't', by: 'u1' })).rejects.toBeInstanceOf(EntityNotFound);
  });

  it('when two processes send the same event at once, then exactly one transition happens', async () => {
    const other = await t.connect();
    try {
      const a = new EntityStore(t.db);
      const b = new EntityStore(other.db);
      await a.create(API_KEY_MACHINE, 'k2', { keyId: 'k2', uid: 'u1' });
      const results = await Promise.allSettled([a, b, a, b].map((s) => s.send(API_KEY_MACHINE, 'k2', { type: 'REVOKE', at: 't', by: 'u1' })));
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      expect(results.filter((r) => r.status === 'rejected').every((r) => (r as PromiseRejectedResult).reason instanceof TransitionRefused)).toBe(true);
    } finally {
      await other.close();
    }
  });

  it('when a stored snapshot belongs to another machine version, then it is refused', async () => {
    const db = t.db;
    await new EntityStore(db).create(API_KEY_MACHINE, 'k3', { keyId: 'k3', uid: 'u1' });
    await expect(new EntityStore(db).load({ ...API_KEY_MACHINE, version: 2 }, 'k3')).rejects.toBeInstanceOf(EntityConflict);
  });
});
