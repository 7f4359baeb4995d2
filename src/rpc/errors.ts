// Errors that cross the JSON-RPC wire. Every one has a code, an HTTP status and a hint.
import { RPC } from './codes.js';

export interface RpcErrorData {
  hint?: string;
  retryAfterSec?: number;
  [key: string]: unknown;
}

/** A protocol error: becomes a JSON-RPC `error` object in exactly one place (rpc/mcp.ts). */
export class RpcError extends Error {
  override name = 'RpcError';
  constructor(
    readonly code: number,
    message: string,
    readonly data?: RpcErrorData,
    /** HTTP status when this error is the whole response (not one member of a batch). */
    readonly httpStatus = 200,
  ) {
    super(message);
  }
}

/** Thrown by a tool for an expected, user-facing failure: the result carries `isError: true`. */
export class ToolError extends Error {
  override name = 'ToolError';
}

/** Thrown by a tool whose work failed for a reason the caller may see: JSON-RPC -32002. */
export class ToolFailure extends Error {
  override name = 'ToolFailure';
}

export const parseError = (detail: string) =>
  new RpcError(RPC.PARSE_ERROR, `Parse error: ${detail}`, { hint: 'Send one JSON-RPC 2.0 object (or a batch array) as UTF-8 JSON.' }, 400);

export const invalidRequest = (detail: string, httpStatus = 400) =>
  new RpcError(
    RPC.INVALID_REQUEST,
    `Invalid Request: ${detail}`,
    { hint: 'A request needs "jsonrpc": "2.0" and a string "method"; "params" must be an object.' },
    httpStatus,
  );

/** A caller whose OAuth grant lacks the scope a tool, prompt or resource declares; the endpoint answers 403 with insufficient_scope. */
export class InsufficientScope extends RpcError {
  constructor(readonly scope: string) {
    super(RPC.UNAUTHORIZED, `This tool needs the ${scope} scope`, { hint: `Reconnect and approve ${scope}.`, scope });
  }
}
