// Token revocation (RFC 7009) at /oauth/revoke. oidc-provider refuses JWT access tokens there
// (unsupported_token_type) and, having read the body, cannot be handed the request back, so the
// endpoint is answered here for both kinds: a JWT access token is checked as the resource server
// checks it and remembered as revoked until it expires; a refresh token ends its grant, with every
// token under it, as oidc-provider does. Unknown, expired or foreign tokens get 200 (§2.2).
import type { Context, Middleware } from 'koa';
import type Provider from 'oidc-provider';
import { BodyError, readRawBody } from '../http/body.js';
import { AccessTokenError, looksLikeJwt, type AccessTokenVerifier } from './accessTokens.js';
import { OAUTH_ROUTES } from './paths.js';
import type { OAuthStore } from './store.js';

class RevocationError extends Error {
  constructor(
    readonly status: 400 | 401,
    readonly code: 'invalid_request' | 'invalid_client',
    message: string,
  ) {
    super(message);
  }
}

const PARAMS = ['token', 'token_type_hint', 'client_id'] as const;

async function formOf(ctx: Context): Promise<URLSearchParams> {
  if (!ctx.is('application/x-www-form-urlencoded'))
    throw new RevocationError(400, 'invalid_request', 'only application/x-www-form-urlencoded content-type bodies are supported');
  let raw;
  try {
    raw = await readRawBody(ctx, 16 * 1024);
  } catch (err) {
    if (err instanceof BodyError) throw new RevocationError(400, 'invalid_request', err.message);
    throw err;
  }
  const form = new URLSearchParams(raw.toString('utf8'));
  for (const name of PARAMS)
    if (form.getAll(name).length > 1) throw new RevocationError(400, 'invalid_request', `'${name}' parameter must not be provided twice`);
  return form;
}

export interface RevocationParts {
  provider: () => Promise<Provider>;
  store: OAuthStore;
  verifier: AccessTokenVerifier;
}

export function revocationEndpoint(parts: RevocationParts): Middleware {
  /** Only public clients exist here: the client authenticates by naming itself (`none`). */
  async function clientOf(ctx: Context, provider: Provider, form: URLSearchParams) {
    const clientId = form.get('client_id');
    if (!clientId) throw new RevocationError(400, 'invalid_request', 'no client authentication mechanism provided');
    const client = await provider.Client.find(clientId);
    if (!client) throw new RevocationError(401, 'invalid_client', 'client authentication failed');
    // A browser-based client may revoke from the origin of its redirect URIs (oidc-provider's rule).
    const origin = ctx.get('origin');
    if (origin) {
      if (origin === 'null' || !(client.redirectUris ?? []).some((uri) => URL.parse(uri)?.origin === origin))
        throw new RevocationError(400, 'invalid_request', `origin ${origin} not allowed for client: ${clientId}`);
      ctx.set('Access-Control-Allow-Origin', origin);
    }
    return client;
  }

  async function revokeAccessToken(token: string, clientId: string): Promise<void> {
    let signed;
    try {
      signed = await parts.verifier.signed(token);
    } catch (err) {
      if (err instanceof AccessTokenError) return; // expired, forged or not ours: nothing to revoke
      throw err;
    }
    if (signed.clientId === clientId) await parts.verifier.revoked.revoke(signed.jti, new Date(signed.exp * 1000));
  }

  async function revokeRefreshToken(provider: Provider, token: string, clientId: string): Promise<void> {
    const refresh = await provider.RefreshToken.find(token);
    if (!refresh || refresh.clientId !== clientId) return;
    await refresh.destroy();
    if (refresh.grantId) await parts.store.revokeGrant(refresh.grantId);
  }

  return async (ctx, next) => {
    // Preflight and other methods stay with oidc-provider, which answers them as before.
    if (ctx.path !== OAUTH_ROUTES.revocation || ctx.method !== 'POST') return next();
    ctx.set('Cache-Control', 'no-store');
    ctx.vary('Origin');
    try {
      const form = await formOf(ctx);
      const provider = await parts.provider();
      const client = await clientOf(ctx, provider, form);
      const token = form.get('token');
      if (!token) throw new RevocationError(400, 'invalid_request', "missing required parameter 'token'");
      if (looksLikeJwt(token)) await revokeAccessToken(token, client.clientId);
      else await revokeRefreshToken(provider, token, client.clientId);
      ctx.status = 200;
      ctx.body = '';
    } catch (err) {
      if (!(err instanceof RevocationError)) throw err;
      ctx.status = err.status;
      ctx.body = { error: err.code, error_description: err.message };
    }
  };
}
