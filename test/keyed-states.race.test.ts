// The compare-and-set behind a loved one's timeline when a writer stalls between its read and its
// insert: the version number it inserts may have become free again meanwhile (pruned behind newer
// versions, or the whole key removed). Its change must still land on the newest state.
import type { Collection, Db, Document } from 'mongodb';
import { afterEach, describe, expect, it } from 'vitest';
import { announceStates, KeyedStates } from '../src/family/keyed.js';
import { useTestDatabase } from './harness/database.js';

const database = useTestDatabase();

type S = { items: string[] };
const init = async (): Promise<S> => ({ items: [] });
const add = (x: string) => (s: S) => (s.items.includes(x) ? null : { items: [...s.items, x] });
const states = (db: Db, collection: string, gone?: (key: string) => Promise<boolean>) => new KeyedStates<S>(db, collection, collection, 2, gone ? { gone } : {});

/** `writer`'s next insert into `into` (its versions, or their heads) first waits for `meanwhile`: a
 *  writer stalled after its read, or between its version and that version's head. */
function stallNextInsert<T extends Document>(writer: KeyedStates<T>, meanwhile: () => Promise<void>, into: 'rows' | 'heads' = 'rows'): void {
  const target = (writer as unknown as Record<'rows' | 'heads', Collection>)[into];
  const insert = target.insertOne.bind(target);
  let stalled = false;
  target.insertOne = (async (...args: Parameters<typeof insert>) => {
    if (!stalled) {
      stalled = true;
      await meanwhile();
    }
    return insert(...args);
  }) as typeof target.insertOne;
}

/** `b` writes the key once more and removes it with every version, as a writer that seals and moves a chunk does. */
async function writeThenRemove(b: KeyedStates<S>, db: Db): Promise<void> {
  const { v } = await b.apply('k', {}, init, add('b1'));
  const told: string[] = [];
  await b.removeAll([{ key: 'k', v }], told);
  await announceStates(db, told);
}

const connections: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const c of connections.splice(0)) await c.close();
});

/** Two writers of `collection`, each on a connection of its own as two processes are: `a` on the
 *  test's, `b` on another (`otherDb`). */
async function twoWriters(collection: string, gone?: (key: string) => Promise<boolean>) {
  const other = await database.connect();
  connections.push(other);
  return { a: states(database.db, collection, gone), b: states(other.db, collection, gone), otherDb: other.db };
}

describe('keyed states - a writer stalled between its read and its insert', () => {
  it('when other writers prune the version it is about to insert, then its change still lands on the newest state', async () => {
    const { a, b } = await twoWriters('keyed_pruned');
    await b.update('k', {}, init, add('first'));
    stallNextInsert(a, async () => {
      for (const x of ['b1', 'b2', 'b3']) await b.update('k', {}, init, add(x));
    });
    await a.update('k', {}, init, add('a'));
    const newest = await b.update('k', {}, init, () => null);
    expect([...newest.items].sort()).toEqual(['a', 'b1', 'b2', 'b3', 'first']);
  });

  it('when another writer removes the key meanwhile, then its change is written anew rather than into the removed versions', async () => {
    const { a, b, otherDb } = await twoWriters('keyed_removed');
    await b.update('k', {}, init, add('first'));
    stallNextInsert(a, () => writeThenRemove(b, otherDb));
    await a.update('k', {}, init, add('a'));
    expect((await states(database.db, 'keyed_removed').latest('k'))?.state.items).toEqual(['a']);
  });

  it('when it read a key between its creator\'s row and head, and the key is removed meanwhile, then its change is written anew rather than onto the removed state', async () => {
    const { a, b, otherDb } = await twoWriters('keyed_headless');
    // A creator between its two inserts: version 1 is stored, its head not yet.
    const raw = otherDb.collection<{ _id: string } & Record<string, unknown>>('keyed_headless');
    await raw.insertOne({ _id: 'k#1', key: 'k', v: 1, state: { items: ['first'] }, at: new Date() });
    stallNextInsert(a, async () => {
      await raw.insertOne({ _id: 'k', v: 1, state: { items: ['first'] } });
      await writeThenRemove(b, otherDb);
    });
    await a.update('k', {}, init, add('a'));
    expect((await states(database.db, 'keyed_headless').latest('k'))?.state.items).toEqual(['a']);
  });

  it('when its first version goes in after the key was created, written and moved away meanwhile, then it learns so instead of bringing the key back', async () => {
    const moved = new Set<string>();
    const gone = async (key: string) => moved.has(key);
    // As a timeline chunk's first state does: a key already moved away is not started again.
    const start = async (): Promise<S> => {
      if (moved.has('k')) throw new Error('k was moved away');
      return init();
    };
    const { a, b, otherDb } = await twoWriters('keyed_moved', gone);
    stallNextInsert(a, async () => {
      await b.update('k', {}, init, add('b0'));
      moved.add('k');
      await writeThenRemove(b, otherDb);
    });
    await expect(a.update('k', {}, start, add('a'))).rejects.toThrow('k was moved away');
    expect(await states(database.db, 'keyed_moved').latest('k')).toBeNull();
  });

  it('when it stalls between its first version and that version\'s head, and the key is written on and removed meanwhile, then its late head does not bring the removed state back', async () => {
    const { a, b, otherDb } = await twoWriters('keyed_late_head');
    // b builds on a's version 1 (a's change is in what b moves away), then removes the key.
    stallNextInsert(a, () => writeThenRemove(b, otherDb), 'heads');
    await a.update('k', {}, init, add('a'));
    expect(await states(database.db, 'keyed_late_head').latest('k')).toBeNull();
    expect(await database.db.collection('keyed_late_head').countDocuments({})).toBe(0);
  });

  it('when its insert lands on a number a removal under way has freed, then it does not take its write for the newest', async () => {
    // Heads in a collection of their own, so a removal is one command for each and can be held between them.
    type C = { items: string[]; sealed?: true };
    const sealedStates = (db: Db) => new KeyedStates<C>(db, 'keyed_removing', 'keyed_removing_heads', 2, { last: (s) => s.sealed === true });
    const other = await database.connect();
    connections.push(other);
    const [a, b] = [sealedStates(database.db), sealedStates(other.db)];
    const start = async (): Promise<C> => ({ items: [] });
    await b.update('k', {}, start, (s) => ({ items: [...s.items, 'first'] }));
    const { rows, heads } = b as unknown as Record<'rows' | 'heads', Collection>;
    const rowsDelete = rows.bulkWrite.bind(rows);
    const headsDelete = heads.bulkWrite.bind(heads);
    let rowsGone: Promise<unknown> | undefined;
    let removing!: () => void;
    const removalStarted = new Promise<void>((resolve) => (removing = resolve));
    let settled!: () => void;
    const aSettled = new Promise<void>((resolve) => (settled = resolve));
    rows.bulkWrite = ((...args: Parameters<typeof rowsDelete>) => (rowsGone = rowsDelete(...args))) as typeof rows.bulkWrite;
    // The head's delete waits until a has settled its write; a inserts once the versions deleted so far are gone.
    heads.bulkWrite = (async (...args: Parameters<typeof headsDelete>) => {
      void (rowsGone ?? Promise.resolve()).then(removing);
      await aSettled;
      return headsDelete(...args);
    }) as typeof heads.bulkWrite;
    let removal: Promise<void> | undefined;
    stallNextInsert(a, async () => {
      // b seals version 2 (its head stays at 1) and starts removing the key.
      const { v } = await b.apply('k', {}, start, (s) => ({ items: [...s.items, 'b'], sealed: true }));
      removal = b.removeAll([{ key: 'k', v }], []);
      await removalStarted;
    });
    const written = await a.apply('k', {}, start, (s) => (s.sealed || s.items.includes('a') ? null : { items: [...s.items, 'a'] }));
    settled();
    await removal;
    // Built on the removed lineage ('first') and reported written: its 'a' would be listed nowhere.
    expect(written.wrote && written.state.items.includes('first')).toBe(false);
  });
});
