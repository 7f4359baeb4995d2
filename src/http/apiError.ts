// The site API's error body: the `error` object and a top-level copy, one upper-case code.
import type { Context } from 'koa';

export const API_ERROR_CODES = [
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
] as const;
export type ApiErrorCode = (typeof API_ERROR_CODES)[number];

export interface ApiErrorBody {
  error: { code: ApiErrorCode; message: string; hint: string };
  code: ApiErrorCode;
  message: string;
  hint: string;
}

export function apiErrorBody(code: ApiErrorCode, message: string, hint: string): ApiErrorBody {
  return { error: { code, message, hint }, code, message, hint };
}

export function sendApiError(ctx: Context, status: number, code: ApiErrorCode, message: string, hint: string): void {
  ctx.status = status;
  ctx.body = apiErrorBody(code, message, hint);
}
