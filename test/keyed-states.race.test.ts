// The compare-and-set behind a loved one's timeline when a writer stalls between its read and its
// insert: the version number it inserts may have become free again meanwhile (pruned behind newer
// versions, or the whole key removed). Its change must still land on the newest state.
import type { Collection, Db } from 'mongodb';
import { describe, expect, it } from 'vitest';
import { announceStates, KeyedStates } from '../src/family/keyed.js';
import { useTestDatabase } from './harness/database.js';

const database = useTestDatabase();

type S = { items: string[] };
const init = async (): Promise<S> => ({ items: [] });
const add = (x: string) => (s: S) => (s.items.includes(x) ? null : { items: [...s.items, x] });
const states = (db: Db, collection: string) => new KeyedStates<S>(db, collection, collection, 2);

/** `writer`'s next insert first waits for `meanwhile`: a writer stalled after its read. */
function stallNextInsert(writer: KeyedStates<S>, meanwhile: () => Promise<void>): void {
  const rows = (writer as unknown as { rows: Collection }).rows;
  const insert = rows.insertOne.bind(rows);
  let stalled = false;
  rows.insertOne = (async (...args: Parameters<typeof insert>) => {
    if (!stalled) {
      stalled = true;
      await meanwhile();
    }
    return insert(...args);
  }) as typeof rows.insertOne;
}

describe('keyed states - a writer stalled between its read and its insert', () => {
  it('when other writers prune the version it is about to insert, then its change still lands on the newest state', async () => {
    const other = await database.connect();
    try {
      const a = states(database.db, 'keyed_pruned');
      const b = states(other.db, 'keyed_pruned');
      await b.update('k', {}, init, add('first'));
      stallNextInsert(a, async () => {
        for (const x of ['b1', 'b2', 'b3']) await b.update('k', {}, init, add(x));
      });
      await a.update('k', {}, init, add('a'));
      const newest = await b.update('k', {}, init, () => null);
      expect([...newest.items].sort()).toEqual(['a', 'b1', 'b2', 'b3', 'first']);
    } finally {
      await other.close();
    }
  });

  it('when another writer removes the key meanwhile, then its change is written anew rather than into the removed versions', async () => {
    const other = await database.connect();
    try {
      const a = states(database.db, 'keyed_removed');
      const b = states(other.db, 'keyed_removed');
      await b.update('k', {}, init, add('first'));
      stallNextInsert(a, async () => {
        const { v } = await b.apply('k', {}, init, add('b1'));
        const told: string[] = [];
        await b.removeAll([{ key: 'k', v }], told);
        await announceStates(other.db, told);
      });
      await a.update('k', {}, init, add('a'));
      expect((await states(database.db, 'keyed_removed').latest('k'))?.state.items).toEqual(['a']);
    } finally {
      await other.close();
    }
  });
});
