// Forwarding a request to the worker pool, retrying while no worker can answer.
import { setTimeout as sleep } from 'node:timers/promises';
import { NoRespondersError, RemoteHandlerError, RequestTimeoutError } from '../bus/errors.js';
import type { Context } from 'koa';
import { httpReplyEnvelope, type HttpRequestEnvelope } from '../bus/envelopes.js';
import { HEADER_DEADLINE, HEADER_REQUEST_ID, type Bus } from '../bus/types.js';
import type { GatewayDeps } from './context.js';

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

/** Build the envelope for this Koa request (headers filtered to `names`) and forward it. */
export function forwardRequest(deps: GatewayDeps, ctx: Context, subject: string, names: readonly string[], idempotent: boolean) {
  const headers: Record<string, string> = {};
  for (const name of names) {
    const value = ctx.get(name);
    if (value) headers[name] = value;
  }
  const envelope: HttpRequestEnvelope = {
    v: 1,
    method: ctx.method,
    path: ctx.path,
    query: Object.fromEntries(Object.entries(ctx.query).map(([k, v]) => [k, Array.isArray(v) ? (v[0] ?? '') : (v ?? '')])),
    headers,
    body: ctx.state.rpcBody,
    clientIp: ctx.ip,
    requestId: ctx.state.requestId,
  };
  return forward(deps.bus, subject, envelope, { timeoutMs: deps.config.busTimeoutMs, retryWindowMs: deps.config.gatewayRetryWindowMs, idempotent });
}

/** An empty body that keeps the worker's status (Koa turns `body = null` into 204, even for a 202). */
export function emptyBody(ctx: Context, status: number): void {
  if (status === 204 || status === 304) {
    ctx.body = null;
  } else {
    ctx.body = '';
    ctx.remove('Content-Type');
  }
  ctx.status = status;
}
