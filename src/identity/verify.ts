// Verifying identity-provider ID tokens with jose: signature by the provider's key set, issuer,
// audience, expiry and a verified email. The one place an ID token becomes an identity.
import { createRemoteJWKSet, errors as joseErrors, jwtVerify, type JWTVerifyGetKey } from 'jose';
import type { IdentityProviderSettings } from '../config.js';

export interface VerifiedIdentity {
  uid: string;
  email: string;
  emailVerified: boolean;
  name?: string;
  /** When the person last signed in (seconds since the epoch), if the provider says. */
  authTime?: number;
  /** When the ID token itself expires (seconds since the epoch), if it says. */
  expiresAt?: number;
}

export type IdTokenProblem = 'malformed' | 'invalid' | 'expired' | 'email_unverified';

export class IdTokenError extends Error {
  override name = 'IdTokenError';
  constructor(
    readonly problem: IdTokenProblem,
    message: string,
  ) {
    super(message);
  }
}

export type IdTokenVerifier = (token: string) => Promise<VerifiedIdentity>;

/** A verifier with the key set cached by jose (refetched on an unknown key id). */
export function createIdTokenVerifier(idp: Pick<IdentityProviderSettings, 'issuer' | 'jwksUrl' | 'audience'>, keys?: JWTVerifyGetKey): IdTokenVerifier {
  const jwks = keys ?? createRemoteJWKSet(new URL(idp.jwksUrl), { cooldownDuration: 30_000, timeoutDuration: 5_000 });
  return async (token) => {
    if (typeof token !== 'string' || token.split('.').length !== 3) throw new IdTokenError('malformed', 'idToken is not a JWT');
    let payload;
    try {
      ({ payload } = await jwtVerify(token, jwks, { issuer: idp.issuer, audience: idp.audience, clockTolerance: 30 }));
    } catch (err) {
      if (err instanceof joseErrors.JWTExpired) throw new IdTokenError('expired', 'the ID token has expired; sign in again');
      throw new IdTokenError('invalid', 'the ID token could not be verified');
    }
    const email = typeof payload.email === 'string' ? payload.email.toLowerCase() : '';
    if (!payload.sub || !email) throw new IdTokenError('invalid', 'the ID token lacks sub or email');
    if (payload.email_verified !== true) throw new IdTokenError('email_unverified', 'the email address is not verified with the identity provider');
    return {
      uid: payload.sub,
      email,
      emailVerified: true,
      ...(typeof payload.name === 'string' ? { name: payload.name } : {}),
      ...(typeof payload.auth_time === 'number' ? { authTime: payload.auth_time } : {}),
      ...(typeof payload.exp === 'number' ? { expiresAt: payload.exp } : {}),
    };
  };
}
