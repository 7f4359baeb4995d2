// Sharing store round trips between concurrent ingest requests without serving anything stale:
// reads that start after each caller arrived (so no change can be missed, in any process), and
// group commits that write what arrived meanwhile in one batch.

const ignore = (): void => undefined;

interface Slot<V> {
  running?: Promise<V>;
  queued?: Promise<V>;
}

/**
 * One read per key at a time. A caller arriving while a read of its key is in flight does not
 * join that read (it may have been sent before a change the caller already saw complete); it joins
 * the next one, sent once the running one settles. So every answer comes from a read sent after
 * its caller arrived: as fresh as a read of its own, with no invalidation to miss, whoever changed
 * the record (another gateway or worker, the partner CLI, the family's pages). Under load each key
 * costs at most one read per read-time instead of one per request.
 */
export class FreshReads<V> {
  private readonly slots = new Map<string, Slot<V>>();

  read(key: string, load: () => Promise<V>): Promise<V> {
    let slot = this.slots.get(key);
    if (!slot) {
      slot = {};
      this.slots.set(key, slot);
    }
    const running = slot.running;
    if (!running) return this.start(key, slot, load);
    const s = slot;
    s.queued ??= running.then(ignore, ignore).then(() => {
      s.queued = undefined;
      return this.start(key, s, load);
    });
    return s.queued;
  }

  private start(key: string, slot: Slot<V>, load: () => Promise<V>): Promise<V> {
    const p = load();
    slot.running = p;
    p.finally(() => {
      if (slot.running !== p) return;
      slot.running = undefined;
      if (!slot.queued) this.slots.delete(key);
    }).catch(ignore);
    return p;
  }
}

/** While batches follow one another, wait for a fuller batch: up to `waitMs` after the previous
 *  write, until `atLeast` items wait. A batch started from idle never waits. */
export interface Gather {
  atLeast: number;
  waitMs: number;
}

/**
 * Group commit: items submitted while a batch is being written wait and go together in the next
 * one (up to `maxBatch`). Each caller resolves only once its item's batch is done, with that item's
 * result; a batch that throws rejects each of its callers. With `gather`, a batch that follows
 * another waits a little for more items (a write whose cost hardly depends on its size then costs
 * fewer writes under load, and nothing when items come one at a time).
 */
export class GroupCommit<I, O> {
  private waiting: { item: I; resolve: (o: O) => void; reject: (err: unknown) => void }[] = [];
  private busy = false;
  private wake: (() => void) | undefined;

  constructor(
    private readonly write: (items: I[]) => Promise<O[]>,
    private readonly maxBatch = 128,
    private readonly gather?: Gather,
  ) {}

  /** No batch is being written. */
  get idle(): boolean {
    return !this.busy;
  }

  submit(item: I): Promise<O> {
    return this.submitAll([item])[0]!;
  }

  /** `submit` for several items at once: written in the same batch while it has room. */
  submitAll(items: readonly I[]): Promise<O>[] {
    const results = items.map((item) => new Promise<O>((resolve, reject) => void this.waiting.push({ item, resolve, reject })));
    if (items.length) {
      if (!this.busy) void this.drain();
      else if (this.wake && this.waiting.length >= Math.min(this.gather!.atLeast, this.maxBatch)) this.wake();
    }
    return results;
  }

  private async drain(): Promise<void> {
    this.busy = true;
    for (let first = true; this.waiting.length; first = false) {
      if (!first && this.gather && this.waiting.length < Math.min(this.gather.atLeast, this.maxBatch)) await this.fuller(this.gather.waitMs);
      const batch = this.waiting.splice(0, this.maxBatch);
      try {
        const results = await this.write(batch.map((b) => b.item));
        batch.forEach((b, i) => b.resolve(results[i]!));
      } catch (err) {
        for (const b of batch) b.reject(err);
      }
    }
    this.busy = false;
  }

  /** Resolves once enough items wait (`submit` wakes it) or `waitMs` has passed. */
  private fuller(waitMs: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.wake = undefined;
        resolve();
      };
      const timer = setTimeout(done, waitMs);
      this.wake = done;
    });
  }
}
