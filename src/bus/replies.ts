// Turning a handler's outcome into the reply that crosses the bus, for both bus implementations:
// every outcome becomes an envelope that can be encoded and fits, so a request can make a handler
// fail but can never leave it without an answer.
import { HandlerFailure, RemoteHandlerError } from './errors.js';
import type { ReplyEnvelope } from './types.js';

export function failureEnvelope(err: unknown): ReplyEnvelope {
  if (err instanceof HandlerFailure) return { ok: false, kind: err.kind, error: err.message };
  return { ok: false, kind: 'failed', error: err instanceof Error ? err.message : String(err) };
}

export interface EncodedReply {
  text: string;
  /** Why the handler's reply was not sent as it was; the text then carries this failure instead. */
  refused?: HandlerFailure;
}

/** UTF-8 bytes of `text` above `limit`? Counted only when the length alone cannot tell. */
function exceeds(text: string, limit: number): boolean {
  if (text.length > limit) return true;
  return text.length * 3 > limit && Buffer.byteLength(text, 'utf8') > limit;
}

/**
 * A member of a reply's data that is already JSON text (an HTTP body the worker encoded): it crosses
 * the bus after the rest of the reply, as it is, so the requester can pass it on without parsing
 * it and encoding it again. Only the top level of the data is looked at.
 */
export class RawJson {
  private text: string | undefined;
  /**
   * `utf8`: the text's UTF-8 bytes as they arrived from the bus, kept so a requester can send them
   * on without decoding them into a string and encoding them again.
   */
  constructor(
    json: string | undefined,
    readonly utf8?: Uint8Array,
  ) {
    this.text = json;
  }

  get json(): string {
    return (this.text ??= utf8Text.decode(this.utf8));
  }
}

const utf8Text = new TextDecoder();

/** JSON text its maker already wrote for an object, kept beside it (never crossing the bus). */
const encodings = new WeakMap<object, string>();

/**
 * Notes `json`, which must be exactly `JSON.stringify(value)`, as the encoding of `value`: whoever
 * encodes `value` itself later (encodeJson) takes the text instead of walking the object again.
 */
export function encodedAs<T extends object>(value: T, json: string): T {
  encodings.set(value, json);
  return value;
}

/** The JSON text noted for `value` (encodedAs), if any. */
export const encodingOf = (value: unknown): string | undefined => (typeof value === 'object' && value !== null ? encodings.get(value) : undefined);

/** `JSON.stringify(value)`, from the text noted for it when there is one. */
export const encodeJson = (value: unknown): string | undefined => encodingOf(value) ?? (JSON.stringify(value) as string | undefined);

/** Marks a reply that carries a RawJson member after its head; JSON text never starts with it. */
const FRAMED = '\u0001';

/** The reply as JSON, or framed: FRAMED, the head as JSON naming the raw member, a newline, the raw JSON. */
function stringify(env: ReplyEnvelope): string {
  if (env.ok && typeof env.data === 'object' && env.data !== null) {
    const data = env.data as Record<string, unknown>;
    for (const k in data) {
      const value = data[k];
      if (value instanceof RawJson) return `${FRAMED}${JSON.stringify({ ok: true, raw: k, data: { ...data, [k]: undefined } })}\n${value.json}`;
    }
  }
  return JSON.stringify(env);
}

/** `decodeReply` from the reply's UTF-8 bytes: a raw member keeps its bytes, undecoded. */
export function decodeReplyBytes(bytes: Uint8Array): ReplyEnvelope {
  if (bytes[0] !== 1) return JSON.parse(utf8Text.decode(bytes)) as ReplyEnvelope;
  // The head's JSON has no raw newline, and no UTF-8 sequence holds the byte of one.
  const end = bytes.indexOf(10);
  const head = JSON.parse(utf8Text.decode(bytes.subarray(1, end))) as { raw: string; data: Record<string, unknown> };
  head.data[head.raw] = new RawJson(undefined, bytes.subarray(end + 1));
  return { ok: true, data: head.data };
}

/** What `encodeReply` made of an envelope, back as the envelope (a raw member stays RawJson). */
export function decodeReply(text: string): ReplyEnvelope {
  if (!text.startsWith(FRAMED)) return JSON.parse(text) as ReplyEnvelope;
  const end = text.indexOf('\n');
  const head = JSON.parse(text.slice(1, end)) as { raw: string; data: Record<string, unknown> };
  head.data[head.raw] = new RawJson(text.slice(end + 1));
  return { ok: true, data: head.data };
}

/** The envelope as JSON of at most `limitBytes`; one that cannot be encoded or does not fit becomes a failure that does. */
export function encodeReply(env: ReplyEnvelope, limitBytes: number): EncodedReply {
  let text: string;
  try {
    text = stringify(env);
  } catch (err) {
    // Too deep to encode (RangeError) comes from what the request held; anything else is ours.
    const refused = new HandlerFailure(
      err instanceof RangeError ? 'rejected' : 'failed',
      `reply could not be encoded (${err instanceof Error ? err.message : String(err)})`,
      { cause: err },
    );
    return { text: JSON.stringify(failureEnvelope(refused)), refused };
  }
  if (exceeds(text, limitBytes)) {
    const bytes = Buffer.byteLength(text, 'utf8');
    const refused = new HandlerFailure('too_large', `reply too large: ${bytes} bytes, the limit is ${limitBytes}`);
    return { text: JSON.stringify(failureEnvelope(refused)), refused };
  }
  return { text };
}

/** What a requester makes of an envelope: the data, or the failure it names. */
export function openReply(subject: string, env: ReplyEnvelope): unknown {
  if (env.ok) return env.data;
  throw new RemoteHandlerError(subject, env.error, env.kind ?? 'failed');
}
