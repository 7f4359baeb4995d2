// Checking a reCAPTCHA token with the verify endpoint (siteverify) when a secret is configured.
import type { Config } from '../config.js';

export type RecaptchaVerdict = { ok: true } | { ok: false; reason: string };

export class RecaptchaUnavailableError extends Error {
  override name = 'RecaptchaUnavailableError';
}

interface SiteVerifyReply {
  success?: unknown;
  score?: unknown;
  'error-codes'?: unknown;
}

export async function verifyRecaptcha(
  config: Pick<Config, 'recaptchaSecret' | 'recaptchaVerifyUrl' | 'recaptchaMinScore'>,
  token: string,
  remoteIp: string,
): Promise<RecaptchaVerdict> {
  let reply: SiteVerifyReply;
  try {
    const res = await fetch(config.recaptchaVerifyUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ secret: config.recaptchaSecret, response: token, remoteip: remoteIp }),
      signal: AbortSignal.timeout(4000),
    });
    if (!res.ok) throw new Error(`verify endpoint answered ${res.status}`);
    reply = (await res.json()) as SiteVerifyReply;
  } catch (err) {
    throw new RecaptchaUnavailableError(`reCAPTCHA could not be checked: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
  if (reply.success !== true) {
    const codes = Array.isArray(reply['error-codes']) ? reply['error-codes'].filter((c) => typeof c === 'string').join(', ') : '';
    return { ok: false, reason: `the reCAPTCHA check failed${codes ? ` (${codes})` : ''}` };
  }
  if (typeof reply.score === 'number' && reply.score < config.recaptchaMinScore) return { ok: false, reason: 'the reCAPTCHA score is too low' };
  return { ok: true };
}
