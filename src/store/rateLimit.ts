// Token buckets shared by every gateway process, kept in MongoDB.
//
// A bucket of capacity C that gains one token every R ms is stored as the tokens that were
// spent: token k is minted at time k·R and stays usable while it is among the C newest, so at
// time t the usable tokens are those in (⌊t/R⌋ − C, ⌊t/R⌋] not yet spent. Spending one is an
// insert of `<key>#<k>` on the unique `_id`, atomic on MongoDB and on FerretDB v1 alike, so two
// gateways can never spend the same token. Spending the oldest unspent token first makes this
// exactly a token bucket. After a collision a taker tries one of the next few tokens at random,
// so racing takers spread out; every taker starts at the end of the run of spent tokens, so a
// token skipped by one is found by the next.
//
// Where to start looking is a per-key hint (`rate_heads`, read by `_id`): the end of the run of
// tokens known to be spent. It may lag (it is written after the spend, without a version check)
// but never passes a free token, so a stale hint only costs a collision. Every operation is by primary key,
// which FerretDB v1 answers without scanning (it scans for any other query, `_id: {$in}`
// included: 93 ms for 64 ids among 5,000 tokens).
import { randomInt } from 'node:crypto';
import type { Collection, Db, IndexDescription } from 'mongodb';
import { isDuplicateKey } from './errors.js';

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
  /** Seconds until a token is back (0 when allowed). */
  retryAfterSec: number;
}

interface SpentToken {
  _id: string;
  key: string;
  k: number;
  /** When the token leaves the window (ms since the epoch): safe to delete after. */
  expires: number;
}

export type Clock = () => number;

interface Head {
  _id: string;
  last: number;
  expires: number;
}

export const RATE_TOKENS = 'rate_tokens';
export const RATE_HEADS = 'rate_heads';
export const rateTokenIndexes: IndexDescription[] = [{ key: { expires: 1 }, name: 'by_expiry' }];

const MAX_ATTEMPTS = 40;

export class RateLimiter {
  private readonly tokens: Collection<SpentToken>;
  private readonly heads: Collection<Head>;

  constructor(db: Db, private readonly clock: Clock = Date.now) {
    this.tokens = db.collection<SpentToken>(RATE_TOKENS);
    this.heads = db.collection<Head>(RATE_HEADS);
  }

  /** Spend one token from the bucket `key`. */
  async take(key: string, policy: BucketPolicy): Promise<TakeResult> {
    // `known`: every token up to here is spent (a contiguous run), so the search starts after it.
    let known = (await this.heads.findOne({ _id: key }))?.last ?? -Infinity;
    const seenSpent = new Set<number>();
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const now = this.clock();
      const newest = Math.floor(now / policy.refillMs);
      const first = Math.max(newest - policy.capacity + 1, known + 1);
      const available = newest - first + 1;
      if (available <= 0) return { allowed: false, remaining: 0, retryAfterSec: Math.max(1, Math.ceil(((newest + 1) * policy.refillMs - now) / 1000)) };
      // The oldest unspent token first; after collisions, racing takers spread over a window that
      // doubles each time, skipping tokens they saw spent. A token skipped this way is not lost:
      // every taker starts at the end of the run of spent tokens, so the next one finds it.
      const width = Math.min(available, 2 ** Math.min(attempt, 12));
      const candidates: number[] = [];
      for (let c = first; c < first + width; c++) if (!seenSpent.has(c)) candidates.push(c);
      const k = attempt === 0 || !candidates.length ? first : candidates[randomInt(candidates.length)]!;
      const expires = (k + policy.capacity + 1) * policy.refillMs;
      try {
        await this.tokens.insertOne({ _id: `${key}#${k}`, key, k, expires });
      } catch (err) {
        if (!isDuplicateKey(err)) throw err;
        seenSpent.add(k);
        // Extend the run of spent tokens over everything seen spent right after it.
        let end = first;
        while (seenSpent.has(end)) end++;
        known = end - 1;
        continue;
      }
      // Advance the hint only along the run of spent tokens, never past one that may be free.
      if (k === first) this.heads.updateOne({ _id: key }, { $max: { last: k, expires } }, { upsert: true }).catch(() => undefined);
      return { allowed: true, remaining: Math.max(0, newest - first), retryAfterSec: 0 };
    }
    // Extreme contention on one key: refuse rather than over-admit.
    return { allowed: false, remaining: 0, retryAfterSec: 1 };
  }

  /** Delete spent tokens (and hints) that have left their window: they can no longer matter. */
  async sweep(): Promise<number> {
    const now = this.clock();
    const res = await this.tokens.deleteMany({ expires: { $lt: now } });
    await this.heads.deleteMany({ expires: { $lt: now } });
    return res.deletedCount;
  }
}

/** A policy of `n` requests per minute with a burst of the same size. */
export const perMinute = (n: number): BucketPolicy => ({ capacity: n, refillMs: 60_000 / n });
