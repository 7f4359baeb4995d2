// A rate limit over JSON-RPC messages, refused alike wherever it is taken (an MCP edge, or the
// workspace endpoint for callers only it can name): each message of a batch is one request.
import type { BucketPolicy, Limiter } from '../limits/limiter.js';
import { countRateLimited } from '../metrics/index.js';
import { RPC } from './codes.js';
import { RpcError } from './errors.js';

/** A refusal as the whole answer: the JSON-RPC error (with its HTTP status) and the headers beside it. */
export interface RateRefusal {
  error: RpcError;
  headers?: Record<string, string>;
}

/** Messages in the body: a batch counts each, anything else counts one. */
export const messagesIn = (body: unknown): number => (Array.isArray(body) ? Math.max(1, body.length) : 1);

/** Spends one token of `key` per message of `body`; the refusal when the bucket cannot pay for all of them. */
export async function takeForMessages(limiter: Limiter, key: string, policy: BucketPolicy, body: unknown): Promise<RateRefusal | undefined> {
  const cost = messagesIn(body);
  // More than the bucket ever holds would be refused forever: say so instead of "wait".
  if (cost > policy.capacity)
    return {
      error: new RpcError(
        RPC.INVALID_REQUEST,
        `Batch too large: a batch of ${cost} items counts as ${cost} requests; the rate limit allows at most ${policy.capacity} at once`,
        { hint: `Send fewer items per batch: at most ${policy.capacity}.`, limit: policy.capacity },
        413,
      ),
    };
  const taken = await limiter.take(key, policy, cost);
  if (taken.allowed) return undefined;
  countRateLimited(key);
  const error = new RpcError(
    RPC.RATE_LIMITED,
    'Rate limit exceeded',
    { hint: `Wait ${taken.retryAfterSec} s before the next request.`, retryAfterSec: taken.retryAfterSec },
    429,
  );
  return { error, headers: { 'Retry-After': String(taken.retryAfterSec) } };
}
