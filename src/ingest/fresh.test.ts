// GroupCommit's batches: what waits during a write goes in the next one, and with `gather` a batch
// that follows another waits for more items (the consumer's fuller batches under load).
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { GroupCommit } from './fresh.js';

/** A write whose batches are recorded and which finishes only when the test says so. */
function controlledWrite() {
  const batches: number[][] = [];
  const finish: (() => void)[] = [];
  const write = (items: number[]) =>
    new Promise<string[]>((resolve) => {
      batches.push(items);
      finish.push(() => resolve(items.map((i) => `done ${i}`)));
    });
  return { batches, write, finishNext: () => finish.shift()!() };
}

const settle = () => vi.advanceTimersByTimeAsync(0);

beforeEach(() => void vi.useFakeTimers());
afterEach(() => void vi.useRealTimers());

describe('GroupCommit', () => {
  it('when items arrive during a write, then they go together in the next write and each caller gets its own result', async () => {
    const w = controlledWrite();
    const commit = new GroupCommit<number, string>(w.write);
    const first = commit.submit(1);
    await settle();
    const later = [commit.submit(2), commit.submit(3)];
    w.finishNext();
    await settle();
    expect(w.batches).toEqual([[1], [2, 3]]);
    w.finishNext();
    expect(await Promise.all([first, ...later])).toEqual(['done 1', 'done 2', 'done 3']);
  });

  it('when gathering and a batch follows another, then it waits until enough items wait', async () => {
    const w = controlledWrite();
    const commit = new GroupCommit<number, string>(w.write, 128, { atLeast: 4, waitMs: 1_000 });
    const results = [commit.submit(1)];
    await settle();
    // A batch started from idle is written at once.
    expect(w.batches).toEqual([[1]]);
    results.push(commit.submit(2), commit.submit(3));
    w.finishNext();
    await settle();
    expect(w.batches).toEqual([[1]]);
    results.push(commit.submit(4), commit.submit(5));
    await settle();
    expect(w.batches).toEqual([[1], [2, 3, 4, 5]]);
    w.finishNext();
    expect(await Promise.all(results)).toEqual(['done 1', 'done 2', 'done 3', 'done 4', 'done 5']);
  });

  it('when gathering and too few items come, then the batch goes once the wait is over', async () => {
    const w = controlledWrite();
    const commit = new GroupCommit<number, string>(w.write, 128, { atLeast: 100, waitMs: 1_000 });
    const results = [commit.submit(1)];
    await settle();
    results.push(commit.submit(2));
    w.finishNext();
    await vi.advanceTimersByTimeAsync(999);
    expect(w.batches).toEqual([[1]]);
    await vi.advanceTimersByTimeAsync(1);
    expect(w.batches).toEqual([[1], [2]]);
    w.finishNext();
    expect(await Promise.all(results)).toEqual(['done 1', 'done 2']);
  });

  it('when gathering for more than a batch holds, then a full batch goes at once', async () => {
    const w = controlledWrite();
    const commit = new GroupCommit<number, string>(w.write, 3, { atLeast: 10, waitMs: 1_000 });
    void commit.submit(1);
    await settle();
    for (const i of [2, 3]) void commit.submit(i);
    w.finishNext();
    await settle();
    void commit.submit(4);
    await settle();
    expect(w.batches).toEqual([[1], [2, 3, 4]]);
  });

  it('when a write fails, then each caller of that batch is rejected and later batches still go', async () => {
    let calls = 0;
    const commit = new GroupCommit<number, number>(async (items) => {
      if (calls++ === 0) throw new Error('store down');
      return items;
    });
    const failed = commit.submit(1);
    await expect(failed).rejects.toThrow('store down');
    expect(await commit.submit(2)).toBe(2);
  });
});
