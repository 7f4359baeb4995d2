// Sending an HTTP envelope to a slice's workers and waiting for the reply, retrying while no
// worker can answer: what the gateways and the SMTP listener share.
import { setTimeout as sleep } from 'node:timers/promises';
import { httpReplyEnvelope, type HttpRequestEnvelope } from './envelopes.js';
import { NoRespondersError, RemoteHandlerError, RequestTimeoutError } from './errors.js';
import { HEADER_DEADLINE, HEADER_REQUEST_ID, type Bus } from './types.js';

export interface ForwardOptions {
  /** Per-attempt reply timeout. */
  timeoutMs: number;
  /** How long to keep trying before giving up with Unavailable. */
  retryWindowMs: number;
  /** Safe to send again after a timeout (the worker may have done it once already). */
  idempotent: boolean;
}

/** No worker answered within the retry window: the surface answers 503 with Retry-After. */
export class UnavailableError extends Error {
  override name = 'UnavailableError';
  readonly retryAfterSec = 2;
}

/** A worker answered with a failure envelope (a bug, not the client's doing). */
export class WorkerFailedError extends Error {
  override name = 'WorkerFailedError';
}

export async function forward(bus: Bus, subject: string, envelope: HttpRequestEnvelope, opts: ForwardOptions) {
  const deadline = Date.now() + opts.retryWindowMs;
  let backoff = 25;
  for (;;) {
    const left = deadline - Date.now();
    if (left <= 0) throw new UnavailableError(`no worker answered on ${subject} within ${opts.retryWindowMs} ms`);
    const timeoutMs = Math.min(opts.timeoutMs, left);
    try {
      const reply = await bus.request(subject, envelope, {
        timeoutMs,
        headers: { [HEADER_REQUEST_ID]: envelope.requestId, [HEADER_DEADLINE]: String(Date.now() + timeoutMs) },
      });
      return httpReplyEnvelope.parse(reply);
    } catch (err) {
      if (err instanceof RemoteHandlerError) throw new WorkerFailedError(err.message, { cause: err });
      const retry = err instanceof NoRespondersError || (err instanceof RequestTimeoutError && opts.idempotent);
      if (!retry) throw new UnavailableError(err instanceof Error ? err.message : String(err), { cause: err });
      await sleep(Math.min(backoff, Math.max(0, deadline - Date.now())));
      backoff = Math.min(backoff * 2, 500);
    }
  }
}

