// Signed newsletter links: an HMAC-SHA256 over the purpose and the address, so a confirm or
// unsubscribe link works for exactly one address and one purpose, and cannot be forged.
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Config } from '../config.js';

/** Used only when NEWSLETTER_SECRET is empty, which loadConfig refuses in production. */
const DEVELOPMENT_KEY = 'carecircle-development-newsletter-key';

export type LinkPurpose = 'confirm' | 'unsubscribe';

export function linkToken(secret: string, purpose: LinkPurpose, email: string): string {
  return createHmac('sha256', secret || DEVELOPMENT_KEY)
    .update(`carecircle-newsletter\n${purpose}\n${email.toLowerCase()}`)
    .digest('base64url');
}

export function verifyLinkToken(secret: string, purpose: LinkPurpose, email: string, token: string): boolean {
  const expected = Buffer.from(linkToken(secret, purpose, email));
  const given = Buffer.from(token);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

export function newsletterLink(config: Pick<Config, 'siteUrl' | 'newsletterSecret'>, purpose: LinkPurpose, email: string): string {
  const q = new URLSearchParams({ email: email.toLowerCase(), token: linkToken(config.newsletterSecret, purpose, email) });
  return `${config.siteUrl}/newsletter/${purpose}?${q.toString()}`;
}
