// JSON-RPC error codes on the wire. Pinned by rpc/codes.test.ts: changing one is a breaking change.

export const RPC = {
  PARSE_ERROR: -32700,
  INVALID_REQUEST: -32600,
  METHOD_NOT_FOUND: -32601,
  INVALID_PARAMS: -32602,
  INTERNAL_ERROR: -32603,
  /** Missing, malformed, unknown (HTTP 401) or revoked (HTTP 403) credentials. */
  UNAUTHORIZED: -32001,
  /** A tool handler failed; the cause is in `error.message`. */
  TOOL_FAILED: -32002,
  /** An id outside the caller's workspace (DESIGN). */
  NOT_AUTHORIZED: -32003,
  /** Rate limit exceeded; `Retry-After` header is present. */
  RATE_LIMITED: -32029,
  /** No worker answered in time: try again shortly. */
  UNAVAILABLE: -32030,
} as const;

export type RpcCode = (typeof RPC)[keyof typeof RPC];
