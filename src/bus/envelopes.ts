// Typed envelopes for HTTP work carried over the bus: what a gateway forwards, what a worker returns.
import { z } from 'zod';

/** One HTTP request as a gateway forwards it: already bounded and parsed, never interpreted. */
export const httpRequestEnvelope = z.object({
  v: z.literal(1),
  method: z.string(),
  path: z.string(),
  query: z.record(z.string(), z.string()),
  /** Only the headers a worker needs, lower-case names. Credentials are forwarded, never logged. */
  headers: z.record(z.string(), z.string()),
  body: z.unknown().optional(),
  clientIp: z.string(),
  requestId: z.string(),
  /** The requester passes a JSON body on as it is: the worker sends it encoded (RawJson, see replies.ts). */
  encodedBody: z.boolean().optional(),
  /**
   * Only from the gateway holding a tools/call's event stream, never from the client: the answer to
   * the question the worker put on it (`elicit` below), routed to that gateway over the bus.
   */
  answer: z
    .object({
      question: z.string(),
      action: z.enum(['accept', 'decline', 'cancel', 'unanswered']),
      content: z.record(z.string(), z.unknown()).optional(),
    })
    .optional(),
});
export type HttpRequestEnvelope = z.infer<typeof httpRequestEnvelope>;

/** A worker's answer, written to the socket by the gateway as it is. */
export const httpReplyEnvelope = z.object({
  status: z.number().int().min(100).max(599),
  headers: z.record(z.string(), z.string()).default({}),
  body: z.unknown().optional(),
  /** Body is already a string (text/markdown, HTML); otherwise it is sent as JSON. */
  raw: z.boolean().optional(),
  /** A raw body that is base64 of bytes (a download): the gateway sends the bytes. */
  base64: z.boolean().optional(),
  /**
   * Instead of a body: an event stream to open, a JSON-RPC request to send on it, and how long to wait
   * for the client's answer before the request goes back to a worker with it (as `answer` above).
   */
  elicit: z.object({ key: z.string(), request: z.record(z.string(), z.unknown()), timeoutMs: z.number().int().positive() }).optional(),
});
export type HttpReplyEnvelope = z.input<typeof httpReplyEnvelope>;

const isStringRecord = (v: unknown): v is Record<string, string> => {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  for (const k in v) if (typeof (v as Record<string, unknown>)[k] !== 'string') return false;
  return true;
};
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * A request envelope as the gateways send it, checked by hand: zod's parse (which copies every
 * field) runs only for one that fails here, to name what is wrong.
 */
export function parseRequestEnvelope(data: unknown): ReturnType<typeof httpRequestEnvelope.safeParse> {
  if (
    isObject(data) &&
    data.v === 1 &&
    typeof data.method === 'string' &&
    typeof data.path === 'string' &&
    isStringRecord(data.query) &&
    isStringRecord(data.headers) &&
    typeof data.clientIp === 'string' &&
    typeof data.requestId === 'string'
  )
    return { success: true, data: data as HttpRequestEnvelope };
  return httpRequestEnvelope.safeParse(data);
}

/** A worker's reply, checked by hand the same way; zod names what is wrong, or fills the defaults. */
export function parseReplyEnvelope(data: unknown): ReturnType<typeof httpReplyEnvelope.safeParse> {
  if (
    isObject(data) &&
    Number.isInteger(data.status) &&
    (data.status as number) >= 100 &&
    (data.status as number) <= 599 &&
    isStringRecord(data.headers) &&
    (data.raw === undefined || typeof data.raw === 'boolean') &&
    (data.base64 === undefined || typeof data.base64 === 'boolean')
  )
    return { success: true, data: data as z.output<typeof httpReplyEnvelope> };
  return httpReplyEnvelope.safeParse(data);
}
