// The pipe host ({pipe_url}): partner events and agency calls. The edge reads the exact body bytes
// itself (256 KB cap), parses nothing, and forwards them base64 with the X-Pipe-* headers; the
// signature, the JSON and everything they mean are the worker's (src/ingest/handler.ts).
import Router from '@koa/router';
import Koa, { type Context, type Next } from 'koa';
import { subjects } from '../bus/subjects.js';
import { allow_methods, api_error_boundary } from './apiEdge.js';
import { sendApiError } from './apiError.js';
import { readRawBody, requireJsonContentType } from './body.js';
import type { GatewayDeps } from './context.js';
import { forwardRequest } from './forward.js';
import { assign_request_id, catch_internal, serve_health } from './middleware.js';

export const PIPE_BODY_LIMIT = 256 * 1024;

/** Headers the worker needs; the signature is forwarded, never logged. */
export const PIPE_FORWARD_HEADERS = ['x-pipe-institution', 'x-pipe-signature', 'x-pipe-timestamp', 'idempotency-key'] as const;

/** Exact bytes, base64 in the envelope (a JSON parser here would lose what was signed). */
export function read_pipe_body(limit: number) {
  return async (ctx: Context, next: Next): Promise<void> => {
    requireJsonContentType(ctx);
    const raw = await readRawBody(ctx, limit);
    ctx.state.rpcBody = { raw: raw.toString('base64') };
    return next();
  };
}

export function forward_pipe(deps: GatewayDeps) {
  const subject = subjects(deps.config.busNamespace).pipe;
  return async (ctx: Context): Promise<void> => {
    // Every pipe call is idempotent (de-duplicated events, single-use agency bodies): safe to resend after a worker timeout.
    const reply = await forwardRequest(deps, ctx, subject, PIPE_FORWARD_HEADERS, true);
    ctx.status = reply.status;
    for (const [k, v] of Object.entries(reply.headers)) ctx.set(k, v);
    ctx.body = reply.body === undefined ? null : reply.body;
  };
}

/** One access-log line; the subject in the path is the partner's client id, so it is left out. */
function log_pipe_request(deps: GatewayDeps) {
  return async (ctx: Context, next: Next): Promise<void> => {
    const started = performance.now();
    try {
      await next();
    } finally {
      deps.log.info(
        { surface: 'pipe', requestId: ctx.state.requestId, method: ctx.method, path: ctx.path.replace(/^(\/pipe\/v1\/clients\/)[^/]+/, '$1:subject_ref'), status: ctx.status, ms: Math.round(performance.now() - started) },
        'request',
      );
    }
  };
}

export function createPipeApp(deps: GatewayDeps): Koa {
  const app = new Koa({ proxy: deps.config.trustProxy });
  const router = new Router();
  const endpoint = (method: string) => [api_error_boundary(deps), allow_methods([method]), read_pipe_body(PIPE_BODY_LIMIT), forward_pipe(deps)];

  router.all('/pipe/v1/events', ...endpoint('POST'));
  router.all('/pipe/v1/clients/:subject_ref/family-share', ...endpoint('PUT'));
  router.all('/pipe/v1/clients/:subject_ref/events', ...endpoint('DELETE'));

  // The listener basics (middleware.ts), with an access log that leaves the subject out.
  for (const m of [assign_request_id, log_pipe_request(deps), catch_internal(deps, 'pipe'), serve_health(deps)]) app.use(m);
  app.use(router.routes());
  app.use(async (ctx) => {
    sendApiError(ctx, 404, 'NOT_FOUND', `Nothing at ${ctx.path.slice(0, 200)}`, 'The ingest is POST /pipe/v1/events; see docs/partners.md.');
  });
  return app;
}
