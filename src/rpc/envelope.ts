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
