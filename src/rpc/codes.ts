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
  /** An idempotency key (`_meta`) sent again with other arguments: `data.error` is `idempotency_key_reused`. */
  IDEMPOTENCY_KEY_REUSED: -32010,
  /** The same write is being applied by an earlier call: retry for its result. */
  WRITE_IN_PROGRESS: -32011,
  /** A confirmation's `requestState` altered, expired, used already or bound elsewhere: `data.error` names which. */
  REQUEST_STATE_REFUSED: -32012,
  /** Rate limit exceeded; `Retry-After` header is present. */
  RATE_LIMITED: -32029,
  /** No worker answered in time: try again shortly. */
  UNAVAILABLE: -32030,
} as const;

export type RpcCode = (typeof RPC)[keyof typeof RPC];
