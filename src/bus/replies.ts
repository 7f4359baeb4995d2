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

/** The envelope as JSON of at most `limitBytes`; one that cannot be encoded or does not fit becomes a failure that does. */
export function encodeReply(env: ReplyEnvelope, limitBytes: number): EncodedReply {
  let text: string;
  try {
    text = JSON.stringify(env);
  } catch (err) {
    // Too deep to encode (RangeError) comes from what the request held; anything else is ours.
    const refused = new HandlerFailure(err instanceof RangeError ? 'rejected' : 'failed', `reply could not be encoded (${err instanceof Error ? err.message : String(err)})`, { cause: err });
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
