// What the edge answers for each cause of failure, shared by the API and MCP edges so both say
// the same thing in their own error format: deterministic failures are 4xx and never retried,
// transient ones 503 with Retry-After, and only our own faults 500.
import { RequestRejectedError, UnavailableError } from '../bus/forward.js';
import { countDatabaseError, isTransient, RETRY_AFTER_SEC } from '../bus/failures.js';
import type { ApiErrorCode } from '../http/apiError.js';
import { RPC } from '../rpc/codes.js';

export interface EdgeAnswer {
  status: number;
  api: ApiErrorCode;
  rpc: number;
  message: string;
  hint: string;
  retryAfterSec?: number;
  /** Not yet logged (a worker logs its own failures once): how loudly the edge should. */
  log?: 'warn';
}

const sentence = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

/** The answer for a failure whose cause is known; undefined for a fault of ours (500, which each edge words itself). */
export function edgeAnswer(err: unknown): EdgeAnswer | undefined {
  if (err instanceof RequestRejectedError) {
    if (err.reason === 'reply_too_large')
      return {
        status: 413,
        api: 'PAYLOAD_TOO_LARGE',
        rpc: RPC.INVALID_REQUEST,
        message: sentence(err.message),
        hint: 'Send fewer items per batch or a smaller limit.',
      };
    if (err.reason === 'request_too_large')
      return { status: 413, api: 'PAYLOAD_TOO_LARGE', rpc: RPC.INVALID_REQUEST, message: sentence(err.message), hint: 'Send a smaller request.' };
    return {
      status: 400,
      api: 'BAD_REQUEST',
      rpc: RPC.INVALID_REQUEST,
      message: sentence(err.message),
      hint: 'Sending the same request again gives the same answer; change it.',
    };
  }
  if (err instanceof UnavailableError) {
    const hint =
      err.reason === 'dependency'
        ? 'A service it depends on is unavailable; retry after the Retry-After delay.'
        : 'No worker answered in time; retry after the Retry-After delay.';
    return { status: 503, api: 'UNAVAILABLE', rpc: RPC.UNAVAILABLE, message: 'Service temporarily unavailable', hint, retryAfterSec: err.retryAfterSec };
  }
  // The edge's own dependency (the shared rate limit in the database) is down.
  countDatabaseError(err);
  if (isTransient(err))
    return {
      status: 503,
      api: 'UNAVAILABLE',
      rpc: RPC.UNAVAILABLE,
      message: 'Service temporarily unavailable',
      hint: 'A service it depends on is unavailable; retry after the Retry-After delay.',
      retryAfterSec: RETRY_AFTER_SEC,
      log: 'warn',
    };
  return undefined;
}
