// The edge of the site and app JSON APIs and pages: ApiError bodies, method check, rate limit,
// body bounds, JSON parsing and forwarding. Each step is one small middleware.
import type { Context, Middleware, Next } from 'koa';
import type { BucketPolicy } from '../limits/limiter.js';
import { sendApiError } from '../http/apiError.js';
import { BodyError, parseJson, readRawBody, requireJsonContentType } from '../http/body.js';
import type { GatewayDeps } from './context.js';
import { WorkerFailedError } from '../bus/forward.js';
import { edgeAnswer } from './failures.js';
import { emptyBody, forwardRequest, replyBody } from './forward.js';
import { countRateLimited } from '../metrics/index.js';

export class EdgeRefusal extends Error {
  override name = 'EdgeRefusal';
  constructor(
    readonly status: number,
    readonly code: 'METHOD_NOT_ALLOWED' | 'RATE_LIMITED' | 'FORBIDDEN',
    message: string,
    readonly hint: string,
  ) {
    super(message);
  }
}

export interface ApiEdgeOptions {
  subject: string;
  /** Allowed HTTP methods (HEAD is allowed with GET). */
  methods: readonly string[];
  bodyLimit?: number;
  /** The rate-limit bucket for this request, or undefined for none. */
  bucket?: (ctx: Context) => { key: string; policy: BucketPolicy } | undefined;
  /** Request headers the worker needs (lower-case); `cookie` and `authorization` when it authenticates. */
  forwardHeaders?: readonly string[];
  /** Safe to send again after a worker timeout (true for reads). */
  idempotent?: boolean;
  /** Same-origin protection of the route's changes: the accepted origins and the refusal's hint. */
  sameOrigin?: { origins: readonly string[]; allowMissing: boolean; hint: string };
}

/** Turns every edge failure into an ApiError body (both forms) with the right status. */
export function api_error_boundary(deps: GatewayDeps) {
  return async (ctx: Context, next: Next): Promise<void> => {
    try {
      await next();
    } catch (err) {
      if (err instanceof EdgeRefusal) return sendApiError(ctx, err.status, err.code, err.message, err.hint);
      if (err instanceof BodyError) {
        if (err.status === 413) return sendApiError(ctx, 413, 'PAYLOAD_TOO_LARGE', err.message, 'Send a smaller body.');
        if (err.status === 415) return sendApiError(ctx, 415, 'UNSUPPORTED_MEDIA_TYPE', err.message, 'Send Content-Type: application/json.');
        return sendApiError(ctx, 400, 'BAD_REQUEST', err.message, err.hint ?? 'Send one JSON object as the body.');
      }
      const answer = edgeAnswer(err);
      if (answer) {
        if (answer.log) deps.log.warn({ err, requestId: ctx.state.requestId }, 'api edge dependency unavailable');
        if (answer.retryAfterSec) ctx.set('Retry-After', String(answer.retryAfterSec));
        return sendApiError(ctx, answer.status, answer.api, answer.message, answer.hint);
      }
      // A worker's own failure was logged once, by that worker, with the request id.
      if (!(err instanceof WorkerFailedError)) deps.log.error({ err, requestId: ctx.state.requestId }, 'api edge failure');
      sendApiError(ctx, 500, 'INTERNAL', 'Something went wrong on our side', `Try again; quote request id ${ctx.state.requestId} if it persists.`);
    }
  };
}

export function allow_methods(methods: readonly string[]) {
  const allowed = methods.includes('GET') && !methods.includes('HEAD') ? [...methods, 'HEAD'] : methods;
  return async (ctx: Context, next: Next): Promise<void> => {
    if (!allowed.includes(ctx.method)) {
      ctx.set('Allow', allowed.join(', '));
      throw new EdgeRefusal(405, 'METHOD_NOT_ALLOWED', `Method ${ctx.method} is not allowed on ${ctx.path}`, `Use ${methods.join(' or ')}.`);
    }
    return next();
  };
}

export function api_rate_limit(deps: GatewayDeps, bucket: ApiEdgeOptions['bucket']) {
  return async (ctx: Context, next: Next): Promise<void> => {
    const b = bucket?.(ctx);
    if (b) {
      const taken = await deps.limiter.take(b.key, b.policy);
      if (!taken.allowed) {
        countRateLimited(b.key);
        ctx.set('Retry-After', String(taken.retryAfterSec));
        throw new EdgeRefusal(429, 'RATE_LIMITED', 'Too many requests', `Wait ${taken.retryAfterSec} s and try again.`);
      }
    }
    return next();
  };
}

/** Methods that change something: the ones a foreign page must not send with the visitor's cookie. */
const CHANGES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * A change sent from another site's page is refused (CSRF). Browsers always send Origin on a POST;
 * `null` (a sandboxed frame, a redirect) is as foreign as any other.
 */
export function require_same_origin(rule: ApiEdgeOptions['sameOrigin']) {
  return async (ctx: Context, next: Next): Promise<void> => {
    if (rule && CHANGES.has(ctx.method)) {
      const origin = ctx.get('origin');
      if (origin ? !rule.origins.includes(origin) : !rule.allowMissing) throw new EdgeRefusal(403, 'FORBIDDEN', 'Cross-origin request refused', rule.hint);
    }
    return next();
  };
}

/** JSON bodies on POST/PUT/PATCH/DELETE with a body; forms are read as text for the worker to parse. */
export function read_api_body(limit: number, maxDepth: number) {
  return async (ctx: Context, next: Next): Promise<void> => {
    if (['POST', 'PUT', 'PATCH', 'DELETE'].includes(ctx.method)) {
      const type = (ctx.get('content-type') || '').split(';')[0]?.trim().toLowerCase();
      const raw = await readRawBody(ctx, limit);
      // An empty body (a bare POST to sign out or revoke) needs no content type.
      if (raw.length === 0) ctx.state.rpcBody = undefined;
      else if (type === 'application/x-www-form-urlencoded') ctx.state.rpcBody = Object.fromEntries(new URLSearchParams(raw.toString('utf8')));
      else {
        requireJsonContentType(ctx);
        ctx.state.rpcBody = parseJson(raw, maxDepth);
      }
    }
    return next();
  };
}

export function forward_api(deps: GatewayDeps, opts: ApiEdgeOptions) {
  return async (ctx: Context): Promise<void> => {
    const reply = await forwardRequest(deps, ctx, opts.subject, opts.forwardHeaders ?? [], opts.idempotent ?? ctx.method === 'GET');
    ctx.status = reply.status;
    for (const [k, v] of Object.entries(reply.headers)) {
      if (k.toLowerCase() === 'set-cookie') ctx.append('Set-Cookie', v.split('\n'));
      else ctx.set(k, v);
    }
    if (reply.body !== undefined) replyBody(ctx, !reply.raw ? reply.body : reply.base64 ? Buffer.from(String(reply.body), 'base64') : String(reply.body));
    else emptyBody(ctx, reply.status);
  };
}

/** The whole pipeline of a JSON API route or page, in order. */
export function apiEndpoint(deps: GatewayDeps, opts: ApiEdgeOptions): Middleware[] {
  return [
    api_error_boundary(deps),
    allow_methods(opts.methods),
    api_rate_limit(deps, opts.bucket),
    read_api_body(opts.bodyLimit ?? 64 * 1024, deps.config.jsonMaxDepth),
    require_same_origin(opts.sameOrigin),
    forward_api(deps, opts),
  ];
}
