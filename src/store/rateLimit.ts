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
import { MongoBulkWriteError, type Collection, type Db, type IndexDescription } from 'mongodb';
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

  /**
   * Spend `cost` tokens from the bucket `key` (one per request; a batch of n requests costs n), all
   * or none: refused while fewer are free, and a cost above the capacity is never admitted.
   */
  async take(key: string, policy: BucketPolicy, cost = 1): Promise<TakeResult> {
    if (!Number.isInteger(cost) || cost < 1) throw new RangeError(`a rate-limit cost is a whole number of at least 1, not ${cost}`);
    return cost === 1 ? this.takeOne(key, policy) : this.takeMany(key, policy, cost);
  }

  private async takeOne(key: string, policy: BucketPolicy): Promise<TakeResult> {
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

  /**
   * The `cost` oldest free tokens, inserted in one unordered write; the ones found spent already
   * (a racer's, or behind a stale hint) are replaced by the next free ones. A taker that ends up
   * short gives back what it spent: all or none. A token given back may meanwhile have been
   * skipped by a racer's hint, so contention can waste tokens but never over-admit.
   */
  private async takeMany(key: string, policy: BucketPolicy, cost: number): Promise<TakeResult> {
    let known = (await this.heads.findOne({ _id: key }))?.last ?? -Infinity;
    const spent = new Set<number>();
    const mine: number[] = [];
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const need = cost - mine.length;
      const now = this.clock();
      const newest = Math.floor(now / policy.refillMs);
      const first = Math.max(newest - policy.capacity + 1, known + 1);
      const free: number[] = [];
      for (let k = first; k <= newest && free.length < need; k++) if (!spent.has(k)) free.push(k);
      if (free.length < need) {
        await this.giveBack(key, mine);
        // The missing tokens are minted one every refillMs after the newest.
        const missing = need - free.length;
        return { allowed: false, remaining: 0, retryAfterSec: Math.max(1, Math.ceil(((newest + missing) * policy.refillMs - now) / 1000)) };
      }
      mine.push(...(await this.insertTokens(key, policy, free)));
      for (const k of free) spent.add(k);
      let end = first;
      while (spent.has(end)) end++;
      known = end - 1;
      if (mine.length === cost) {
        // Every token up to `known` is spent (by us or a racer): the hint may move there.
        this.heads.updateOne({ _id: key }, { $max: { last: known, expires: (known + policy.capacity + 1) * policy.refillMs } }, { upsert: true }).catch(() => undefined);
        return { allowed: true, remaining: Math.max(0, newest - known), retryAfterSec: 0 };
      }
    }
    await this.giveBack(key, mine);
    return { allowed: false, remaining: 0, retryAfterSec: 1 };
  }

  /** Insert the tokens `ks`; those this taker spent (the others were spent already). */
  private async insertTokens(key: string, policy: BucketPolicy, ks: number[]): Promise<number[]> {
    const docs = ks.map((k) => ({ _id: `${key}#${k}`, key, k, expires: (k + policy.capacity + 1) * policy.refillMs }));
    try {
      await this.tokens.insertMany(docs, { ordered: false });
      return ks;
    } catch (err) {
      if (!(err instanceof MongoBulkWriteError)) throw err;
      const failures = Array.isArray(err.writeErrors) ? err.writeErrors : [err.writeErrors];
      if (!failures.length || !failures.every((f) => isDuplicateKey(f))) throw err;
      const taken = new Set(failures.map((f) => f.index));
      return ks.filter((_, i) => !taken.has(i));
    }
  }

  /** Unspend tokens of a refused take, each by primary key; one left spent only wastes it. */
  private async giveBack(key: string, ks: number[]): Promise<void> {
    await Promise.all(ks.map((k) => this.tokens.deleteOne({ _id: `${key}#${k}` }).catch(() => undefined)));
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
