// JSON-RPC as the bridge sees it: what one stdin value holds, the errors the bridge answers
// itself, and recovering a request id from a line that could not be parsed.
import { RPC } from '../src/rpc/codes.js';

export type RpcId = string | number | null;

export interface RpcErrorObject {
  code: number;
  message: string;
  data?: Record<string, unknown>;
}

export interface RpcResponse {
  jsonrpc: '2.0';
  id: RpcId;
  result?: unknown;
  error?: RpcErrorObject;
}

export type Message =
  /** Expects exactly one reply carrying `id`. */
  | { kind: 'request'; id: RpcId; method: string; value: Record<string, unknown> }
  /** Forwarded, never answered. */
  | { kind: 'notification'; method: string; value: Record<string, unknown> }
  /** A reply from the client: the server sends no requests in v1, so there is nothing to route it to. */
  | { kind: 'response'; id: RpcId }
  /** Answered by the bridge with -32600 and whatever id could be salvaged. */
  | { kind: 'invalid'; id: RpcId; reason: string };

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isId = (v: unknown): v is RpcId => v === null || typeof v === 'string' || (typeof v === 'number' && Number.isFinite(v));

export function classify(value: unknown): Message {
  if (!isObject(value))
    return {
      kind: 'invalid',
      id: null,
      reason: `expected a JSON-RPC object, got ${Array.isArray(value) ? 'an array' : value === null ? 'null' : typeof value}`,
    };
  const hasId = 'id' in value && value.id !== undefined;
  if (hasId && !isId(value.id)) return { kind: 'invalid', id: null, reason: 'id must be a string, a number or null' };
  const id = hasId ? (value.id as RpcId) : null;
  if (value.jsonrpc !== '2.0') return { kind: 'invalid', id, reason: 'jsonrpc must be "2.0"' };
  if (!('method' in value) && hasId && ('result' in value || 'error' in value)) return { kind: 'response', id };
  if (typeof value.method !== 'string' || value.method === '') return { kind: 'invalid', id, reason: 'method must be a non-empty string' };
  return hasId ? { kind: 'request', id, method: value.method, value } : { kind: 'notification', method: value.method, value };
}

export const rpcError = (id: RpcId, error: RpcErrorObject): RpcResponse => ({ jsonrpc: '2.0', id, error });

export const invalidRequest = (id: RpcId, reason: string): RpcResponse =>
  rpcError(id, {
    code: RPC.INVALID_REQUEST,
    message: `Invalid Request: ${reason}`,
    data: { hint: 'Send JSON-RPC 2.0: {"jsonrpc": "2.0", "id": …, "method": "…", "params": {…}}.' },
  });

export const parseError = (id: RpcId, detail: string): RpcResponse =>
  rpcError(id, {
    code: RPC.PARSE_ERROR,
    message: `Parse error: ${detail}`,
    data: { hint: 'Send one JSON-RPC message (or one batch array) per line, as UTF-8 JSON.' },
  });

/** A stable map key for an id: 1 and "1" are different ids. */
export const idKey = (id: RpcId): string => JSON.stringify(id);

// ---------------------------------------------------------------------------------------------
// Recovering the id of a line that is not JSON (truncated) or too long to parse, so the client's
// pending request gets its error instead of waiting for a timeout.

const SCALAR_ID = String.raw`("(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|null)`;
// Clients that build the envelope last (the MCP SDK does) end the line with `"jsonrpc":"2.0","id":N}`.
// Requiring the jsonrpc member beside the id keeps a nested "id" in params from being taken for it.
const TAIL_PATTERNS = [
  new RegExp(String.raw`"jsonrpc"\s*:\s*"2\.0"\s*,\s*"id"\s*:\s*${SCALAR_ID}\s*\}\s*$`),
  new RegExp(String.raw`"id"\s*:\s*${SCALAR_ID}\s*,\s*"jsonrpc"\s*:\s*"2\.0"\s*\}\s*$`),
];

/**
 * The top-level `id` of a JSON object from its first bytes, reading members in order; undefined
 * when not found. `whole`: the text is the entire line, so a number ending it is complete.
 */
export function idFromHead(head: string, whole = false): RpcId | undefined {
  let i = 0;
  const ws = () => {
    while (i < head.length && ' \t\r\n'.includes(head[i]!)) i++;
  };
  const string = (): string | undefined => {
    if (head[i] !== '"') return undefined;
    const start = i++;
    while (i < head.length && head[i] !== '"') i += head[i] === '\\' ? 2 : 1;
    if (i >= head.length) return undefined;
    i++;
    try {
      return JSON.parse(head.slice(start, i)) as string;
    } catch {
      return undefined;
    }
  };
  /** Skips one value of any kind; false when the head ends inside it. */
  const skipValue = (): boolean => {
    let depth = 0;
    while (i < head.length) {
      const c = head[i]!;
      if (c === '"') {
        if (string() === undefined) return false;
        if (depth === 0) return true;
        continue;
      }
      if (c === '{' || c === '[') depth++;
      else if (c === '}' || c === ']') {
        if (depth === 0) return true;
        depth--;
        if (depth === 0) {
          i++;
          return true;
        }
      } else if (depth === 0 && c === ',') return true;
      i++;
    }
    return false;
  };
  ws();
  if (head[i] !== '{') return undefined;
  i++;
  for (;;) {
    ws();
    const key = string();
    if (key === undefined) return undefined;
    ws();
    if (head[i] !== ':') return undefined;
    i++;
    ws();
    if (key === 'id') {
      const m = new RegExp(`^${SCALAR_ID}`).exec(head.slice(i, i + 1024));
      if (!m) return undefined;
      const after = head.slice(i + m[0].length).trimStart();
      // A number cut off at the end of a head could be the start of a longer one.
      if (after === '' ? !whole : !/^[,}]/.test(after)) return undefined;
      return JSON.parse(m[1]!) as RpcId;
    }
    if (!skipValue()) return undefined;
    ws();
    if (head[i] !== ',') return undefined;
    i++;
  }
}

export function idFromTail(tail: string): RpcId | undefined {
  for (const pattern of TAIL_PATTERNS) {
    const m = pattern.exec(tail);
    if (m) return JSON.parse(m[1]!) as RpcId;
  }
  return undefined;
}

/** The id of a line that could not be parsed, from its head or its tail; undefined when unknown. */
export function recoverId(head: string, tail: string, whole = false): RpcId | undefined {
  return idFromHead(head, whole) ?? idFromTail(tail);
}
