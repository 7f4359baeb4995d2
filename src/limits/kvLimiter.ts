// Exact token buckets shared by every process on the bus: each bucket's state (one number, see
// limiter.ts) is a key-value entry, written by compare-and-set on its revision, with a TTL that ends
// once the bucket is full again, so idle keys go away by themselves.
//
// Each process remembers the last state and revision it saw per key and writes against them: an
// uncontended take is one write, one round trip. A write that finds the key moved on (another
// process took from it) reads the key and decides again; a stale state can only overstate what is
// free, so a refusal reads first and is decided on the current state. Takes of one key in one
// process are decided together, one round trip per batch, so a burst on a key costs one write per
// round trip rather than a compare-and-set race per request.
import { KvConflictError, type KvBucket } from '../bus/kv.js';
import { onFirstUse } from '../bus/onFirstUse.js';
import { BucketStates, checkCost, decide, fullAt, type BucketPolicy, type Clock, type Decision, type Limiter, type TakeResult } from './limiter.js';

interface Known {
  /** Undefined: nothing spent within the window. */
  last: number | undefined;
  refillMs: number | undefined;
  /** The revision the next write expects; 0 while the key is believed absent. */
  revision: number;
  fullAt: number;
}

interface Waiter {
  policy: BucketPolicy;
  cost: number;
  resolve(result: TakeResult): void;
  reject(err: unknown): void;
}

const ABSENT: Known = { last: undefined, refillMs: undefined, revision: 0, fullAt: 0 };

/** Rounds of read and write for one batch before refusing it: contention may refuse, never over-admit. */
const MAX_ROUNDS = 40;

/** Entries outlive the window by this much, so a reader whose clock lags a little still finds them. */
const EXPIRY_MARGIN_MS = 5_000;

function parse(value: string, revision: number): Known {
  try {
    const v = JSON.parse(value) as Partial<Record<'last' | 'refillMs' | 'fullAt', unknown>>;
    if (typeof v.last === 'number' && typeof v.refillMs === 'number' && typeof v.fullAt === 'number')
      return { last: v.last, refillMs: v.refillMs, revision, fullAt: v.fullAt };
  } catch {
    // not ours (or deleted): a full bucket, written against this revision
  }
  return { ...ABSENT, revision };
}

const result = (d: Decision): TakeResult => ({ allowed: d.allowed, remaining: d.remaining, retryAfterSec: d.retryAfterSec });

export class KvLimiter implements Limiter {
  private readonly known = new BucketStates<Known>();
  /** Keys with a batch being settled, and the takes waiting for the next batch. */
  private readonly waiting = new Map<string, Waiter[]>();
  private readonly bucket: () => Promise<KvBucket>;

  /** `open` is called on first use, and again after it failed. */
  constructor(
    open: () => Promise<KvBucket>,
    private readonly clock: Clock = Date.now,
  ) {
    this.bucket = onFirstUse(() =>
      open().catch((err: unknown) => {
        throw new Error('rate limits on NATS keep their state in JetStream key-value: is JetStream enabled on the server (nats-server -js)?', { cause: err });
      }),
    );
  }

  async take(key: string, policy: BucketPolicy, cost = 1): Promise<TakeResult> {
    checkCost(cost);
    return new Promise<TakeResult>((resolve, reject) => {
      const waiter: Waiter = { policy, cost, resolve, reject };
      const queue = this.waiting.get(key);
      if (queue) queue.push(waiter);
      else {
        this.waiting.set(key, []);
        void this.run(key, [waiter]);
      }
    });
  }

  private async run(key: string, batch: Waiter[]): Promise<void> {
    for (;;) {
      try {
        await this.settle(key, batch);
      } catch (err) {
        for (const w of batch) w.reject(err);
      }
      const next = this.waiting.get(key) ?? [];
      if (!next.length) {
        this.waiting.delete(key);
        return;
      }
      this.waiting.set(key, []);
      batch = next;
    }
  }

  private async read(bucket: KvBucket, key: string): Promise<Known> {
    const entry = await bucket.get(key);
    const known = entry ? parse(entry.value, entry.revision) : ABSENT;
    this.known.set(key, known, this.clock());
    return known;
  }

  /** Decide the batch in arrival order against the freshest state, then write it in one round trip. */
  private async settle(key: string, batch: Waiter[]): Promise<void> {
    const bucket = await this.bucket();
    let known = this.known.get(key) ?? ABSENT;
    let fresh = false;
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const now = this.clock();
      let last = known.last;
      let spentUnder: BucketPolicy | undefined;
      const decisions: Decision[] = [];
      for (const w of batch) {
        // A state counted in another refill period (the policy changed) no longer applies.
        const current = (spentUnder?.refillMs ?? known.refillMs) === w.policy.refillMs ? last : undefined;
        const d = decide(current, w.policy, w.cost, now);
        if (d.allowed) {
          last = d.last;
          spentUnder = w.policy;
        }
        decisions.push(d);
      }
      if (!spentUnder || last === undefined) {
        if (!fresh) {
          known = await this.read(bucket, key);
          fresh = true;
          continue;
        }
        batch.forEach((w, i) => w.resolve(result(decisions[i]!)));
        return;
      }
      const full = fullAt(last, spentUnder);
      try {
        const value = JSON.stringify({ last, refillMs: spentUnder.refillMs, fullAt: full });
        const revision = await bucket.write(key, value, { expectedRevision: known.revision, ttlMs: full - now + EXPIRY_MARGIN_MS });
        this.known.set(key, { last, refillMs: spentUnder.refillMs, revision, fullAt: full }, now);
        batch.forEach((w, i) => w.resolve(result(decisions[i]!)));
        return;
      } catch (err) {
        if (!(err instanceof KvConflictError)) throw err;
        known = await this.read(bucket, key);
        fresh = true;
      }
    }
    for (const w of batch) w.resolve({ allowed: false, remaining: 0, retryAfterSec: 1 });
  }
}
