// One HTTP exchange with the workspace MCP endpoint per stdin message: the headers, the
// negotiated protocol version, the request timeout, one bounded retry on 429, and every HTTP or
// network failure turned into the JSON-RPC error the client sees. This is the bridge's one
// boundary between HTTP and JSON-RPC errors.
import { setTimeout as sleep } from 'node:timers/promises';
import { RPC } from '../src/rpc/codes.js';
import type { Credential } from './credentials.js';
import type { Log } from './log.js';
import { describeCause } from './netError.js';
import type { BridgeOptions } from './options.js';
import type { RpcErrorObject } from './messages.js';
import { post as postOnce, type Answer } from './transport.js';

export type Exchange =
  /** A JSON-RPC body to deliver: one response or a batch of them. */
  | { kind: 'reply'; body: unknown }
  /** 202/204: the server accepted notifications and sent nothing back. */
  | { kind: 'empty' }
  /** One error for every request the message carried. */
  | { kind: 'failed'; error: RpcErrorObject };

type Attempt = Exchange | { kind: 'limited'; retryAfterSec: number; server?: RpcErrorObject };

/** What the upstream needs of the bridge's options, plus who it is, what it authenticates with and where it logs. */
export type UpstreamOptions = Pick<BridgeOptions, 'endpoint' | 'appUrl' | 'headers' | 'timeoutMs' | 'maxRetryWaitMs'> & {
  credential: Credential;
  userAgent: string;
  log: Log;
};

export class Upstream {
  /** From the `initialize` result; sent on every later request as MCP-Protocol-Version. */
  protocolVersion: string | undefined;
  private sessionId: string | undefined;

  private readonly url: URL;

  constructor(private readonly o: UpstreamOptions) {
    this.url = new URL(o.endpoint);
  }

  /**
   * POST one stdin message and interpret the answer. `stopWaiting` cuts a 429 wait short
   * (shutdown): the request is then answered -32029 at once instead of retried.
   */
  async exchange(payload: string, label: string, stopWaiting?: AbortSignal, routing?: Record<string, string>): Promise<Exchange> {
    let outcome = await this.attempt(payload, routing);
    if (outcome.kind !== 'limited') return outcome;
    const waitMs = outcome.retryAfterSec * 1000;
    if (waitMs <= this.o.maxRetryWaitMs && !stopWaiting?.aborted) {
      this.o.log.info(`${label}: rate limited (429); retrying once in ${outcome.retryAfterSec} s`);
      const waited = await sleep(waitMs, true, stopWaiting ? { signal: stopWaiting } : {}).catch(() => false);
      if (waited) outcome = await this.attempt(payload, routing);
    }
    if (outcome.kind !== 'limited') return outcome;
    this.o.log.warn(`${label}: rate limited (429); answered -32029`);
    return failed({
      code: RPC.RATE_LIMITED,
      message: outcome.server?.message ?? 'Rate limit exceeded',
      data: {
        ...outcome.server?.data,
        retryAfterSec: outcome.retryAfterSec,
        hint: `${outcome.server?.data?.hint ?? `Wait ${outcome.retryAfterSec} s before the next request.`} carecircle allows a fixed number of requests a minute per key.`,
        httpStatus: 429,
      },
    });
  }

  /** `routing`: a 2026-07-28 message's own version, method and name headers, in place of the negotiated version. */
  private headers(authorization: string | undefined, routing?: Record<string, string>): Record<string, string> {
    return {
      'user-agent': this.o.userAgent,
      ...this.o.headers,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...(authorization ? { authorization } : {}),
      ...(routing ?? (this.protocolVersion ? { 'mcp-protocol-version': this.protocolVersion } : {})),
      ...(this.sessionId && !routing ? { 'mcp-session-id': this.sessionId } : {}),
    };
  }

  /**
   * One POST. A 401 to a credential that can be renewed (a browser sign-in whose access token
   * expired or was refused) renews it and sends the message once more: a 401 means the server
   * did not act on it.
   */
  private async attempt(payload: string, routing?: Record<string, string>, mayRenew = true): Promise<Attempt> {
    const auth = await this.o.credential.authorization();
    if (!auth.ok) return failed(auth.error);
    const sent = await this.post(payload, auth.header, routing);
    if ('kind' in sent) return sent;
    if (sent.res.status === 401 && mayRenew && (await this.o.credential.renew(auth.header))) {
      this.o.log.debug('the server refused the access token; renewed it and sending again');
      return this.attempt(payload, routing, false);
    }
    return this.interpret(sent.res, sent.res.text);
  }

  private async post(payload: string, authorization: string | undefined, routing?: Record<string, string>): Promise<{ res: Answer } | Exchange> {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), this.o.timeoutMs);
    try {
      // Redirects are not followed: a POST turned into a GET, or a key sent elsewhere, would be worse than an error.
      return { res: await postOnce(this.url, this.headers(authorization, routing), payload, controller.signal) };
    } catch (err) {
      if (controller.signal.aborted)
        return failed({
          code: RPC.INTERNAL_ERROR,
          message: `carecircle did not answer within ${this.o.timeoutMs} ms`,
          data: { hint: `Check that the service is healthy (${this.o.appUrl}/readyz). If requests are legitimately slow, raise --timeout-ms.` },
        });
      const { text, code } = describeCause(err);
      return failed({ code: RPC.INTERNAL_ERROR, message: `Cannot reach carecircle at ${this.url.host}: ${text}`, data: { hint: unreachableHint(code) } });
    } finally {
      clearTimeout(timer);
    }
  }

  private interpret(res: Answer, text: string): Attempt {
    const status = res.status;
    const sessionId = res.headers.get('mcp-session-id');
    if (sessionId) this.sessionId = sessionId;
    const contentType = res.headers.get('content-type') ?? '';
    const body = parseBody(contentType, text);
    const server = singleError(body);
    const withStatus = (e: RpcErrorObject, hint?: string): RpcErrorObject => ({ ...e, data: { ...e.data, ...(hint ? { hint } : {}), httpStatus: status } });

    if (status === 401 || status === 403)
      return failed(
        withStatus(
          {
            code: RPC.UNAUTHORIZED,
            message: server?.message ?? (status === 401 ? 'Unauthorized' : 'Forbidden'),
            ...(server?.data ? { data: server.data } : {}),
          },
          this.o.credential.refusalHint(status, server),
        ),
      );
    if (status === 429) return { kind: 'limited', retryAfterSec: retryAfterSec(res.headers.get('retry-after'), server), ...(server ? { server } : {}) };
    if (status >= 300 && status < 400)
      return failed({
        code: RPC.INTERNAL_ERROR,
        message: `carecircle answered HTTP ${status}, a redirect to ${res.headers.get('location') ?? '(nowhere)'}`,
        data: { hint: 'Set CARECIRCLE_URL to the address it redirects to.', httpStatus: status },
      });
    if (status >= 200 && status < 300) {
      if (body === undefined) return { kind: 'empty' };
      if (body !== NOT_JSON) return { kind: 'reply', body };
    } else if (server) {
      // The server's own JSON-RPC error (400, 413, 503 -32030, …) says best what happened.
      return failed(withStatus(server));
    }
    if (status === 404)
      return failed({
        code: RPC.INTERNAL_ERROR,
        message: `No MCP endpoint at ${this.o.endpoint} (HTTP 404)`,
        data: { hint: "Set CARECIRCLE_URL to carecircle's app URL (APP_URL), for example http://localhost:8081.", httpStatus: status },
      });
    return failed({
      code: RPC.INTERNAL_ERROR,
      message: `carecircle answered HTTP ${status}${contentType ? ` (${contentType.split(';')[0]})` : ''} without a JSON-RPC message`,
      data: {
        hint: status >= 500 ? 'The service, or a proxy in front of it, failed; try again shortly.' : "Check that CARECIRCLE_URL points at carecircle's app.",
        httpStatus: status,
      },
    });
  }
}

const failed = (error: RpcErrorObject): Exchange => ({ kind: 'failed', error });

export const NOT_JSON = Symbol('not JSON');

/** The JSON body, the messages of an event stream, undefined when empty, NOT_JSON otherwise. */
export function parseBody(contentType: string, text: string): unknown {
  if (text.trim() === '') return undefined;
  if (contentType.toLowerCase().startsWith('text/event-stream')) {
    const messages: unknown[] = [];
    for (const event of text.split(/\r?\n\r?\n/)) {
      const data = event
        .split(/\r?\n/)
        .filter((l) => l.startsWith('data:'))
        .map((l) => l.slice(5).replace(/^ /, ''))
        .join('\n');
      if (!data) continue;
      try {
        messages.push(JSON.parse(data));
      } catch {
        return NOT_JSON;
      }
    }
    return messages.length === 0 ? undefined : messages.length === 1 ? messages[0] : messages;
  }
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return NOT_JSON;
  }
}

/** The error of a body that is one JSON-RPC error response. */
function singleError(body: unknown): RpcErrorObject | undefined {
  if (typeof body !== 'object' || body === null || Array.isArray(body) || !('error' in body)) return undefined;
  const error = (body as { error: unknown }).error;
  if (typeof error !== 'object' || error === null) return undefined;
  const { code, message, data } = error as Record<string, unknown>;
  if (typeof code !== 'number' || typeof message !== 'string') return undefined;
  return { code, message, ...(typeof data === 'object' && data !== null && !Array.isArray(data) ? { data: data as Record<string, unknown> } : {}) };
}

/** Seconds from Retry-After (seconds or an HTTP date), else the body's retryAfterSec, else 1. */
export function retryAfterSec(header: string | null, server?: RpcErrorObject): number {
  if (header && /^\d+$/.test(header.trim())) return Number(header.trim());
  if (header) {
    const at = Date.parse(header);
    if (!Number.isNaN(at)) return Math.max(0, Math.ceil((at - Date.now()) / 1000));
  }
  const fromBody = server?.data?.retryAfterSec;
  return typeof fromBody === 'number' && fromBody >= 0 ? Math.ceil(fromBody) : 1;
}

function unreachableHint(code: string | undefined): string {
  if (code === 'ECONNREFUSED')
    return 'Nothing is listening there: start carecircle (npm start), or set CARECIRCLE_URL to where it runs. The bridge keeps running and reaches it once it is up.';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return 'Check the host name in CARECIRCLE_URL, and your network.';
  if (code && /CERT|SSL|TLS|SELF_SIGNED|UNABLE_TO_VERIFY/.test(code))
    return "The server's TLS certificate was refused; check CARECIRCLE_URL, or the clock and certificate store of this machine.";
  return 'Check your network and CARECIRCLE_URL. The bridge keeps running; the next request tries again.';
}
