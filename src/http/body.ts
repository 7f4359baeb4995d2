// Reading a request body ourselves: exact bytes, a hard size cap, and a named error for each failure.
import type { IncomingMessage } from 'node:http';
import type { Context } from 'koa';
import { finished } from 'node:stream';

export class BodyError extends Error {
  override name = 'BodyError';
  constructor(
    readonly status: 400 | 413 | 415,
    message: string,
    /** What the client should change, when the surface's generic hint would not say it. */
    readonly hint?: string,
  ) {
    super(message);
  }
}

/**
 * The raw body, refusing more than `limit` bytes (by Content-Length up front, by counting otherwise).
 * Read from the stream's events: its async iterator costs a promise and a generator step per chunk.
 */
export function readRawBody(ctx: Context, limit: number): Promise<Buffer> {
  return readBody(ctx.req, limit);
}

/** readRawBody on the bare request, for a handler that runs before Koa. */
export async function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length'] || NaN);
  if (Number.isFinite(declared) && declared > limit) {
    req.resume();
    throw new BodyError(413, `request body is ${declared} bytes; the limit is ${limit}`);
  }
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= limit) return void chunks.push(chunk);
      req.off('data', onData);
      req.resume();
      reject(new BodyError(413, `request body exceeds the limit of ${limit} bytes`));
    };
    req.on('data', onData);
    const cleanup = finished(req, { writable: false }, (err) => {
      cleanup();
      req.off('data', onData);
      if (err) reject(err);
      else resolve(Buffer.concat(chunks, size));
    });
  });
}

/** Content-Type must be JSON (parameters such as charset are fine). */
export function requireJsonContentType(ctx: Context): void {
  requireJsonType(ctx.get('content-type'));
}

/** requireJsonContentType on the header's value ('' or undefined when absent). */
export function requireJsonType(contentType: string | undefined): void {
  const type = (contentType || '').split(';')[0]?.trim().toLowerCase();
  if (type !== 'application/json' && !type?.endsWith('+json'))
    throw new BodyError(415, `Content-Type must be application/json (got ${type ? `"${type}"` : 'none'})`);
}

/**
 * Deepest nesting of arrays and objects in JSON text, counted in one pass without building
 * anything (brackets inside strings do not count). Malformed text gets a number too; the parser
 * refuses it afterwards.
 */
export function jsonDepth(text: string): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // a backslash escapes the next character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) max = Math.max(max, ++depth);
    else if (c === 0x5d || c === 0x7d) depth--;
  }
  return max;
}

/**
 * Parse JSON from bytes; a failure names the position where the JSON broke. Nesting deeper than
 * `maxDepth` is refused before parsing: JSON.parse copes with it, but every later step that walks
 * the value (encoding it for the bus, validating it) would overflow the stack on it.
 */
export function parseJson(raw: Buffer, maxDepth = Infinity): unknown {
  const text = raw.toString('utf8');
  if (!text.trim()) throw new BodyError(400, 'the request body is empty');
  const depth = jsonDepth(text);
  if (depth > maxDepth)
    throw new BodyError(400, `the JSON body nests ${depth} levels deep; the limit is ${maxDepth}`, `Nest arrays and objects at most ${maxDepth} levels deep.`);
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw new BodyError(400, `the body is not valid JSON (${err instanceof Error ? err.message : 'parse failure'})`);
  }
}
