// The listener's lean path: the hot POST of the public directory's MCP endpoint answered by a plain
// node:http handler ahead of Koa. Koa's middleware chain was a fifth of the gateway's CPU on that
// request; this runs the same checks through the same functions (listenerBasics and mcpEndpoint
// are thin Koa wrappers around them) and hands every other request to Koa untouched.
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import Koa from 'koa';
import { allowedOrigins } from '../config.js';
import { RawJson } from '../bus/replies.js';
import type { HttpReplyEnvelope } from '../bus/envelopes.js';
import { parseJson, readBody, requireJsonType } from '../http/body.js';
import { metrics, requestRecorder } from '../metrics/index.js';
import { rpcErrorBody } from '../rpc/mcp.js';
import type { GatewayDeps } from './context.js';
import { emptyBody, forwardPlain, replyBody } from './forward.js';
import { hostRule, publicUrlOf, type PublicSurface } from './hostCheck.js';
import {
  batchRefusal,
  corsOriginFor,
  edgeFailure,
  MCP_EXPOSE_HEADERS,
  messageIdOf,
  originRefusal,
  rateRefusal,
  type RateBucket,
  type Refusal,
} from './mcpEdge.js';
import { compress_body, logAnswered, requestIdFor } from './middleware.js';

/** Answers the request and says true, or says false and leaves it alone for Koa. */
export type LeanHandler = (req: IncomingMessage, res: ServerResponse) => boolean;

export interface LeanRoute {
  /** The one path it serves, exactly as the request line carries it (no query). */
  path: string;
  subject: string;
  bodyLimit: number;
  bucket: (who: { ip: string; authorization: string }) => RateBucket | undefined;
  forwardHeaders: readonly string[];
}

/** A request header as Koa's ctx.get reads it: '' when absent. */
const header = (req: IncomingMessage, name: string): string => {
  const value = req.headers[name];
  return value === undefined ? '' : String(value);
};

/** The client address as Koa's ctx.ip has it: the first X-Forwarded-For entry behind a trusted proxy. */
const clientIp = (req: IncomingMessage, trustProxy: boolean): string =>
  (trustProxy && header(req, 'x-forwarded-for').split(',', 1)[0]!.trim()) || req.socket.remoteAddress || '';

const JSON_TYPE = 'application/json; charset=utf-8';
const EXPOSED = MCP_EXPOSE_HEADERS.join(',');

function end(res: ServerResponse, status: number, type: string | undefined, payload: string | Buffer): void {
  res.statusCode = status;
  if (type) res.setHeader('Content-Type', type);
  res.setHeader('Content-Length', typeof payload === 'string' ? Buffer.byteLength(payload) : payload.length);
  res.end(payload);
}

function sendRefusal(res: ServerResponse, refusal: Refusal, body: unknown): void {
  for (const [k, v] of Object.entries(refusal.headers ?? {})) res.setHeader(k, v);
  end(res, refusal.error.httpStatus, JSON_TYPE, JSON.stringify(rpcErrorBody(refusal.error, messageIdOf(body))));
}

/** The worker's reply, written as forward_to_workers and Koa's body rules write it. */
function sendReply(res: ServerResponse, reply: HttpReplyEnvelope): void {
  for (const [k, v] of Object.entries(reply.headers ?? {})) res.setHeader(k, v);
  const set = res.getHeader('content-type');
  // A JSON body keeps a JSON type the worker named (Koa's rule), else gets the plain one.
  const jsonType = set && /\bjson\b/i.test(String(set).split(';', 1)[0]!) ? undefined : JSON_TYPE;
  const body = reply.body !== undefined && reply.raw ? String(reply.body) : reply.body;
  if (body === undefined) {
    res.removeHeader('Content-Type');
    if (reply.status === 204 || reply.status === 304) {
      res.removeHeader('Content-Length');
      res.removeHeader('Transfer-Encoding');
      res.statusCode = reply.status;
      res.end();
    } else end(res, reply.status, undefined, '');
  } else if (body instanceof RawJson) {
    end(res, reply.status, jsonType, body.utf8 ? Buffer.from(body.utf8.buffer, body.utf8.byteOffset, body.utf8.byteLength) : body.json);
  } else if (typeof body === 'string')
    end(res, reply.status, set ? undefined : /^\s*</.test(body) ? 'text/html; charset=utf-8' : 'text/plain; charset=utf-8', body);
  else if (Buffer.isBuffer(body)) end(res, reply.status, set ? undefined : 'application/octet-stream', body);
  else end(res, reply.status, jsonType, JSON.stringify(body));
}

/**
 * A reply for a client that takes a compressed body: written by a Koa app holding only the
 * listeners' compression step and the MCP edge's reply step, so encoding, threshold and headers
 * are the Koa path's own. A client that sends no Accept-Encoding keeps the plain writer above.
 */
function compressingWriter(): (req: IncomingMessage, res: ServerResponse, reply: HttpReplyEnvelope) => Promise<void> {
  const replies = new WeakMap<IncomingMessage, HttpReplyEnvelope>();
  const app = new Koa();
  app.silent = true;
  app.use(compress_body);
  app.use((ctx) => {
    const reply = replies.get(ctx.req)!;
    ctx.status = reply.status;
    for (const [k, v] of Object.entries(reply.headers ?? {})) ctx.set(k, v);
    if (reply.body !== undefined) replyBody(ctx, reply.raw ? String(reply.body) : reply.body);
    else emptyBody(ctx, reply.status);
  });
  const handle = app.callback();
  return async (req, res, reply) => {
    replies.set(req, reply);
    await handle(req, res);
  };
}

/** The lean handler of `surface` for `routes`; undefined when there are none. */
export function leanMcp(deps: GatewayDeps, surface: PublicSurface, routes: readonly LeanRoute[]): LeanHandler | undefined {
  if (!routes.length) return undefined;
  const byPath = new Map(routes.map((r) => [r.path, r]));
  const hosts = hostRule(publicUrlOf(deps.config, surface), deps.config.trustProxy);
  const allowed = allowedOrigins(deps.config);
  const record = requestRecorder(surface);
  const taken = metrics.httpLean.labels({ surface });
  const { trustProxy, jsonMaxDepth, mcpMaxBatch } = deps.config;
  const sendCompressible = compressingWriter();

  async function answer(route: LeanRoute, req: IncomingMessage, res: ServerResponse): Promise<void> {
    const started = performance.now();
    // listenerBasics: the request id, echoed.
    const requestId = requestIdFor(header(req, 'x-request-id'));
    res.setHeader('X-Request-Id', requestId);
    // compress_body, then mcp_cors: Vary always, the CORS headers for an allowed Origin.
    res.setHeader('Vary', 'Accept-Encoding, Origin');
    const origin = header(req, 'origin');
    const corsOrigin = corsOriginFor(allowed, origin);
    if (corsOrigin) {
      res.setHeader('Access-Control-Allow-Origin', corsOrigin);
      res.setHeader('Access-Control-Expose-Headers', EXPOSED);
    }
    let body: unknown;
    try {
      let refusal = originRefusal(allowed, origin);
      if (!refusal) {
        requireJsonType(header(req, 'content-type'));
        body = parseJson(await readBody(req, route.bodyLimit), jsonMaxDepth);
        const ip = clientIp(req, trustProxy);
        refusal = batchRefusal(body, mcpMaxBatch) ?? (await rateRefusal(deps, route.bucket({ ip, authorization: header(req, 'authorization') }), body));
        if (!refusal) {
          const request = { method: 'POST', path: route.path, query: {}, header: (name: string) => header(req, name), body, clientIp: ip, requestId };
          const reply = await forwardPlain(deps, request, route.subject, route.forwardHeaders, true);
          if (header(req, 'accept-encoding')) await sendCompressible(req, res, reply);
          else sendReply(res, reply);
        }
      }
      if (refusal) sendRefusal(res, refusal, body);
    } catch (err) {
      if (res.headersSent) res.destroy();
      else sendRefusal(res, edgeFailure(deps, err, requestId), body);
    }
    record(route.path, 'POST', res.statusCode, started);
    logAnswered(deps, { surface, requestId, method: 'POST', path: route.path, status: res.statusCode, started });
  }

  return (req, res) => {
    if (req.method !== 'POST') return false;
    const route = byPath.get(req.url ?? '');
    // A foreign Host goes on to Koa, whose refuse_foreign_host answers it.
    if (!route || hosts.foreignHost(req) !== undefined) return false;
    taken.inc();
    answer(route, req, res).catch((err: unknown) => {
      deps.log.error({ err }, `${surface} lean path failure`);
      res.destroy();
    });
    return true;
  };
}

/** A listener that offers each request to `lean` first, then to the Koa app. */
export function leanAhead(app: { callback(): RequestListener }, lean: LeanHandler | undefined): { callback(): RequestListener } {
  if (!lean) return app;
  return {
    callback() {
      const koa = app.callback();
      return (req, res) => {
        if (!lean(req, res)) void koa(req, res);
      };
    },
  };
}
