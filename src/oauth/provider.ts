// The oidc-provider configuration: OAuth 2.1 for the workspace MCP endpoint. Public clients only
// (PKCE S256, no secrets to keep), JWT access tokens for one resource, refresh tokens that rotate
// on every use without offline_access, open registration beside Client ID Metadata Documents, and
// consent that always asks first.
import { readFileSync } from 'node:fs';
import type { JWK } from 'jose';
import Provider, { errors, interactionPolicy, type Client, type Configuration, type KoaContextWithOIDC } from 'oidc-provider';
import { isScope, SCOPES, type Scope } from '../auth/scopes.js';
import { isTransient } from '../bus/failures.js';
import type { Config } from '../config.js';
import type { Logger } from '../log.js';
import type { WorkspaceStore } from '../family/records.js';
import { workspaceResource, workspaceResourceForms } from './accessTokens.js';
import { METADATA_CACHE_SECONDS, METADATA_MAX_BYTES, metadataFetch, refusalIn } from './clientMetadata.js';
import { errorPage, renderAsPage } from './pages.js';
import { interactionPath, OAUTH_ROUTES } from './paths.js';
import type { OAuthStore } from './store.js';

/** Lifetimes in seconds (DESIGN, "token lifetimes"); docs/oauth.md says why. */
export const TTL = {
  AuthorizationCode: 60,
  AccessToken: 60 * 60,
  RefreshToken: 30 * 24 * 60 * 60,
  /** A grant outlives its refresh tokens' rotation; a year on, the caregiver consents again. */
  Grant: 365 * 24 * 60 * 60,
  /** The sign-in on the authorization server, reused by a second app connected the same day. */
  Session: 24 * 60 * 60,
  /** Time to sign in and decide on the consent page. */
  Interaction: 30 * 60,
  IdToken: 60 * 60,
} as const;

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);
const isLoopbackHttp = (uri: string): boolean => {
  const url = URL.parse(uri);
  return url?.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname);
};

/**
 * Registration rules oidc-provider has no setting for, applied through its one registration hook
 * (the extra-metadata validator, which sees the whole record): a client whose redirect URIs are all
 * loopback is a native app, so a different port at authorization time still matches (RFC 8252
 * §7.3); any other plain-http redirect URI is refused (OAuth 2.1).
 */
function validateClientMetadata(_ctx: unknown, key: string, value: unknown, metadata: Record<string, unknown>): void {
  if (value !== undefined && (typeof value !== 'string' || value.length > 200))
    throw new errors.InvalidClientMetadata(`${key} must be a string of at most 200 characters`);
  if (key !== 'software_id') return;
  const uris = Array.isArray(metadata.redirect_uris) ? (metadata.redirect_uris as unknown[]).filter((u): u is string => typeof u === 'string') : [];
  for (const uri of uris) {
    // oidc-provider answers invalid_redirect_uri for a description starting "redirect_uris" (its
    // InvalidRedirectUri error carries the authorize step's fixed wording instead).
    if (URL.parse(uri)?.protocol === 'http:' && !isLoopbackHttp(uri))
      throw new errors.InvalidClientMetadata(
        `redirect_uris: ${uri} uses plain http on a host that is not loopback; use https, or http only on a loopback host (http://127.0.0.1:<port>/…, http://[::1]:<port>/… or http://localhost:<port>/…)`,
      );
  }
  if (uris.length && uris.every(isLoopbackHttp)) metadata.application_type = 'native';
}

/**
 * What an authorization request that names none of our scopes asks for (RFC 6749 §3.3: no `scope`,
 * only `openid`, or only scopes we do not offer): the read scopes, never one that writes. Nothing
 * is granted by it; the caregiver still ticks each box on the consent page.
 */
export const DEFAULT_SCOPES = ['profile:read', 'care_circle:read'] as const satisfies readonly Scope[];

/**
 * Applies DEFAULT_SCOPES, within the scopes the client registered for if it named any. It is an
 * extra-parameter validator for `scope` because that is oidc-provider's documented place for
 * defaults: it runs after the provider's own scope checks and before the request is stored for
 * the sign-in and consent steps, so the code and tokens carry exactly what was ticked of these.
 */
async function defaultScope(ctx: KoaContextWithOIDC, value: string | undefined, client: Client): Promise<void> {
  const named = (value ?? '').split(' ').filter(Boolean);
  if (named.some(isScope)) return;
  const registered = client.scope ? new Set(client.scope.split(' ')) : undefined;
  const defaults = DEFAULT_SCOPES.filter((s) => !registered || registered.has(s));
  if (!defaults.length)
    throw new errors.InvalidScope(
      `the request names none of the scopes offered (${SCOPES.join(', ')}), and the client is registered for none of the default ones (${DEFAULT_SCOPES.join(', ')})`,
      named.join(' '),
    );
  ctx.oidc.params!.scope = [...named, ...defaults].join(' ');
}

/** Consent is asked for every grant that does not exist yet, even one asking for no scope. */
function consentPolicy() {
  const policy = interactionPolicy.base();
  const consent = policy.get('consent');
  if (!consent) throw new Error('oidc-provider has no consent prompt');
  consent.checks.add(
    new interactionPolicy.Check('grant_missing', 'the caregiver has not approved this app yet', 'consent_required', (ctx: KoaContextWithOIDC) =>
      ctx.oidc.result?.consent || ctx.oidc.grant?.jti ? interactionPolicy.Check.NO_NEED_TO_PROMPT : interactionPolicy.Check.REQUEST_PROMPT,
    ),
  );
  return policy;
}

export interface ProviderParts {
  config: Config;
  log: Logger;
  store: OAuthStore;
  users: WorkspaceStore;
  /** Private signing keys, the one that signs first. */
  signingKeys: JWK[];
  signingKid: string;
  cookieKeys: string[];
}

export function createProvider(parts: ProviderParts): Provider {
  const { config, log, store, users } = parts;
  const resource = workspaceResource(config);
  const resourceForms = workspaceResourceForms(config);

  const configuration: Configuration = {
    adapter: store.adapterFactory((message) => new errors.InvalidGrant(message)),
    jwks: { keys: parts.signingKeys as unknown as NonNullable<Configuration['jwks']>['keys'] },
    cookies: {
      keys: parts.cookieKeys,
      names: { session: 'cc_oauth_session', interaction: 'cc_oauth_interaction', resume: 'cc_oauth_resume' },
      long: { httpOnly: true, sameSite: 'lax' },
      short: { httpOnly: true, sameSite: 'lax' },
    },
    routes: OAUTH_ROUTES,
    // The resource scopes are listed here too: oidc-provider checks a registration's `scope` against this list.
    scopes: ['openid', ...SCOPES],
    claims: { openid: ['sub'] },
    responseTypes: ['code'],
    clientAuthMethods: ['none'],
    clientDefaults: {
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      id_token_signed_response_alg: 'ES256',
    },
    allowOmittingSingleRegisteredRedirectUri: false,
    pkce: { required: () => true },
    features: {
      devInteractions: { enabled: false },
      registration: { enabled: true, initialAccessToken: false, issueRegistrationAccessToken: false },
      // An https client_id is fetched through `fetch` below, which applies our rules first.
      clientIdMetadataDocument: { enabled: true, ack: 'draft-02', cacheDuration: METADATA_CACHE_SECONDS },
      revocation: { enabled: true, allowedPolicy: async (_ctx, client, token) => token.clientId === client.clientId },
      introspection: { enabled: false },
      userinfo: { enabled: false },
      rpInitiatedLogout: { enabled: false },
      pushedAuthorizationRequests: { enabled: false },
      // Our resource server does not check DPoP proofs, so no token may claim to be sender-constrained.
      dPoP: { enabled: false },
      resourceIndicators: {
        enabled: true,
        defaultResource: async () => resource,
        useGrantedResource: async () => true,
        getResourceServerInfo: async (_ctx, indicator) => {
          if (!resourceForms.includes(indicator)) throw new errors.InvalidTarget(`this authorization server issues tokens only for ${resource}`);
          return {
            scope: SCOPES.join(' '),
            audience: resource,
            accessTokenTTL: TTL.AccessToken,
            accessTokenFormat: 'jwt',
            jwt: { sign: { alg: 'ES256', kid: parts.signingKid } },
          };
        },
      },
    },
    extraParams: { scope: defaultScope },
    extraClientMetadata: {
      properties: ['software_id', 'software_version'],
      validator: validateClientMetadata as NonNullable<Configuration['extraClientMetadata']>['validator'],
    },
    // The resource server checks the grant on every call, so revoking it ends access before the token expires.
    extraTokenClaims: async (_ctx, token) => (token.kind === 'AccessToken' && token.grantId ? { grant_id: token.grantId } : undefined),
    issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed('refresh_token'),
    rotateRefreshToken: () => true,
    expiresWithSession: async () => false,
    revokeGrantPolicy: () => true,
    clientBasedCORS: (_ctx, origin, client) => origin !== 'null' && (client.redirectUris ?? []).some((uri) => URL.parse(uri)?.origin === origin),
    findAccount: async (_ctx, sub) => {
      const user = await users.user(sub);
      return user ? { accountId: user._id, claims: () => ({ sub: user._id }) } : undefined;
    },
    interactions: { url: async (_ctx, interaction) => interactionPath(interaction.uid), policy: consentPolicy() },
    renderError: async (ctx, out, error) => {
      const description = refusalIn(error)?.message ?? (typeof out.error_description === 'string' ? out.error_description : undefined);
      renderAsPage(
        ctx,
        ctx.status >= 400 ? ctx.status : 400,
        'Connection refused',
        errorPage(String(out.error), description, 'Go back to the app and connect again; if it keeps failing, the app may need updating.'),
      );
    },
    fetch: metadataFetch({
      timeoutMs: config.oauthClientMetadataTimeoutMs,
      allowPrivateAddresses: config.oauthClientMetadataPrivateHosts,
      extraCa: config.oauthClientMetadataCa ? [readFileSync(config.oauthClientMetadataCa, 'utf8')] : [],
      onAccepted: (url, doc) =>
        void store.rememberClientDocument(url, doc).catch((err: unknown) => log.warn({ err, url }, 'could not keep a copy of a client metadata document')),
    }),
    fetchResponseBodyLimits: { 'client_id metadata document': METADATA_MAX_BYTES },
    ttl: { ...TTL },
    discovery: { service_documentation: `${config.siteUrl}/llms.txt`, revocation_endpoint_auth_methods_supported: ['none'] },
  };

  const provider = new Provider(config.authUrl, configuration);
  provider.proxy = config.trustProxy;
  // The provider answers every error it did not expect as 500 server_error. One from a dependency
  // that cannot be reached now is kept for the auth host to raise again and answer as an outage.
  provider.on('server_error', (ctx: object, err: unknown) => {
    if (isTransient(err)) transientFailures.set(ctx, err);
    else log.error({ err }, 'oauth server error');
  });
  // oidc-provider describes every failed document fetch alike; the developer is told which rule failed.
  const explainRefusal = (ctx: KoaContextWithOIDC, err: unknown) => {
    const refusal = refusalIn(err);
    if (refusal && ctx.body && typeof ctx.body === 'object' && !Buffer.isBuffer(ctx.body))
      ctx.body = { ...(ctx.body as object), error_description: refusal.message };
  };
  provider.on('authorization.error', explainRefusal);
  provider.on('grant.error', explainRefusal);
  // Koa would print unhandled errors to stderr; they belong in the log, as JSON.
  (provider as unknown as { on(event: 'error', fn: (err: unknown) => void): void }).on('error', (err) => log.error({ err }, 'oauth error'));
  return provider;
}

const transientFailures = new WeakMap<object, unknown>();

/** The failure of a dependency (the database) the provider met while answering this request, if any. */
export const transientFailureOf = (ctx: object): unknown => transientFailures.get(ctx);

/** An interaction cookie that is missing or expired (the caller shows a friendly page). */
export const isSessionNotFound = (err: unknown): boolean => err instanceof errors.SessionNotFound;
