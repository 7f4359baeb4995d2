// The rate limiter's contract and its arithmetic: exact token buckets whose whole state is one
// number per key, so that state can live in memory or behind one compare-and-set.
//
// A bucket of capacity C gains token k at time k·R (R = refillMs, counted from the epoch) and a
// token stays usable while it is among the C newest minted. Takers always spend the oldest usable
// tokens, so the spent ones form one run ending at `last`: at time t (newest = ⌊t/R⌋) the usable
// tokens are those in (max(newest − C, last), newest]. A take of n spends the n oldest of them or
// none. Nothing else matters, so `last` is the whole state of a bucket, and a bucket whose run has
// fallen out of the window ((last + C)·R ≤ t) is full again: its state may be forgotten.

export interface BucketPolicy {
  /** Most tokens a bucket holds (the burst). */
  capacity: number;
  /** Milliseconds to regain one token. */
  refillMs: number;
}

export interface TakeResult {
  allowed: boolean;
  /** Tokens left after this request. */
  remaining: number;
  /** Seconds until enough tokens are back (0 when allowed). */
  retryAfterSec: number;
}

export interface Limiter {
  /**
   * Spend `cost` tokens from the bucket `key` (one per request; a batch of n requests costs n), all
   * or none: refused while fewer are free, and a cost above the capacity is never admitted.
   */
  take(key: string, policy: BucketPolicy, cost?: number): Promise<TakeResult>;
}

export type Clock = () => number;

/** A policy of `n` requests per minute with a burst of the same size. */
export const perMinute = (n: number): BucketPolicy => ({ capacity: n, refillMs: 60_000 / n });

export function checkCost(cost: number): void {
  if (!Number.isInteger(cost) || cost < 1) throw new RangeError(`a rate-limit cost is a whole number of at least 1, not ${cost}`);
}

/** The outcome of one take against a known state; `last` is the state after it. */
export interface Decision extends TakeResult {
  last: number | undefined;
}

/** `last` undefined: nothing spent within the window (a full bucket). */
export function decide(last: number | undefined, policy: BucketPolicy, cost: number, now: number): Decision {
  const newest = Math.floor(now / policy.refillMs);
  const first = Math.max(newest - policy.capacity + 1, (last ?? -Infinity) + 1);
  const available = newest - first + 1;
  if (cost <= available) return { allowed: true, remaining: available - cost, retryAfterSec: 0, last: first + cost - 1 };
  // The cost-th usable token from `first` is minted at (first + cost − 1)·R.
  const retryAfterSec = Math.max(1, Math.ceil(((first + cost - 1) * policy.refillMs - now) / 1000));
  return { allowed: false, remaining: 0, retryAfterSec, last };
}

/** When the bucket is full again: from then on its state says nothing. */
export const fullAt = (last: number, policy: BucketPolicy): number => (last + policy.capacity) * policy.refillMs;

/**
 * Per-key state that forgets buckets once they are full again. It is swept whenever it has doubled
 * since the last sweep, so the cost is constant per take however many keys come and go.
 */
export class BucketStates<S extends { fullAt: number }> {
  private readonly states = new Map<string, S>();
  private sweepAt = 1024;

  get(key: string): S | undefined {
    return this.states.get(key);
  }

  set(key: string, state: S, now: number): void {
    this.states.set(key, state);
    if (this.states.size < this.sweepAt) return;
    for (const [k, s] of this.states) if (s.fullAt <= now) this.states.delete(k);
    this.sweepAt = Math.max(1024, this.states.size * 2);
  }

  get size(): number {
    return this.states.size;
  }
}
