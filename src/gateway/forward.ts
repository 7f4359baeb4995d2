// Forwarding a Koa request to its slice's workers (the retry loop is the bus's `forward`).
import type { Context } from 'koa';
import type { HttpRequestEnvelope } from '../bus/envelopes.js';
import { forward } from '../bus/forward.js';
import { RawJson } from '../bus/replies.js';
import type { GatewayDeps } from './context.js';

/** Build the envelope for this Koa request (headers filtered to `names`) and forward it. */
export function forwardRequest(deps: GatewayDeps, ctx: Context, subject: string, names: readonly string[], idempotent: boolean) {
  const request: ForwardedRequest = {
    method: ctx.method,
    path: ctx.path,
    query: Object.fromEntries(Object.entries(ctx.query).map(([k, v]) => [k, Array.isArray(v) ? (v[0] ?? '') : (v ?? '')])),
    header: (name) => ctx.get(name),
    body: ctx.state.rpcBody,
    clientIp: ctx.ip,
    requestId: ctx.state.requestId,
  };
  return forwardPlain(deps, request, subject, names, idempotent);
}

/** A request as the gateway hands it on, read from Koa's context or from the bare request. */
export interface ForwardedRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  /** A request header's value, '' when absent (as Koa's ctx.get). */
  header: (name: string) => string;
  body: unknown;
  clientIp: string;
  requestId: string;
  /** The person's answer to the question a worker put on this call's stream (questionStream.ts). */
  answer?: HttpRequestEnvelope['answer'];
}

/** forwardRequest for a request already taken apart. */
export function forwardPlain(deps: GatewayDeps, request: ForwardedRequest, subject: string, names: readonly string[], idempotent: boolean) {
  const headers: Record<string, string> = {};
  for (const name of names) {
    const value = request.header(name);
    if (value) headers[name] = value;
  }
  const envelope: HttpRequestEnvelope = {
    v: 1,
    method: request.method,
    path: request.path,
    query: request.query,
    headers,
    body: request.body,
    clientIp: request.clientIp,
    requestId: request.requestId,
    encodedBody: true,
    ...(request.answer ? { answer: request.answer } : {}),
  };
  return forward(deps.bus, subject, envelope, {
    timeoutMs: deps.config.busTimeoutMs,
    retryWindowMs: deps.config.gatewayRetryWindowMs,
    idempotent,
    maxAttempts: deps.config.gatewayMaxAttempts,
  });
}

/** A worker's body: one it encoded as JSON is sent as Koa sends an object (JSON type unless a JSON type is set). */
export function replyBody(ctx: Context, body: unknown): void {
  if (!(body instanceof RawJson)) {
    ctx.body = body;
    return;
  }
  if (!ctx.type || !/\bjson\b/i.test(ctx.type)) ctx.type = 'json';
  // The bytes as they came off the bus, when they did: no decoding into a string to encode again.
  const bytes = body.utf8;
  ctx.body = bytes ? Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength) : body.json;
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
