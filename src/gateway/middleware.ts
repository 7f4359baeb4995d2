// Middleware shared by every listener: request id, client address, access log, compression,
// health probes, and the Host check.
import { randomUUID } from 'node:crypto';
import type { Context, Middleware, Next } from 'koa';
import compress from 'koa-compress';
import { sendApiError } from '../http/apiError.js';
import { BodyError } from '../http/body.js';
import type { GatewayDeps } from './context.js';
import { edgeAnswer } from './failures.js';
import { publicUrlOf, refuse_foreign_host, type PublicSurface } from './hostCheck.js';

declare module 'koa' {
  interface DefaultState {
    requestId: string;
  }
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,100}$/;

/** Take a well-formed X-Request-Id from upstream, or make one; echo it on the response. */
export async function assign_request_id(ctx: Context, next: Next): Promise<void> {
  ctx.state.requestId = requestIdFor(ctx.get('x-request-id'));
  ctx.set('X-Request-Id', ctx.state.requestId);
  return next();
}

/** The request id for an incoming X-Request-Id header ('' when absent). */
export const requestIdFor = (incoming: string): string => (REQUEST_ID.test(incoming) ? incoming : randomUUID());

export interface AnsweredRequest {
  surface: string;
  requestId: string;
  method: string;
  path: string;
  status: number;
  started: number;
}

/** The access log line of one answered request (see log_request). */
export function logAnswered(deps: GatewayDeps, r: AnsweredRequest): void {
  const level = r.status >= 400 ? 'info' : 'debug';
  if (deps.log.isLevelEnabled(level))
    deps.log[level](
      { surface: r.surface, requestId: r.requestId, method: r.method, path: r.path, status: r.status, ms: Math.round(performance.now() - r.started) },
      'request',
    );
}

/** One line per request: method, path (no query: it may carry personal data), status, time.
 *  `loggedPath` hides path segments that identify someone (a partner's client id). Answers of
 *  400 and above are info, the rest debug (README: `LOG_LEVEL=debug` for one line per request):
 *  on a hot read path the line of every success was a tenth of the gateway's CPU. */
export function log_request(deps: GatewayDeps, surface: string, loggedPath: (path: string) => string = (p) => p) {
  return async (ctx: Context, next: Next): Promise<void> => {
    const started = performance.now();
    try {
      await next();
    } finally {
      logAnswered(deps, { surface, requestId: ctx.state.requestId, method: ctx.method, path: loggedPath(ctx.path), status: ctx.status, started });
    }
  };
}

/** `/healthz`: the process is alive. `/readyz`: NATS (when used) and MongoDB are reachable. */
export function serve_health(deps: Pick<GatewayDeps, 'bus' | 'store'>) {
  return async (ctx: Context, next: Next): Promise<void> => {
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') return next();
    if (ctx.path === '/healthz') {
      ctx.body = { status: 'ok' };
      return;
    }
    if (ctx.path === '/readyz') {
      const [bus, mongo] = [deps.bus.ready(), await deps.store.ready()];
      ctx.status = bus && mongo ? 200 : 503;
      ctx.body = { status: bus && mongo ? 'ready' : 'not ready', bus: bus ? 'up' : 'down', busKind: deps.bus.kind, mongo: mongo ? 'up' : 'down' };
      return;
    }
    return next();
  };
}

const BODY_REFUSALS = {
  400: ['BAD_REQUEST', 'Send the body the page or API documents.'],
  413: ['PAYLOAD_TOO_LARGE', 'Send a smaller body.'],
  415: ['UNSUPPORTED_MEDIA_TYPE', 'Send the content type the page or API documents.'],
} as const;

/** The last line of defence: anything unhandled is logged with the request id and answered 500. */
export function catch_internal(deps: GatewayDeps, surface: string) {
  return async (ctx: Context, next: Next): Promise<void> => {
    try {
      await next();
    } catch (err) {
      // A body refused by middleware that reads its own (the auth host's forms) is the client's to fix.
      if (err instanceof BodyError) {
        const [code, hint] = BODY_REFUSALS[err.status];
        return sendApiError(ctx, err.status, code, err.message, err.hint ?? hint);
      }
      // A failure with a known cause (the database down, say) is answered by it, not as a 500.
      const answer = edgeAnswer(err);
      if (answer) {
        deps.log.warn({ err, requestId: ctx.state.requestId }, `${surface} failure`);
        if (answer.retryAfterSec) ctx.set('Retry-After', String(answer.retryAfterSec));
        return sendApiError(ctx, answer.status, answer.api, answer.message, answer.hint);
      }
      deps.log.error({ err, requestId: ctx.state.requestId }, `${surface} failure`);
      sendApiError(ctx, 500, 'INTERNAL', 'Something went wrong on our side', `Try again; quote request id ${ctx.state.requestId} if it persists.`);
    }
  };
}

/**
 * Compress a body when the client asks (brotli, else gzip): the settings page was 31 KB on the
 * wire and a directory search reply about 11 KB, and both shrink to a fifth. An event stream is
 * never compressed: the compressor holds bytes back until it has a block, so events would arrive
 * late or all at once. Bodies under 1 KB are sent as they are (the header would cost more than it
 * saves). Quality 4 brotli is the library's default: nearly gzip's speed at a better ratio.
 */
const compressor = compress({ threshold: 1024, zstd: false, deflate: false });

export const compress_body: Middleware = (ctx, next) =>
  compressor(ctx, async () => {
    await next();
    if (/^text\/event-stream\b/i.test(ctx.type)) ctx.compress = false;
  });

/** The middleware every listener starts with, in order. Health probes answer before the Host
 *  check: orchestrators probe by pod address, and they reveal nothing a rebound page could use. */
export function listenerBasics(deps: GatewayDeps, surface: PublicSurface, loggedPath?: (path: string) => string): Middleware[] {
  return [
    assign_request_id,
    log_request(deps, surface, loggedPath),
    compress_body,
    catch_internal(deps, surface),
    serve_health(deps),
    refuse_foreign_host(publicUrlOf(deps.config, surface), deps.config.trustProxy),
  ];
}
