// Token buckets shared by every gateway process, kept in MongoDB.
//
// A bucket of capacity C that gains one token every R ms is stored as the tokens that were
// spent: token k is minted at time k·R and stays usable while it is among the C newest, so at
// time t the usable tokens are those in (⌊t/R⌋ − C, ⌊t/R⌋] not yet spent. Spending one is an
// insert of `<key>#<k>` on the unique `_id`, atomic on MongoDB and on FerretDB v1 alike, so two
// gateways can never spend the same token. Spending the oldest unspent token first makes this
// exactly a token bucket. After a collision a taker reads which of the next tokens are spent and
// takes a random free one, so racing takers spread out without leaving holes.
//
// Where to start looking is a per-key hint (`rate_heads`, read by `_id`): the end of the run of
// tokens known to be spent. It may lag (it is written after the spend, without a version check)
// but never passes a free token, so a stale hint only costs a collision. Every operation is by primary key,
// which FerretDB v1 answers without scanning (a range query sorted by token scanned every spent
// token of the key and fell to 24 requests a second).
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

const MAX_ATTEMPTS = 30;
/** How many tokens ahead a taker looks after a collision. */
const WINDOW = 64;

export class RateLimiter {
  private readonly tokens: Collection<SpentToken>;
  private readonly heads: Collection<Head>;

  constructor(db: Db, private readonly clock: Clock = Date.now) {
    this.tokens = db.collection<SpentToken>(RATE_TOKENS);
    this.heads = db.collection<Head>(RATE_HEADS);
  }

  /** Spend one token from the bucket `key`. */
  async take(key: string, policy: BucketPolicy): Promise<TakeResult> {
    // `known`: every token up to here is spent (a contiguous prefix), so the search starts after it.
    let known = (await this.heads.findOne({ _id: key }))?.last ?? -Infinity;
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const now = this.clock();
      const newest = Math.floor(now / policy.refillMs);
      const oldest = newest - policy.capacity + 1;
      const first = Math.max(oldest, known + 1);
      const available = newest - first + 1;
      const refuse = () => ({ allowed: false, remaining: 0, retryAfterSec: Math.max(1, Math.ceil(((newest + 1) * policy.refillMs - now) / 1000)) });
      if (available <= 0) return refuse();

      let k = first;
      let contiguous = known;
      if (attempt > 0) {
        // After a collision, look at which of the next tokens are really spent (by _id, no scan)
        // and pick a free one at random, so racing takers spread out and leave no holes behind.
        const window = Math.min(available, WINDOW);
        const candidates = Array.from({ length: window }, (_, i) => first + i);
        const spent = new Set((await this.tokens.find({ _id: { $in: candidates.map((c) => `${key}#${c}`) } }, { projection: { k: 1 } }).toArray()).map((t) => t.k));
        const free = candidates.filter((c) => !spent.has(c));
        contiguous = (free[0] ?? first + window) - 1;
        known = Math.max(known, contiguous);
        if (!free.length) {
          if (window === available) return refuse();
          continue;
        }
        k = free[randomInt(free.length)]!;
      }
      const expires = (k + policy.capacity + 1) * policy.refillMs;
      try {
        await this.tokens.insertOne({ _id: `${key}#${k}`, key, k, expires });
      } catch (err) {
        if (!isDuplicateKey(err)) throw err;
        continue;
      }
      // Advance the hint only over a contiguous run of spent tokens, never past a free one.
      const head = k === Math.max(first, contiguous + 1) ? k : contiguous;
      if (Number.isFinite(head)) this.heads.updateOne({ _id: key }, { $max: { last: head, expires } }, { upsert: true }).catch(() => undefined);
      return { allowed: true, remaining: Math.max(0, newest - Math.max(k, contiguous + 1)), retryAfterSec: 0 };
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
