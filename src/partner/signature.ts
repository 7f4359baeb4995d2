// Partner request signing: HMAC-SHA256 over the exact body bytes, `sha256=<lowercase hex>`, and a
// send-time header that must be within five minutes of our clock, either way.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { parseIsoInstant } from '../family/instant.js';

export { parseIsoInstant };

export const SIGNATURE_PREFIX = 'sha256=';
export const TIMESTAMP_TOLERANCE_MS = 5 * 60 * 1000;

/** The `X-Pipe-Signature` value for a body under a secret (the HMAC key is the secret's UTF-8 bytes). */
export function signBody(secret: string, body: string | Uint8Array): string {
  return SIGNATURE_PREFIX + createHmac('sha256', secret).update(body).digest('hex');
}

const SIGNATURE = /^sha256=([0-9a-f]{64})$/;

/**
 * The id of the secret that produced `header` over `body`, or null. Every live secret is tried
 * (two during a rotation) and each comparison is constant-time.
 */
export function verifySignature(header: string | undefined, body: Uint8Array, secrets: readonly { id: string; value: string }[]): string | null {
  const m = SIGNATURE.exec(header?.trim() ?? '');
  if (!m) return null;
  const given = Buffer.from(m[1]!, 'hex');
  let matched: string | null = null;
  for (const s of secrets) {
    const expected = createHmac('sha256', s.value).update(body).digest();
    if (timingSafeEqual(expected, given) && matched === null) matched = s.id;
  }
  return matched;
}

export type TimestampProblem = 'missing' | 'malformed' | 'too_old' | 'too_new';

/** Why `X-Pipe-Timestamp` is refused, or null when it is within the tolerance of `now`. */
export function timestampProblem(header: string | undefined, now: number): TimestampProblem | null {
  if (!header) return 'missing';
  const at = parseIsoInstant(header.trim());
  if (at === null) return 'malformed';
  if (now - at > TIMESTAMP_TOLERANCE_MS) return 'too_old';
  if (at - now > TIMESTAMP_TOLERANCE_MS) return 'too_new';
  return null;
}
