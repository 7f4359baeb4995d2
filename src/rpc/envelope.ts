// JSON-RPC 2.0 envelopes (SPEC "JSON-RPC request/response"), parsed with zod.
import { z } from 'zod';

export const rpcId = z.union([z.string(), z.number(), z.null()]);
export type RpcId = z.infer<typeof rpcId>;

export const rpcRequest = z.object({
  jsonrpc: z.literal('2.0'),
  id: rpcId.optional(),
  method: z.string().min(1),
  params: z.record(z.string(), z.unknown()).optional(),
});
export type RpcRequest = z.infer<typeof rpcRequest>;

const REQUEST_KEYS = new Set(['jsonrpc', 'id', 'method', 'params']);
export const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * A JSON-RPC request checked by hand, as sent by every client: zod's parse (which copies the
 * message and its params) runs only for one that fails here or carries other members, to name
 * what is wrong or drop them.
 */
export function parseRpcRequest(raw: unknown): ReturnType<typeof rpcRequest.safeParse> {
  if (isPlainObject(raw) && raw.jsonrpc === '2.0' && typeof raw.method === 'string' && raw.method.length > 0) {
    const { id, params } = raw;
    const idOk = id === undefined || id === null || typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id));
    let plain = idOk && (params === undefined || isPlainObject(params));
    for (const k in raw) if (!REQUEST_KEYS.has(k)) plain = false;
    if (plain) return { success: true, data: raw as RpcRequest };
  }
  return rpcRequest.safeParse(raw);
}

export interface RpcSuccess {
  jsonrpc: '2.0';
  id: RpcId;
  result: Record<string, unknown>;
}
export interface RpcFailure {
  jsonrpc: '2.0';
  id: RpcId;
  error: { code: number; message: string; data?: Record<string, unknown> };
}
export type RpcResponse = RpcSuccess | RpcFailure;

/** A message without an `id` member is a notification: it never gets a response. */
export const isNotification = (msg: RpcRequest): boolean => !('id' in msg) || msg.id === undefined;

/** The id of a message we could not parse, if it has a usable one. */
export function salvageId(raw: unknown): RpcId {
  if (raw && typeof raw === 'object' && 'id' in raw) {
    const parsed = rpcId.safeParse((raw as { id: unknown }).id);
    if (parsed.success) return parsed.data;
  }
  return null;
}

/** "field.path: message" for each issue, the way every validation error names its field. */
export function describeIssues(error: z.ZodError): string {
  return error.issues
    .map((i) => {
      const path = i.path.map(String).join('.');
      return path ? `${path}: ${i.message}` : i.message;
    })
    .join('; ');
}
