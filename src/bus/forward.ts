// Sending an HTTP envelope to a slice's workers and waiting for the reply, retrying only while no
// worker has answered: what the gateways and the SMTP listener share. Every failure leaves here as
// one of three named errors, by cause, for each surface to answer in its own format.
import { setTimeout as sleep } from 'node:timers/promises';
import { parseReplyEnvelope, type HttpRequestEnvelope } from './envelopes.js';
import { NoRespondersError, RemoteHandlerError, RequestEncodingError, RequestTimeoutError } from './errors.js';
import { RETRY_AFTER_SEC } from './failures.js';
import { metrics } from '../metrics/index.js';
import { HEADER_DEADLINE, HEADER_REQUEST_ID, type Bus } from './types.js';

/** Workers one request is sent to when none answers, unless the caller says otherwise. */
export const DEFAULT_MAX_ATTEMPTS = 2;

export interface ForwardOptions {
  /** Per-attempt reply timeout. */
  timeoutMs: number;
  /** How long to keep trying before giving up with Unavailable. */
  retryWindowMs: number;
  /** Safe to send again after a timeout (the worker may have done it once already). */
  idempotent: boolean;
  /**
   * Most workers one request is handed to: after this many took it and never answered, stop, so a
   * request that kills or stalls workers cannot walk through the pool. Waiting while no worker is
   * subscribed at all does not count. Default 2.
   */
  maxAttempts?: number;
}

/** No worker answered, or the one that did found a dependency down: 503 with Retry-After. */
export class UnavailableError extends Error {
  override name = 'UnavailableError';
  readonly retryAfterSec = RETRY_AFTER_SEC;
  constructor(
    message: string,
    /** `no_worker`: nobody answered in time; `dependency`: a worker answered that the database or bus is down. */
    readonly reason: 'no_worker' | 'dependency' = 'no_worker',
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/** The request fails the same way however often it is sent: a 4xx, never retried. */
export class RequestRejectedError extends Error {
  override name = 'RequestRejectedError';
  constructor(
    readonly status: 400 | 413,
    /** `reply_too_large`: the answer would exceed what may be sent; `request_too_large` and `unprocessable`: the request itself. */
    readonly reason: 'reply_too_large' | 'request_too_large' | 'unprocessable',
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/** A worker answered with a failure of ours (a bug, not the client's doing): 500. */
export class WorkerFailedError extends Error {
  override name = 'WorkerFailedError';
}

/** A worker's failure envelope as the error its cause calls for. */
function byCause(err: RemoteHandlerError): Error {
  switch (err.kind) {
    case 'unavailable':
      return new UnavailableError(err.message, 'dependency', { cause: err });
    case 'too_large':
      return new RequestRejectedError(413, 'reply_too_large', err.message, { cause: err });
    case 'rejected':
      return new RequestRejectedError(400, 'unprocessable', err.message, { cause: err });
    default:
      return new WorkerFailedError(err.message, { cause: err });
  }
}

/** Counts a request given up as unavailable (503); other errors pass through uncounted. */
function gaveUp(subject: string, err: Error): Error {
  if (err instanceof UnavailableError) metrics.busUnavailable.inc({ subject, reason: err.reason });
  return err;
}

export async function forward(bus: Bus, subject: string, envelope: HttpRequestEnvelope, opts: ForwardOptions) {
  const deadline = Date.now() + opts.retryWindowMs;
  const maxAttempts = opts.maxAttempts ?? DEFAULT_MAX_ATTEMPTS;
  let unanswered = 0;
  let backoff = 25;
  let sent = 0;
  for (;;) {
    const left = deadline - Date.now();
    if (left <= 0) throw gaveUp(subject, new UnavailableError(`no worker answered on ${subject} within ${opts.retryWindowMs} ms`));
    const timeoutMs = Math.min(opts.timeoutMs, left);
    if (sent++ > 0) metrics.busRetries.inc({ subject });
    let reply: unknown;
    try {
      reply = await bus.request(subject, envelope, {
        timeoutMs,
        headers: { [HEADER_REQUEST_ID]: envelope.requestId, [HEADER_DEADLINE]: String(Date.now() + timeoutMs) },
      });
    } catch (err) {
      // A worker answered: whatever it said stands, sending it again would get the same.
      if (err instanceof RemoteHandlerError) throw gaveUp(subject, byCause(err));
      if (err instanceof RequestEncodingError)
        throw new RequestRejectedError(err.tooLarge ? 413 : 400, err.tooLarge ? 'request_too_large' : 'unprocessable', err.message, { cause: err });
      if (err instanceof NoRespondersError) metrics.busNoResponders.inc({ subject });
      if (err instanceof RequestTimeoutError) metrics.busTimeouts.inc({ subject });
      // Only a timeout while the bus is connected means a worker took the request and never
      // answered; one during a bus outage counts against the retry window alone.
      if (err instanceof RequestTimeoutError && opts.idempotent && bus.ready() && ++unanswered >= maxAttempts)
        throw gaveUp(subject, new UnavailableError(`no answer on ${subject} from ${unanswered} workers in turn`, 'no_worker', { cause: err }));
      const retry = err instanceof NoRespondersError || (err instanceof RequestTimeoutError && opts.idempotent);
      if (!retry) throw gaveUp(subject, new UnavailableError(err instanceof Error ? err.message : String(err), 'no_worker', { cause: err }));
      await sleep(Math.min(backoff, Math.max(0, deadline - Date.now())));
      backoff = Math.min(backoff * 2, 500);
      continue;
    }
    const parsed = parseReplyEnvelope(reply);
    if (!parsed.success) throw new WorkerFailedError(`a worker on ${subject} answered with a malformed reply`);
    return parsed.data;
  }
}
