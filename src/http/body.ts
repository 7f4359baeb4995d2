// Reading a request body ourselves: exact bytes, a hard size cap, and a named error for each failure.
import type { Context } from 'koa';

export class BodyError extends Error {
  override name = 'BodyError';
  constructor(
    readonly status: 400 | 413 | 415,
    message: string,
  ) {
    super(message);
  }
}

/** The raw body, refusing more than `limit` bytes (by Content-Length up front, by counting otherwise). */
export async function readRawBody(ctx: Context, limit: number): Promise<Buffer> {
  const declared = Number(ctx.get('content-length') || NaN);
  if (Number.isFinite(declared) && declared > limit) {
    ctx.req.resume();
    throw new BodyError(413, `request body is ${declared} bytes; the limit is ${limit}`);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) {
      ctx.req.resume();
      throw new BodyError(413, `request body exceeds the limit of ${limit} bytes`);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, size);
}

/** Content-Type must be JSON (parameters such as charset are fine). */
export function requireJsonContentType(ctx: Context): void {
  const type = (ctx.get('content-type') || '').split(';')[0]?.trim().toLowerCase();
  if (type !== 'application/json' && !type?.endsWith('+json'))
    throw new BodyError(415, `Content-Type must be application/json (got ${type ? `"${type}"` : 'none'})`);
}

/** Parse JSON from bytes; a failure names the position where the JSON broke. */
export function parseJson(raw: Buffer): unknown {
  const text = raw.toString('utf8');
  if (!text.trim()) throw new BodyError(400, 'the request body is empty');
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw new BodyError(400, `the body is not valid JSON (${err instanceof Error ? err.message : 'parse failure'})`);
  }
}
