// Building worker replies: JSON, ApiError bodies, raw text, and the named failure a route throws.
import type { HttpReplyEnvelope } from '../bus/envelopes.js';
import { apiErrorBody, type ApiErrorCode } from './apiError.js';

export const json = (status: number, body: unknown, headers: Record<string, string> = {}): HttpReplyEnvelope => ({ status, headers, body });

export const apiError = (status: number, code: ApiErrorCode, message: string, hint: string, headers: Record<string, string> = {}): HttpReplyEnvelope => ({
  status,
  headers,
  body: apiErrorBody(code, message, hint),
});

export const text = (status: number, body: string, contentType: string, headers: Record<string, string> = {}): HttpReplyEnvelope => ({
  status,
  headers: { 'content-type': contentType, ...headers },
  body,
  raw: true,
});

/** A handled failure with an ApiError body: thrown inside a route, answered by the router. */
export class ApiProblem extends Error {
  override name = 'ApiProblem';
  constructor(
    readonly status: number,
    readonly code: ApiErrorCode,
    message: string,
    readonly hint: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}
