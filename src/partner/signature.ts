// Partner request signing: HMAC-SHA256 over the exact body bytes, `sha256=<lowercase hex>`, and a
// send-time header that must be within five minutes of our clock, either way.
import { createHmac, timingSafeEqual } from 'node:crypto';

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

/** Strict ISO 8601 date-time with seconds and a zone: `2026-11-22T10:15:00Z`, `…T10:15:00.123+01:00`. */
const ISO_DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?(Z|[+-](\d{2}):(\d{2}))$/;

/** Milliseconds since the epoch, or null when the text is not a strict, real ISO 8601 instant. */
export function parseIsoInstant(text: string): number | null {
  const m = ISO_DATE_TIME.exec(text);
  if (!m) return null;
  const [, y, mo, d, h, mi, s] = m.map(Number) as number[];
  if (mo! < 1 || mo! > 12 || d! < 1 || h! > 23 || mi! > 59 || s! > 59) return null;
  if (d! > new Date(Date.UTC(y!, mo!, 0)).getUTCDate()) return null;
  if (m[9] !== undefined && (Number(m[9]) > 23 || Number(m[10]) > 59)) return null;
  const ms = Date.parse(text);
  return Number.isNaN(ms) ? null : ms;
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
