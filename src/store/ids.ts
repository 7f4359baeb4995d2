// Record ids: a short type prefix and 20 random base32 characters (100 bits), URL-safe.
import { randomBytes } from 'node:crypto';

const ALPHABET = 'abcdefghijklmnopqrstuvwxyz234567';

export function randomBase32(length: number): string {
  const bytes = randomBytes(length);
  let out = '';
  for (let i = 0; i < length; i++) out += ALPHABET[bytes[i]! & 31];
  return out;
}

export const newId = (prefix: string): string => `${prefix}_${randomBase32(20)}`;
