// The edge of signed partner calls: the exact body bytes (never parsed here: a JSON parser would
// lose what was signed) go to the worker base64, with the headers it needs to verify them.
import type { Context, Middleware, Next } from 'koa';
import { readRawBody, requireJsonContentType } from '../http/body.js';
import { allow_methods, api_error_boundary } from './apiEdge.js';
import type { GatewayDeps } from './context.js';
import { emptyBody, forwardRequest, replyBody } from './forward.js';

export interface SignedEdgeOptions {
  subject: string;
  methods: readonly string[];
  bodyLimit: number;
  /** The signature headers are forwarded, never logged. */
  forwardHeaders: readonly string[];
}

/** Exact bytes, base64 in the envelope. */
export function read_signed_body(limit: number) {
  return async (ctx: Context, next: Next): Promise<void> => {
    requireJsonContentType(ctx);
    const raw = await readRawBody(ctx, limit);
    ctx.state.rpcBody = { raw: raw.toString('base64') };
    return next();
  };
}

export function forward_signed(deps: GatewayDeps, opts: SignedEdgeOptions) {
  return async (ctx: Context): Promise<void> => {
    // Every signed call is idempotent (de-duplicated events, single-use agency bodies): safe to resend after a worker timeout.
    const reply = await forwardRequest(deps, ctx, opts.subject, opts.forwardHeaders, true);
    ctx.status = reply.status;
    for (const [k, v] of Object.entries(reply.headers)) ctx.set(k, v);
    if (reply.body === undefined) emptyBody(ctx, reply.status);
    else replyBody(ctx, reply.body);
  };
}

/** The whole pipeline of a signed route, in order. */
export function signedEndpoint(deps: GatewayDeps, opts: SignedEdgeOptions): Middleware[] {
  return [api_error_boundary(deps), allow_methods(opts.methods), read_signed_body(opts.bodyLimit), forward_signed(deps, opts)];
}
