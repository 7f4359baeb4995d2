// The authorization server on the auth host ({auth_url}): oidc-provider serving the endpoints under
// /oauth/* and the metadata, plus what is ours around it: the registration rate limit, sign-in
// through the identity provider, the per-scope consent page, and key rotation. Each route declared
// in OAUTH_AUTH_ROUTES gets its pipeline of steps here.
import type { Middleware } from 'koa';
import { SCOPES } from '../auth/scopes.js';
import { SessionStore } from '../auth/sessions.js';
import { countDatabaseError, isTransient, RETRY_AFTER_SEC } from '../bus/failures.js';
import { identityProvider } from '../config.js';
import { WorkspaceStore } from '../family/records.js';
import { createIdTokenVerifier } from '../identity/verify.js';
import type { Logger } from '../log.js';
import { countRateLimited } from '../metrics/index.js';
import type { SliceContext } from '../slice/contract.js';
import { accessTokenVerifier, workspaceResourceForms } from './accessTokens.js';
import { clientIdUrlProblem } from './clientMetadata.js';
import { answer_interaction_problem, interactionHandlers, serveAsset } from './interactions.js';
import { errorPage, renderAsPage } from './pages.js';
import type { OAUTH_AUTH_ROUTES } from './paths.js';
import { pinToIssuer } from './pinIssuer.js';
import { revocationEndpoint } from './revocation.js';
import { providerRuntime, type ProviderRuntime } from './runtime.js';
import { OAuthStore } from './store.js';

/**
 * The one outage answer of the authorization server: a dependency that cannot be reached now (the
 * database, the shared rate limit), met by any later step, is 503 with Retry-After in the OAuth
 * error format. JSON for the endpoints apps call; a page where a browser is (authorize, sign-in
 * and consent), because without the store the app's redirect URI cannot be checked, so nothing
 * is sent back to the app.
 */
function answerUnavailable(log: Logger, audience: 'app' | 'browser'): Middleware {
  return async (ctx, next) => {
    try {
      await next();
    } catch (err) {
      if (!isTransient(err)) throw err;
      countDatabaseError(err);
      log.warn({ err, requestId: ctx.state.requestId }, 'oauth dependency unavailable');
      const description = `The authorization server cannot reach its storage right now; try again in ${RETRY_AFTER_SEC} s.`;
      ctx.set('Retry-After', String(RETRY_AFTER_SEC));
      ctx.set('Cache-Control', 'no-store');
      if (audience === 'browser')
        return renderAsPage(
          ctx,
          503,
          'Try again shortly',
          errorPage('temporarily_unavailable', description, 'Wait a moment, then go back to your app and connect again.'),
        );
      ctx.status = 503;
      ctx.body = { error: 'temporarily_unavailable', error_description: description };
    }
  };
}

/** Runs oidc-provider on the request. */
function serveProvider(runtime: ProviderRuntime, issuer: URL): Middleware {
  return async (ctx, next) => {
    const { run } = await runtime.current();
    // The provider's cookies are signed with keys every gateway process shares.
    if (!ctx.app.keys) ctx.app.keys = runtime.cookieKeys()!;
    pinToIssuer(ctx, issuer);
    await run(ctx, next);
    // The provider answered an outage as its own fault (500): raised again for the outage step.
    const failure = runtime.lib()!.transientFailureOf(ctx);
    if (failure) throw failure;
  };
}

/** Discovery lists the scopes of the workspace endpoint, not the OpenID ones we do not offer to apps. */
const list_workspace_scopes: Middleware = async (ctx, next) => {
  await next();
  if (ctx.status === 200 && ctx.body && typeof ctx.body === 'object') ctx.body = { ...(ctx.body as object), scopes_supported: [...SCOPES] };
};

/** Open registration is callable from browser-based clients (CORS); the preflight is answered here. */
const registration_cors: Middleware = async (ctx, next) => {
  ctx.set('Access-Control-Allow-Origin', '*');
  if (ctx.method !== 'OPTIONS') return next();
  ctx.set('Access-Control-Allow-Methods', 'POST');
  ctx.set('Access-Control-Allow-Headers', 'Content-Type');
  ctx.set('Access-Control-Max-Age', '3600');
  ctx.status = 204;
};

/** Client registrations are rate-limited per address. */
function limitRegistrations(deps: Pick<SliceContext, 'config' | 'limiter'>): Middleware {
  const perHour = deps.config.rateOauthRegisterPerHour;
  const policy = { capacity: perHour, refillMs: Math.ceil(3_600_000 / perHour) };
  return async (ctx, next) => {
    const taken = await deps.limiter.take(`oauth-register:ip:${ctx.ip}`, policy);
    if (taken.allowed) return next();
    countRateLimited('oauth-register');
    ctx.status = 429;
    ctx.set('Retry-After', String(taken.retryAfterSec));
    ctx.set('Cache-Control', 'no-store');
    ctx.body = {
      error: 'temporarily_unavailable',
      error_description: `Too many client registrations from this address; try again in ${taken.retryAfterSec} s.`,
    };
  };
}

/** A client_id that is a URL but cannot be a metadata document URL: oidc-provider would only say "client is invalid". */
const check_metadata_url: Middleware = async (ctx, next) => {
  const clientId = ctx.query.client_id;
  const problem = typeof clientId === 'string' && clientId.includes(':') ? clientIdUrlProblem(clientId) : undefined;
  if (!problem) return next();
  // A page, as oidc-provider answers every authorization error it cannot send back to the app.
  renderAsPage(
    ctx,
    400,
    'Connection refused',
    errorPage('invalid_client', `${problem} (a client_id that is a URL names a Client ID Metadata Document)`, 'The app needs updating; tell its developer.'),
  );
};

/** The steps of every route in OAUTH_AUTH_ROUTES. */
export function authorizationServer(deps: Pick<SliceContext, 'config' | 'log' | 'db' | 'timelines' | 'limiter' | 'credentials'>): {
  readonly [K in keyof typeof OAUTH_AUTH_ROUTES]: readonly Middleware[];
} {
  const { config, log, db, credentials } = deps;
  const store = new OAuthStore(db, credentials);
  const users = new WorkspaceStore(db, credentials, config.inboxDomain, deps.timelines);
  const idp = identityProvider(config);
  const runtime = providerRuntime({ config, log, db, store, users });
  const serve_provider = serveProvider(runtime, new URL(config.authUrl));
  const forApps = answerUnavailable(log, 'app');
  const forBrowsers = answerUnavailable(log, 'browser');
  const revoke_token = revocationEndpoint({
    provider: async () => (await runtime.current()).provider,
    store,
    verifier: accessTokenVerifier(db, credentials, config),
  });
  const pages = interactionHandlers({
    config,
    runtime,
    users,
    sessions: new SessionStore(db, credentials),
    verifyIdToken: createIdTokenVerifier(idp),
    loginUrl: idp.loginUrl,
    resourceForms: workspaceResourceForms(config),
  });

  return {
    oauthMetadata: [forApps, list_workspace_scopes, serve_provider],
    openidMetadata: [forApps, list_workspace_scopes, serve_provider],
    jwks: [forApps, serve_provider],
    authorize: [forBrowsers, check_metadata_url, serve_provider],
    resume: [forBrowsers, serve_provider],
    token: [forApps, serve_provider],
    register: [forApps, registration_cors, limitRegistrations(deps), serve_provider],
    client: [forApps, serve_provider],
    // POST is ours (revocation.ts); the preflight stays with oidc-provider.
    revoke: [forApps, revoke_token, serve_provider],
    css: [serveAsset('css')],
    js: [serveAsset('js')],
    interaction: [forBrowsers, answer_interaction_problem, pages.show_interaction],
    signedIn: [forBrowsers, answer_interaction_problem, pages.show_signed_in],
    signedInPosted: [forBrowsers, answer_interaction_problem, pages.submit_login],
    login: [forBrowsers, answer_interaction_problem, pages.submit_login],
    consent: [forBrowsers, answer_interaction_problem, pages.submit_consent],
  };
}
