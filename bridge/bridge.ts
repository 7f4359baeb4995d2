// The bridge proper: each stdin frame becomes at most one POST, and each request id gets exactly
// one reply line on stdout, whatever the server, the network or the client sent.
import { RPC } from '../src/rpc/codes.js';
import { routingHeaders } from './era.js';
import type { Frame } from './framing.js';
import type { Log } from './log.js';
import {
  classify,
  idKey,
  invalidRequest,
  parseError,
  recoverId,
  rpcError,
  type Message,
  type RpcErrorObject,
  type RpcId,
  type RpcResponse,
} from './messages.js';
import type { Exchange, Upstream } from './upstream.js';

type Forwarded = Extract<Message, { kind: 'request' | 'notification' }>;

export class Bridge {
  private readonly inFlight = new Set<Promise<void>>();
  /** Ids of requests being served, so an id recovered from a broken line never answers one of them. */
  private readonly pending = new Map<string, number>();
  private readonly stopWaiting = new AbortController();

  constructor(
    private readonly upstream: Upstream,
    /** Writes one line (without its newline) to stdout. */
    private readonly writeLine: (line: string) => void,
    private readonly log: Log,
  ) {}

  get busy(): number {
    return this.inFlight.size;
  }

  handle(frame: Frame): void {
    if (frame.kind === 'oversized') {
      this.log.warn(`dropped a ${frame.bytes}-byte line (the limit is 1 MiB)`);
      this.write(parseError(this.safeId(recoverId(frame.head, frame.tail)), `the message is ${frame.bytes} bytes; the bridge reads lines of at most 1 MiB`));
      return;
    }
    const text = frame.text.trim();
    if (text === '') return;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (err) {
      this.log.warn(`stdin line is not JSON (${(err as Error).message})`);
      this.write(parseError(this.safeId(recoverId(text, text.slice(-512), true)), 'the line is not valid JSON'));
      return;
    }
    if (Array.isArray(value)) this.handleBatch(value, text);
    else this.handleSingle(classify(value), text);
  }

  /** Stop reading has happened: cut 429 waits short, then wait for every reply to be written. */
  async drain(): Promise<void> {
    this.stopWaiting.abort();
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }

  private handleSingle(msg: Message, text: string): void {
    if (msg.kind === 'invalid') return this.write(invalidRequest(msg.id, msg.reason));
    if (msg.kind === 'response') return this.log.debug(`ignored a response from the client (id ${idKey(msg.id)}): the server sends no requests`);
    this.log.debug(`→ ${label(msg)}`);
    this.track([msg], false, async () => {
      const exchange = await this.upstream.exchange(text, label(msg), this.stopWaiting.signal, routingHeaders(msg.value, msg.method));
      if (msg.kind === 'notification') {
        if (exchange.kind === 'failed') this.log.warn(`${msg.method} (notification) failed: ${exchange.error.message}`);
        return;
      }
      const reply = replyFor(msg.id, exchange, singleBody);
      if (msg.method === 'initialize') this.noteVersion(reply);
      if (reply.error) this.log.warn(`${label(msg)}: ${reply.error.code} ${reply.error.message}`);
      this.write(reply);
    });
  }

  private handleBatch(values: unknown[], text: string): void {
    if (values.length === 0) return this.write(invalidRequest(null, 'an empty batch'));
    const messages = values.map(classify);
    const forwarded = messages.filter((m): m is Forwarded => m.kind === 'request' || m.kind === 'notification');
    const local = (m: Message): RpcResponse | undefined => (m.kind === 'invalid' ? invalidRequest(m.id, m.reason) : undefined);
    if (forwarded.length === 0) {
      const replies = messages.map(local).filter((r): r is RpcResponse => r !== undefined);
      if (replies.length > 0) this.write(replies);
      return;
    }
    // Only what the server should see is forwarded; the original text when that is everything.
    const payload = forwarded.length === values.length ? text : JSON.stringify(forwarded.map((m) => m.value));
    this.log.debug(`→ batch of ${forwarded.length}`);
    this.track(forwarded, true, async () => {
      const exchange = await this.upstream.exchange(payload, `batch of ${forwarded.length}`, this.stopWaiting.signal);
      const byId = exchange.kind === 'reply' ? indexResponses(exchange.body) : new Map<string, RpcResponse[]>();
      const replies: RpcResponse[] = [];
      for (const m of messages) {
        if (m.kind === 'invalid') replies.push(local(m)!);
        else if (m.kind === 'request') replies.push(replyFor(m.id, exchange, () => byId.get(idKey(m.id))?.shift()));
      }
      if (exchange.kind === 'failed') this.log.warn(`batch of ${forwarded.length}: ${exchange.error.code} ${exchange.error.message}`);
      if (replies.length > 0) this.write(replies);
    });
  }

  private noteVersion(reply: RpcResponse): void {
    const version = (reply.result as { protocolVersion?: unknown } | undefined)?.protocolVersion;
    if (typeof version === 'string' && version !== this.upstream.protocolVersion) {
      this.upstream.protocolVersion = version;
      this.log.info(`negotiated MCP ${version}`);
    }
  }

  private track(messages: Forwarded[], batch: boolean, work: () => Promise<void>): void {
    const ids = messages.flatMap((m) => (m.kind === 'request' ? [idKey(m.id)] : []));
    for (const k of ids) this.pending.set(k, (this.pending.get(k) ?? 0) + 1);
    const done = work()
      .catch((err: unknown) => {
        // Not expected (every failure is an Exchange), but a request must never go unanswered.
        this.log.error(`internal error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
        const error: RpcErrorObject = {
          code: RPC.INTERNAL_ERROR,
          message: `carecircle-mcp internal error: ${err instanceof Error ? err.message : String(err)}`,
        };
        const replies = messages.flatMap((m) => (m.kind === 'request' ? [rpcError(m.id, error)] : []));
        if (replies.length > 0) this.write(batch ? replies : replies[0]!);
      })
      .finally(() => {
        for (const k of ids) {
          const n = (this.pending.get(k) ?? 1) - 1;
          if (n > 0) this.pending.set(k, n);
          else this.pending.delete(k);
        }
        this.inFlight.delete(done);
      });
    this.inFlight.add(done);
  }

  /** A recovered id, unless a request with that id is in flight (it will get its own reply). */
  private safeId(id: RpcId | undefined): RpcId {
    return id === undefined || id === null || this.pending.has(idKey(id)) ? null : id;
  }

  private write(value: RpcResponse | RpcResponse[]): void {
    // JSON.stringify escapes every line break inside strings: one message is always one line.
    this.writeLine(JSON.stringify(value));
  }
}

const label = (msg: Forwarded): string => (msg.kind === 'request' ? `${msg.method} (id ${idKey(msg.id)})` : msg.method);

/** The body of a single-message exchange, if it is one response. */
function singleBody(exchange: Exchange): RpcResponse | undefined {
  if (exchange?.kind !== 'reply') return undefined;
  const body = exchange.body;
  if (Array.isArray(body)) return body.length === 1 ? asResponse(body[0]) : undefined;
  return asResponse(body);
}

/**
 * The one reply for request `id`: the server's response (with `id` set, so a server that lost
 * it cannot break the pairing), or the exchange's error, or a -32603 saying none came.
 */
function replyFor(id: RpcId, exchange: Exchange, find: (exchange: Exchange) => RpcResponse | undefined): RpcResponse {
  if (exchange.kind === 'failed') return rpcError(id, exchange.error);
  const found = find(exchange);
  if (found) {
    if (found.error) return rpcError(id, found.error);
    return { jsonrpc: '2.0', id, result: found.result };
  }
  // A batch refused as a whole (one error, id null) applies to each of its requests.
  const whole = exchange.kind === 'reply' && !Array.isArray(exchange.body) ? asResponse(exchange.body) : undefined;
  if (whole?.error) return rpcError(id, whole.error);
  return rpcError(id, {
    code: RPC.INTERNAL_ERROR,
    message: 'carecircle sent no reply to this request',
    data: { hint: 'Try again; report it if it persists.' },
  });
}

function asResponse(value: unknown): RpcResponse | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const v = value as Record<string, unknown>;
  if ('result' in v) return { jsonrpc: '2.0', id: (v.id ?? null) as RpcId, result: v.result };
  const e = v.error as Record<string, unknown> | undefined;
  if (e && typeof e.code === 'number' && typeof e.message === 'string')
    return { jsonrpc: '2.0', id: (v.id ?? null) as RpcId, error: e as unknown as RpcErrorObject };
  return undefined;
}

function indexResponses(body: unknown): Map<string, RpcResponse[]> {
  const byId = new Map<string, RpcResponse[]>();
  for (const item of Array.isArray(body) ? body : [body]) {
    const r = asResponse(item);
    if (!r) continue;
    const k = idKey(r.id);
    byId.set(k, [...(byId.get(k) ?? []), r]);
  }
  return byId;
}
