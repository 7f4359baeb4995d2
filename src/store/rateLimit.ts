// Token buckets shared by every gateway process, kept in MongoDB. Each take is a versioned
// write (store/versioned.ts), so concurrent takers never spend the same token.
import type { Db } from 'mongodb';
import { COLLECTIONS } from './indexes.js';
import { VersionedStore } from './versioned.js';

export interface BucketPolicy {
  /** Most tokens a bucket holds (the burst). */
  capacity: number;
  /** Milliseconds to regain one token. */
  refillMs: number;
}

export interface TakeResult {
  allowed: boolean;
  /** Whole tokens left after this request. */
  remaining: number;
  /** Seconds until one token is back (0 when allowed). */
  retryAfterSec: number;
}

interface Bucket {
  tokens: number;
  updatedAt: number;
}

export type Clock = () => number;

const MAX_ATTEMPTS = 25;

export class RateLimiter {
  private readonly buckets: VersionedStore<Bucket>;

  constructor(db: Db, private readonly clock: Clock = Date.now) {
    this.buckets = new VersionedStore<Bucket>(db, COLLECTIONS.rateBuckets);
  }

  /** Take one token from the bucket `key`. */
  async take(key: string, policy: BucketPolicy): Promise<TakeResult> {
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const now = this.clock();
      const current = await this.buckets.latest(key);
      const last = current?.state ?? { tokens: policy.capacity, updatedAt: now };
      const elapsed = Math.max(0, now - last.updatedAt);
      const tokens = Math.min(policy.capacity, last.tokens + elapsed / policy.refillMs);
      if (tokens < 1) {
        return { allowed: false, remaining: 0, retryAfterSec: Math.max(1, Math.ceil(((1 - tokens) * policy.refillMs) / 1000)) };
      }
      const next = { tokens: tokens - 1, updatedAt: Math.max(now, last.updatedAt) };
      if (await this.buckets.tryWrite(key, (current?.v ?? 0) + 1, next, now)) {
        return { allowed: true, remaining: Math.floor(next.tokens), retryAfterSec: 0 };
      }
      // Another process took a token between our read and write: read again.
    }
    // Extreme contention on one key: refuse rather than over-admit.
    return { allowed: false, remaining: 0, retryAfterSec: 1 };
  }

  /** Remove bucket states untouched for `olderThanMs` (such a bucket is full again anyway). */
  async sweep(olderThanMs: number): Promise<number> {
    return this.buckets.sweep(this.clock() - olderThanMs);
  }
}

/** A policy of `n` requests per minute with a burst of the same size. */
export const perMinute = (n: number): BucketPolicy => ({ capacity: n, refillMs: 60_000 / n });
