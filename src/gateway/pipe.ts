// The pipe host ({pipe_url}): partner events and agency calls. The edge reads the exact body bytes
// itself (256 KB cap), parses nothing, and forwards them base64 with the X-Pipe-* headers; the
// signature, the JSON and everything they mean are the worker's (src/ingest/handler.ts).
import Router from '@koa/router';
import Koa, { type Context, type Next } from 'koa';
import { subjects } from '../bus/subjects.js';
import { allow_methods, api_error_boundary } from './apiEdge.js';
import { sendApiError } from '../http/apiError.js';
import { readRawBody, requireJsonContentType } from '../http/body.js';
import type { GatewayDeps } from './context.js';
import { emptyBody, forwardRequest } from './forward.js';
import { listenerBasics } from './middleware.js';

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
    if (reply.body === undefined) emptyBody(ctx, reply.status);
    else ctx.body = reply.body;
  };
}

export function createPipeApp(deps: GatewayDeps): Koa {
  const app = new Koa({ proxy: deps.config.trustProxy });
  const router = new Router();
  const endpoint = (method: string) => [api_error_boundary(deps), allow_methods([method]), read_pipe_body(PIPE_BODY_LIMIT), forward_pipe(deps)];

  router.all('/pipe/v1/events', ...endpoint('POST'));
  router.all('/pipe/v1/clients/:subject_ref/family-share', ...endpoint('PUT'));
  router.all('/pipe/v1/clients/:subject_ref/events', ...endpoint('DELETE'));

  // The access log leaves the subject out: it is the partner's client id.
  for (const m of listenerBasics(deps, 'pipe', (path) => path.replace(/^(\/pipe\/v1\/clients\/)[^/]+/, '$1:subject_ref'))) app.use(m);
  app.use(router.routes());
  app.use(async (ctx) => {
    sendApiError(ctx, 404, 'NOT_FOUND', `Nothing at ${ctx.path.slice(0, 200)}`, 'The ingest is POST /pipe/v1/events; see docs/partners.md.');
  });
  return app;
}
