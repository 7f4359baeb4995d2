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
});
export type HttpReplyEnvelope = z.input<typeof httpReplyEnvelope>;
