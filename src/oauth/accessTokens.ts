// The resource-server side: an OAuth access token (RFC 9068 JWT) becomes a verified caller. The
// signature is checked with jose against the authorization server's published keys, read from
// MongoDB and cached (reloaded when a token names a key id we have not seen); then issuer,
// audience, type and expiry; then the grant must still stand and the token must not have been
// revoked at /oauth/revoke. Both are read once per process and then served from memory: revoking
// either tells every process before it returns (src/auth/credentials.ts), so either ends access at once.
import { createLocalJWKSet, errors as joseErrors, jwtVerify, type JWK, type JWTVerifyGetKey } from 'jose';
import type { Db } from 'mongodb';
import type { Credentials } from '../auth/credentials.js';
import type { Config } from '../config.js';
import { OAuthKeys } from './keys.js';
import { StoredRevokedAccessTokens, type RevokedAccessTokens } from './revokedTokens.js';
import { OAuthStore } from './store.js';

export type AccessTokenProblem = 'invalid' | 'expired' | 'revoked';

export class AccessTokenError extends Error {
  override name = 'AccessTokenError';
  constructor(
    readonly problem: AccessTokenProblem,
    message: string,
  ) {
    super(message);
  }
}

export interface VerifiedAccessToken {
  uid: string;
  clientId: string;
  grantId: string;
  /** Granted scopes as the token carries them (space-separated in `scope`). */
  scopes: string[];
}

/** The audience the authorization server puts in its access tokens: the workspace MCP URL. */
export const workspaceResource = (config: Pick<Config, 'appUrl'>): string => `${config.appUrl}/api/mcp`;

/** The same resource with and without a trailing slash: clients differ, and both mean the endpoint. */
export const workspaceResourceForms = (config: Pick<Config, 'appUrl'>): string[] => [workspaceResource(config), `${workspaceResource(config)}/`];

export const looksLikeJwt = (token: string): boolean => /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/.test(token);

/** An unknown kid reloads the keys at most this often (a flood of made-up kids costs one read per interval). */
const RELOAD_COOLDOWN_MS = 5_000;
/** Keys are reloaded this often anyway, so a retired key leaves the cache too. */
const MAX_AGE_MS = 10 * 60_000;

/** A key getter over the published keys, reloaded from the store when a token names an unknown kid. */
export function storedKeySet(keys: OAuthKeys, clock: () => number = Date.now): JWTVerifyGetKey {
  let jwks: JWTVerifyGetKey | undefined;
  let loadedAt = -Infinity;
  let loading: Promise<JWTVerifyGetKey> | undefined;
  const load = () =>
    (loading ??= keys
      .publicKeys()
      .then((list: JWK[]) => {
        jwks = createLocalJWKSet({ keys: list });
        loadedAt = clock();
        return jwks;
      })
      .finally(() => (loading = undefined)));
  return async (header, token) => {
    const set = jwks && clock() - loadedAt < MAX_AGE_MS ? jwks : await load();
    try {
      return await set(header, token);
    } catch (err) {
      if (!(err instanceof joseErrors.JWKSNoMatchingKey) || clock() - loadedAt < RELOAD_COOLDOWN_MS) throw err;
      return (await load())(header, token);
    }
  };
}

/** What a signature-checked access token says, before its grant is looked at. */
export interface SignedAccessToken {
  jti: string;
  sub: string;
  clientId: string;
  grantId: string;
  /** Expiry, seconds since the epoch. */
  exp: number;
  scope: string;
}

export class AccessTokenVerifier {
  private readonly store: OAuthStore;
  private readonly keySet: JWTVerifyGetKey;
  readonly revoked: RevokedAccessTokens;

  constructor(
    db: Db,
    private readonly credentials: Credentials,
    private readonly config: Pick<Config, 'appUrl' | 'authUrl' | 'oauthKeyRotation'>,
    private readonly clock: () => number = Date.now,
    revoked: RevokedAccessTokens = new StoredRevokedAccessTokens(db, credentials),
  ) {
    this.store = new OAuthStore(db, credentials, clock);
    this.keySet = storedKeySet(new OAuthKeys(db, config.oauthKeyRotation, undefined, clock), clock);
    this.revoked = revoked;
  }

  /** Signature, issuer, audience, type and expiry: the token is one we issued and still live. */
  async signed(token: string): Promise<SignedAccessToken> {
    let payload;
    try {
      ({ payload } = await jwtVerify(token, this.keySet, {
        issuer: this.config.authUrl,
        audience: workspaceResourceForms(this.config),
        typ: 'at+jwt',
        algorithms: ['ES256'],
        requiredClaims: ['exp', 'sub', 'client_id', 'jti'],
        currentDate: new Date(this.clock()),
        clockTolerance: 5,
      }));
    } catch (err) {
      if (err instanceof joseErrors.JWTExpired) throw new AccessTokenError('expired', 'The access token has expired');
      if (err instanceof joseErrors.JWTClaimValidationFailed && err.claim === 'aud')
        throw new AccessTokenError('invalid', `The access token is for another audience; this endpoint is ${workspaceResource(this.config)}`);
      throw new AccessTokenError('invalid', 'The access token could not be verified');
    }
    const grantId = typeof payload.grant_id === 'string' ? payload.grant_id : '';
    const clientId = typeof payload.client_id === 'string' ? payload.client_id : '';
    if (!grantId || !payload.sub || !payload.jti) throw new AccessTokenError('invalid', 'The access token lacks its grant');
    return { jti: payload.jti, sub: payload.sub, clientId, grantId, exp: payload.exp!, scope: typeof payload.scope === 'string' ? payload.scope : '' };
  }

  async verify(token: string): Promise<VerifiedAccessToken> {
    const { jti, sub, clientId, grantId, scope } = await this.signed(token);
    const { cache } = this.credentials;
    const [stored, state] = await Promise.all([
      cache.lookup('grant', grantId, () => this.store.liveGrant(grantId)),
      cache.lookup('jti', jti, async () => ((await this.revoked.isRevoked(jti)) ? 'revoked' : 'live')),
    ]);
    // A grant read while live may have expired since.
    const grant = stored && (!stored.expiresAt || stored.expiresAt.getTime() > this.clock()) ? stored : null;
    if (state === 'revoked') throw new AccessTokenError('revoked', 'This access token was revoked');
    if (!grant || grant.accountId !== sub || grant.clientId !== clientId)
      throw new AccessTokenError('revoked', 'Access for this app was revoked or has expired');
    this.store.touchGrant(grantId);
    return { uid: sub, clientId, grantId, scopes: scope.split(' ').filter(Boolean) };
  }
}

const verifiers = new WeakMap<Db, AccessTokenVerifier>();

/** One verifier (and key cache) per database handle, for the life of the process. */
export function accessTokenVerifier(db: Db, credentials: Credentials, config: Pick<Config, 'appUrl' | 'authUrl' | 'oauthKeyRotation'>): AccessTokenVerifier {
  let verifier = verifiers.get(db);
  if (!verifier) verifiers.set(db, (verifier = new AccessTokenVerifier(db, credentials, config)));
  return verifier;
}
