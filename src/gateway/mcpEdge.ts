// The edge of an MCP endpoint: CORS, Origin, method, rate limit, body bounds, JSON parsing and
// forwarding. Each step is one small middleware; the route reads as the table of its steps.
import cors from '@koa/cors';
import type { Context, Middleware, Next } from 'koa';
import { allowedOrigins } from '../config.js';
import { RPC } from '../rpc/codes.js';
import { salvageId, type RpcId } from '../rpc/envelope.js';
import { parseError, RpcError } from '../rpc/errors.js';
import { rpcErrorBody } from '../rpc/mcp.js';
import { takeForMessages } from '../rpc/rateLimit.js';
import type { BucketPolicy } from '../limits/limiter.js';
import { BodyError, parseJson, readRawBody, requireJsonContentType } from '../http/body.js';
import type { GatewayDeps } from './context.js';
import { WorkerFailedError } from '../bus/forward.js';
import { edgeAnswer } from './failures.js';
import { emptyBody, forwardRequest, replyBody } from './forward.js';
import { streamQuestion } from './questionStream.js';

declare module 'koa' {
  interface DefaultState {
    rpcBody?: unknown;
  }
}

export interface McpEdgeOptions {
  subject: string;
  bodyLimit: number;
  /** The rate-limit bucket for this request, or undefined for none. */
  bucket: (ctx: Context) => RateBucket | undefined;
  /** Request headers the worker needs (lower-case). */
  forwardHeaders: readonly string[];
}

export interface RateBucket {
  key: string;
  policy: BucketPolicy;
}

const ALLOWED_METHODS = 'GET, POST, OPTIONS';

/** What CORS exposes to an allowed page, as @koa/cors writes the list. */
export const MCP_EXPOSE_HEADERS = ['WWW-Authenticate', 'Retry-After', 'X-Request-Id', 'Mcp-Session-Id'];

/**
 * Each check of the edge is a plain function returning its refusal, shared by the Koa middleware
 * below and the listener's lean path (leanMcp.ts), so both answer alike.
 */
export interface Refusal {
  error: RpcError;
  /** Response headers that go with it (Retry-After, Allow). */
  headers?: Record<string, string>;
}

/** Once the body parsed, an error about a single message carries that message's id. */
export const messageIdOf = (body: unknown): RpcId => (Array.isArray(body) ? null : salvageId(body));

function sendRpcError(ctx: Context, err: RpcError): void {
  ctx.status = err.httpStatus;
  ctx.body = rpcErrorBody(err, messageIdOf(ctx.state.rpcBody));
}

function refuse(ctx: Context, refusal: Refusal): never {
  if (refusal.headers) ctx.set(refusal.headers);
  throw refusal.error;
}

/** The answer for any failure at the edge: a JSON-RPC error with the right HTTP status. */
export function edgeFailure(deps: GatewayDeps, err: unknown, requestId: string): Refusal {
  if (err instanceof RpcError) return { error: err };
  if (err instanceof BodyError) {
    if (err.status === 400) {
      const parse = parseError(err.message);
      return { error: err.hint ? new RpcError(parse.code, parse.message, { hint: err.hint }, 400) : parse };
    }
    return {
      error: new RpcError(
        RPC.INVALID_REQUEST,
        err.message,
        { hint: err.status === 413 ? 'Send a smaller request.' : 'Send Content-Type: application/json.' },
        err.status,
      ),
    };
  }
  const answer = edgeAnswer(err);
  if (answer) {
    if (answer.log) deps.log.warn({ err, requestId }, 'mcp edge dependency unavailable');
    const data = { hint: answer.hint, ...(answer.retryAfterSec ? { retryAfterSec: answer.retryAfterSec } : {}) };
    return {
      error: new RpcError(answer.rpc, answer.message, data, answer.status),
      ...(answer.retryAfterSec ? { headers: { 'Retry-After': String(answer.retryAfterSec) } } : {}),
    };
  }
  // A worker's own failure was logged once, by that worker, with the request id.
  if (!(err instanceof WorkerFailedError)) deps.log.error({ err, requestId }, 'mcp edge failure');
  return { error: new RpcError(RPC.INTERNAL_ERROR, 'Internal error', { hint: `Quote request id ${requestId} if it persists.` }, 500) };
}

/** Turns every edge failure into a JSON-RPC error body with the right HTTP status. */
export function rpc_error_boundary(deps: GatewayDeps) {
  return async (ctx: Context, next: Next): Promise<void> => {
    try {
      await next();
    } catch (err) {
      const { error, headers } = edgeFailure(deps, err, ctx.state.requestId);
      if (headers) ctx.set(headers);
      sendRpcError(ctx, error);
    }
  };
}

/** The origin CORS names for a request's Origin header: itself when allowed, '' for none. */
export const corsOriginFor = (allowed: readonly string[], origin: string): string => (allowed.includes('*') || allowed.includes(origin) ? origin : '');

export function mcp_cors(deps: GatewayDeps): Middleware {
  const allowed = allowedOrigins(deps.config);
  return cors({
    origin: (ctx) => corsOriginFor(allowed, ctx.get('origin')),
    allowMethods: ALLOWED_METHODS,
    allowHeaders: ['Authorization', 'Content-Type', 'MCP-Protocol-Version', 'Mcp-Method', 'Mcp-Name', 'Mcp-Session-Id', 'Last-Event-ID'],
    exposeHeaders: MCP_EXPOSE_HEADERS,
    maxAge: 600,
  });
}

/** A present Origin header must be one we serve (DNS-rebinding defence); absent is fine. */
export function originRefusal(allowed: readonly string[], origin: string): Refusal | undefined {
  if (origin && !allowed.includes('*') && !allowed.includes(origin))
    return {
      error: new RpcError(
        RPC.INVALID_REQUEST,
        `Origin ${origin} is not allowed`,
        { hint: 'Call this endpoint from a server, or from a page on an allowed origin.' },
        403,
      ),
    };
  return undefined;
}

export function check_origin(deps: GatewayDeps) {
  const allowed = allowedOrigins(deps.config);
  return async (ctx: Context, next: Next): Promise<void> => {
    const refusal = originRefusal(allowed, ctx.get('origin'));
    if (refusal) refuse(ctx, refusal);
    return next();
  };
}

export async function allow_mcp_methods(ctx: Context, next: Next): Promise<void> {
  if (ctx.method !== 'GET' && ctx.method !== 'POST')
    refuse(ctx, {
      error: new RpcError(RPC.INVALID_REQUEST, `Method ${ctx.method} not allowed`, { hint: `Use POST for JSON-RPC, GET for the descriptor.` }, 405),
      headers: { Allow: ALLOWED_METHODS },
    });
  return next();
}

/** A batch longer than MCP_MAX_BATCH is refused whole, before it costs anything. */
export function batchRefusal(body: unknown, max: number): Refusal | undefined {
  if (Array.isArray(body) && body.length > max)
    return {
      error: new RpcError(
        RPC.INVALID_REQUEST,
        `Batch too large: a batch of ${body.length} items; the limit is ${max}`,
        { hint: `Send fewer items per batch: at most ${max}.`, limit: max },
        413,
      ),
    };
  return undefined;
}

export function limit_batch(max: number) {
  return async (ctx: Context, next: Next): Promise<void> => {
    const refusal = batchRefusal(ctx.state.rpcBody, max);
    if (refusal) refuse(ctx, refusal);
    return next();
  };
}

/** Every message of a batch is one request against the limit; runs after parsing, so it can count them. */
export async function rateRefusal(deps: GatewayDeps, b: RateBucket | undefined, body: unknown): Promise<Refusal | undefined> {
  return b ? takeForMessages(deps.limiter, b.key, b.policy, body) : undefined;
}

export function rate_limit(deps: GatewayDeps, bucket: McpEdgeOptions['bucket']) {
  return async (ctx: Context, next: Next): Promise<void> => {
    const refusal = await rateRefusal(deps, bucket(ctx), ctx.state.rpcBody);
    if (refusal) refuse(ctx, refusal);
    return next();
  };
}

export function read_json_rpc_body(limit: number, maxDepth: number) {
  return async (ctx: Context, next: Next): Promise<void> => {
    if (ctx.method === 'POST') {
      requireJsonContentType(ctx);
      ctx.state.rpcBody = parseJson(await readRawBody(ctx, limit), maxDepth);
    }
    return next();
  };
}

export function forward_to_workers(deps: GatewayDeps, subject: string, forwardHeaders: readonly string[]) {
  return async (ctx: Context): Promise<void> => {
    const reply = await forwardRequest(deps, ctx, subject, forwardHeaders, true);
    if (reply.elicit)
      return streamQuestion(deps, ctx, { ...reply, elicit: reply.elicit }, subject, forwardHeaders, (err) =>
        rpcErrorBody(edgeFailure(deps, err, ctx.state.requestId).error, messageIdOf(ctx.state.rpcBody)),
      );
    ctx.status = reply.status;
    for (const [k, v] of Object.entries(reply.headers)) ctx.set(k, v);
    if (reply.body !== undefined) replyBody(ctx, reply.raw ? String(reply.body) : reply.body);
    else emptyBody(ctx, reply.status);
  };
}

/** The whole pipeline of an MCP endpoint, in order. */
export function mcpEndpoint(deps: GatewayDeps, opts: McpEdgeOptions): Middleware[] {
  return [
    rpc_error_boundary(deps),
    mcp_cors(deps),
    check_origin(deps),
    allow_mcp_methods,
    // Bounded and parsed first (size, then nesting depth), so the limit can count batch items.
    read_json_rpc_body(opts.bodyLimit, deps.config.jsonMaxDepth),
    limit_batch(deps.config.mcpMaxBatch),
    rate_limit(deps, opts.bucket),
    forward_to_workers(deps, opts.subject, opts.forwardHeaders),
  ];
}
