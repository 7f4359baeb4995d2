import { describe, expect, it } from 'vitest';
import { API_ERROR_CODES } from '../http/apiError.js';
import { RPC } from './codes.js';

// The wire contract: a change here breaks clients, so it must be deliberate.
describe('wire codes - pinned', () => {
  it('JSON-RPC codes keep their numbers', () => {
    expect(RPC).toEqual({
      PARSE_ERROR: -32700,
      INVALID_REQUEST: -32600,
      METHOD_NOT_FOUND: -32601,
      INVALID_PARAMS: -32602,
      INTERNAL_ERROR: -32603,
      UNAUTHORIZED: -32001,
      TOOL_FAILED: -32002,
      NOT_AUTHORIZED: -32003,
      IDEMPOTENCY_KEY_REUSED: -32010,
      WRITE_IN_PROGRESS: -32011,
      REQUEST_STATE_REFUSED: -32012,
      RATE_LIMITED: -32029,
      UNAVAILABLE: -32030,
    });
  });

  it('ApiError codes are the documented upper-case set', () => {
    expect(API_ERROR_CODES).toEqual([
      'BAD_REQUEST',
      'VALIDATION_FAILED',
      'UNAUTHORIZED',
      'FORBIDDEN',
      'NOT_FOUND',
      'METHOD_NOT_ALLOWED',
      'PAYLOAD_TOO_LARGE',
      'UNSUPPORTED_MEDIA_TYPE',
      'RATE_LIMITED',
      'UNAVAILABLE',
      'INTERNAL',
      'MISDIRECTED_REQUEST',
    ]);
    for (const code of API_ERROR_CODES) expect(code).toMatch(/^[A-Z_]+$/);
  });
});
