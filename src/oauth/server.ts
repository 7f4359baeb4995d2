// The authorization server on the auth host ({auth_url}): oidc-provider mounted at the root with
// its endpoints under /oauth/*, plus what is ours around it: the registration rate limit, sign-in
// through the identity provider, the per-scope consent page, and key rotation (the provider is
// rebuilt with the new keys when a rotation period begins).
import Router from '@koa/router';
import type { Context, Middleware, Next } from 'koa';
import type Provider from 'oidc-provider';
import { SCOPES, scopesIn } from '../auth/scopes.js';
import { identityProvider } from '../config.js';
import { BodyError, readRawBody } from '../http/body.js';
import { cspSourceFor } from '../http/csp.js';
import type { SliceContext } from '../slice/contract.js';
import { createIdTokenVerifier, IdTokenError } from '../identity/verify.js';
import { resolveDataKey, SecretBox } from '../partner/secretBox.js';
import { hashToken, SessionStore } from '../auth/sessions.js';
import { WorkspaceStore } from '../family/records.js';
import { accessTokenVerifier, workspaceResource, workspaceResourceForms } from './accessTokens.js';
import { clientIdUrlProblem, refusalIn } from './clientMetadata.js';
import { OAuthKeys } from './keys.js';
import { ASSET_PATHS, consentPage, errorPage, OAUTH_CSS, OAUTH_JS, renderAsPage, signedInPage } from './pages.js';
import { interactionPath, OAUTH_ROUTES } from './paths.js';
import { pinToIssuer } from './pinIssuer.js';
import type * as ProviderModule from './provider.js';
import { revocationEndpoint } from './revocation.js';
import { OAuthStore } from './store.js';
import { countRateLimited } from '../metrics/index.js';
import { countDatabaseError, isTransient, RETRY_AFTER_SEC } from '../bus/failures.js';

const DISCOVERY_PATHS = new Set(['/.well-known/oauth-authorization-server', '/.well-known/openid-configuration']);
const isProviderPath = (path: string) => path.startsWith('/oauth/') || DISCOVERY_PATHS.has(path) || path === OAUTH_ROUTES.jwks;
/** Where a person's browser is, not an app: the authorization request and its sign-in and consent steps. */
const isBrowserPath = (path: string) => path.startsWith(OAUTH_ROUTES.authorization) || path.startsWith('/oauth/interaction/');

interface Running {
  period: number;
  provider: Provider;
  run: (ctx: Context, next: Next) => Promise<unknown>;
}

/** Koa's compose, for running the provider's middleware inside our app (as koa-mount would). */
function compose(middleware: Middleware[]): (ctx: Context, next: Next) => Promise<unknown> {
  return (ctx, next) => {
    const dispatch = async (i: number): Promise<unknown> => (i === middleware.length ? next() : middleware[i]!(ctx, () => dispatch(i + 1) as Promise<void>));
    return dispatch(0);
  };
}

/** A refusal on one of our interaction pages, answered as an HTML page with the OAuth error code. */
class InteractionProblem extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly hint: string,
  ) {
    super(message);
  }
}

export function authorizationServer(deps: Pick<SliceContext, 'config' | 'log' | 'db' | 'timelines' | 'limiter' | 'credentials'>): Middleware[] {
  const { config, log, credentials } = deps;
  const db = deps.db;
  const store = new OAuthStore(db, credentials);
  const users = new WorkspaceStore(db, credentials, config.inboxDomain, deps.timelines);
  const sessions = new SessionStore(db, credentials);
  const idp = identityProvider(config);
  const verifyIdToken = createIdTokenVerifier(idp);
  const issuer = new URL(config.authUrl);
  const authOrigin = issuer.origin;
  const resourceForms = workspaceResourceForms(config);
  let keys: OAuthKeys | undefined;
  let cookieKeys: string[] | undefined;
  let running: Running | undefined;
  let lib: typeof ProviderModule | undefined;
  let building: Promise<Running> | undefined;

  async function build(): Promise<Running> {
    // The data key is resolved on first use: it may create DATA_DIR/data.key in a development run.
    keys ??= new OAuthKeys(db, config.oauthKeyRotation, new SecretBox(resolveDataKey(config, log)));
    cookieKeys ??= await keys.cookieKeys();
    const signing = await keys.signingKeys();
    // Loaded on first use: a process that never serves OAuth never loads oidc-provider.
    lib ??= await import('./provider.js');
    const provider = lib.createProvider({ config, log, store, users, signingKeys: signing.keys, signingKid: signing.kid, cookieKeys });
    log.info({ period: signing.period, kid: signing.kid }, 'oauth signing key in use');
    return { period: signing.period, provider, run: compose(provider.middleware as Middleware[]) };
  }

  /** The provider for the current rotation period (one build at a time; requests wait for it). */
  async function current(): Promise<Running> {
    if (running && keys && running.period === keys.period()) return running;
    building ??= build()
      .then((r) => (running = r))
      .finally(() => (building = undefined));
    return building;
  }

  const registrationPolicy = { capacity: config.rateOauthRegisterPerHour, refillMs: Math.ceil(3_600_000 / config.rateOauthRegisterPerHour) };
  /** Open registration, callable from browser-based clients (CORS), rate-limited per address. */
  const registration_edge: Middleware = async (ctx, next) => {
    if (ctx.path !== OAUTH_ROUTES.registration) return next();
    ctx.set('Access-Control-Allow-Origin', '*');
    if (ctx.method === 'OPTIONS') {
      ctx.set('Access-Control-Allow-Methods', 'POST');
      ctx.set('Access-Control-Allow-Headers', 'Content-Type');
      ctx.set('Access-Control-Max-Age', '3600');
      ctx.status = 204;
      return;
    }
    if (ctx.method !== 'POST') return next();
    const taken = await deps.limiter.take(`oauth-register:ip:${ctx.ip}`, registrationPolicy);
    if (taken.allowed) return next();
    countRateLimited('oauth-register');
    ctx.status = 429;
    ctx.set('Retry-After', String(taken.retryAfterSec));
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { error: 'temporarily_unavailable', error_description: `Too many client registrations from this address; try again in ${taken.retryAfterSec} s.` };
  };

  /** A client_id that is a URL but cannot be a metadata document URL: oidc-provider would only say "client is invalid". */
  const metadata_url_check: Middleware = async (ctx, next) => {
    const clientId = ctx.path === OAUTH_ROUTES.authorization && ctx.method === 'GET' ? ctx.query.client_id : undefined;
    const problem = typeof clientId === 'string' && clientId.includes(':') ? clientIdUrlProblem(clientId) : undefined;
    if (!problem) return next();
    // A page, as oidc-provider answers every authorization error it cannot send back to the app.
    renderAsPage(ctx, 400, 'Connection refused', errorPage('invalid_client', `${problem} (a client_id that is a URL names a Client ID Metadata Document)`, 'The app needs updating; tell its developer.'));
  };

  /**
   * The one outage answer of the authorization server: a dependency that cannot be reached now (the
   * database, the shared rate limit), met by any step below, is 503 with Retry-After in the OAuth
   * error format. JSON for the endpoints apps call; a page where a browser is (authorize, sign-in
   * and consent), because without the store the app's redirect URI cannot be checked, so nothing
   * is sent back to the app.
   */
  const answer_unavailable: Middleware = async (ctx, next) => {
    try {
      await next();
    } catch (err) {
      if (!isTransient(err) || !isProviderPath(ctx.path)) throw err;
      countDatabaseError(err);
      log.warn({ err, requestId: ctx.state.requestId }, 'oauth dependency unavailable');
      const description = `The authorization server cannot reach its storage right now; try again in ${RETRY_AFTER_SEC} s.`;
      ctx.set('Retry-After', String(RETRY_AFTER_SEC));
      ctx.set('Cache-Control', 'no-store');
      if (isBrowserPath(ctx.path)) return renderAsPage(ctx, 503, 'Try again shortly', errorPage('temporarily_unavailable', description, 'Wait a moment, then go back to your app and connect again.'));
      ctx.status = 503;
      ctx.body = { error: 'temporarily_unavailable', error_description: description };
    }
  };

  const serve_provider: Middleware = async (ctx, next) => {
    if (!isProviderPath(ctx.path)) return next();
    const { run } = await current();
    // The provider's cookies are signed with keys every gateway process shares.
    if (!ctx.app.keys) ctx.app.keys = cookieKeys!;
    pinToIssuer(ctx, issuer);
    await run(ctx, next);
    // The provider answered an outage as its own fault (500): raised again for answer_unavailable.
    const failure = lib!.transientFailureOf(ctx);
    if (failure) throw failure;
    // Discovery lists the scopes of the workspace endpoint, not the OpenID ones we do not offer to apps.
    if (DISCOVERY_PATHS.has(ctx.path) && ctx.status === 200 && ctx.body && typeof ctx.body === 'object') ctx.body = { ...(ctx.body as object), scopes_supported: [...SCOPES] };
  };

  const requireSameOrigin = (ctx: Context) => {
    if (ctx.get('origin') && ctx.get('origin') !== authOrigin) throw new InteractionProblem(403, 'access_denied', 'This form was sent from another site.', 'Start the connection again from your app.');
  };

  async function details(ctx: Context, provider: Provider, expected: 'login' | 'consent' | undefined) {
    let interaction;
    try {
      interaction = await provider.interactionDetails(ctx.req, ctx.res);
    } catch (err) {
      if (lib?.isSessionNotFound(err)) throw new InteractionProblem(400, 'invalid_request', 'This sign-in step has expired or was opened in another browser.', 'Go back to your app and connect again.');
      throw err;
    }
    if (interaction.uid !== ctx.params.uid) throw new InteractionProblem(400, 'invalid_request', 'This sign-in step does not match the one in progress.', 'Go back to your app and connect again.');
    if (expected && interaction.prompt.name !== expected) throw new InteractionProblem(400, 'invalid_request', 'This step is already done.', 'Go back to your app and connect again.');
    return interaction;
  }

  const redirectUriOf = (params: Record<string, unknown>) => (typeof params.redirect_uri === 'string' ? params.redirect_uri : undefined);
  const indicatorOf = (params: Record<string, unknown>) => (typeof params.resource === 'string' && resourceForms.includes(params.resource) ? params.resource : workspaceResource(config));
  const formOf = async (ctx: Context) => new URLSearchParams((await readRawBody(ctx, 16 * 1024)).toString('utf8'));
  const seeOther = (ctx: Context, location: string) => {
    ctx.status = 303;
    ctx.set('Cache-Control', 'no-store');
    ctx.redirect(location);
  };

  type Interaction = Awaited<ReturnType<Provider['interactionDetails']>>;
  async function renderConsent(ctx: Context, provider: Provider, interaction: Interaction, problem?: string) {
    const { params, session } = interaction;
    const [client, user, grant] = await Promise.all([
      // A metadata document is fetched again once its cache time is up, and may be refused now.
      provider.Client.find(String(params.client_id)).catch((err: unknown) => {
        const refusal = refusalIn(err);
        if (refusal) throw new InteractionProblem(400, 'invalid_client', refusal.message, 'The app needs updating; tell its developer.');
        throw err;
      }),
      session ? users.user(session.accountId) : null,
      interaction.grantId ? provider.Grant.find(interaction.grantId) : undefined,
    ]);
    if (!client || !user) throw new InteractionProblem(400, 'invalid_request', 'The app or your account is no longer known.', 'Go back to your app and connect again.');
    const redirectUri = redirectUriOf(params);
    renderAsPage(
      ctx,
      problem ? 400 : 200,
      'Connect an app',
      consentPage({
        uid: interaction.uid,
        clientName: client.clientName ?? 'An unnamed app',
        ...(client.clientUri ? { clientUri: client.clientUri } : {}),
        ...((client as { clientIdMetadataDocument?: boolean }).clientIdMetadataDocument ? { documentUrl: client.clientId } : {}),
        ...(redirectUri ? { redirectUri } : {}),
        email: user.email,
        requested: scopesIn(typeof params.scope === 'string' ? params.scope : undefined),
        approved: grant ? scopesIn(grant.getResourceScope(indicatorOf(params))) : [],
        settingsUrl: `${config.appUrl}/settings#connected-apps`,
        ...(problem ? { problem } : {}),
      }),
      cspSourceFor(redirectUri),
    );
  }

  const router = new Router();
  router.get(ASSET_PATHS.css, (ctx) => {
    ctx.type = 'text/css; charset=utf-8';
    ctx.set('Cache-Control', 'public, max-age=300');
    ctx.body = OAUTH_CSS;
  });
  router.get(ASSET_PATHS.js, (ctx) => {
    ctx.type = 'text/javascript; charset=utf-8';
    ctx.set('Cache-Control', 'public, max-age=300');
    ctx.body = OAUTH_JS;
  });

  // Where /oauth/authorize sends the browser: sign in first, then consent.
  router.get('/oauth/interaction/:uid', async (ctx) => {
    const { provider } = await current();
    const interaction = await details(ctx, provider, undefined);
    const { prompt } = interaction;
    if (prompt.name === 'login') {
      return seeOther(ctx, `${idp.loginUrl}?return_to=${encodeURIComponent(`${config.authUrl}${interactionPath(interaction.uid)}/signed-in`)}`);
    }
    if (prompt.name !== 'consent') throw new InteractionProblem(400, 'invalid_request', 'This step is not one we know.', 'Go back to your app and connect again.');
    await renderConsent(ctx, provider, interaction);
  });

  // The identity provider returns here with the ID token in the fragment; the page posts it on.
  router.get('/oauth/interaction/:uid/signed-in', async (ctx) => {
    const { provider } = await current();
    const interaction = await details(ctx, provider, 'login');
    renderAsPage(ctx, 200, 'Signing in', signedInPage(interaction.uid), cspSourceFor(redirectUriOf(interaction.params)));
  });

  router.post('/oauth/interaction/:uid/login', async (ctx) => {
    requireSameOrigin(ctx);
    const { provider } = await current();
    await details(ctx, provider, 'login');
    const form = await formOf(ctx);
    const idToken = form.get('id_token') ?? '';
    let identity;
    try {
      identity = await verifyIdToken(idToken);
    } catch (err) {
      if (err instanceof IdTokenError) throw new InteractionProblem(401, 'login_required', `Sign-in failed: ${err.message}.`, 'Go back to your app and connect again.');
      throw err;
    }
    // A token whose session was signed out signs no one in again, here either.
    if (await sessions.idTokenSignedOut(hashToken(idToken))) throw new InteractionProblem(401, 'login_required', 'Sign-in failed: this sign-in was signed out.', 'Go back to your app and connect again.');
    await users.upsertUser(identity);
    const to = await provider.interactionResult(ctx.req, ctx.res, { login: { accountId: identity.uid } }, { mergeWithLastSubmission: false });
    seeOther(ctx, to);
  });

  router.post('/oauth/interaction/:uid/consent', async (ctx) => {
    requireSameOrigin(ctx);
    const { provider } = await current();
    const interaction = await details(ctx, provider, 'consent');
    const form = await formOf(ctx);
    const { params, session } = interaction;
    if (form.get('decision') !== 'allow' || !session) {
      const to = await provider.interactionResult(ctx.req, ctx.res, { error: 'access_denied', error_description: 'The caregiver did not allow this app to connect.' }, { mergeWithLastSubmission: false });
      return seeOther(ctx, to);
    }
    const requestedAll = new Set(typeof params.scope === 'string' ? params.scope.split(' ').filter(Boolean) : []);
    const chosen = new Set(form.getAll('scope'));
    const approved = scopesIn([...requestedAll].join(' ')).filter((s) => chosen.has(s));
    // oidc-provider issues no code for a grant without scope, so an empty "allow" is asked again.
    if (!approved.length) return renderConsent(ctx, provider, interaction, 'Tick at least one box to connect the app, or choose Deny.');
    const declinedOidc = [...requestedAll].filter((s) => (s === 'openid' || (SCOPES as readonly string[]).includes(s)) && !(approved as string[]).includes(s));
    const declined = scopesIn([...requestedAll].join(' ')).filter((s) => !approved.includes(s));
    const indicator = indicatorOf(params);
    const grant = (interaction.grantId ? await provider.Grant.find(interaction.grantId) : undefined) ?? new provider.Grant({ accountId: session.accountId, clientId: String(params.client_id) });
    // This decision replaces any earlier one: exactly the ticked scopes are granted, the rest
    // recorded as declined (so the provider does not ask again), and `openid` is never granted.
    grant.openid = approved.length ? { scope: approved.join(' ') } : undefined;
    grant.resources = approved.length ? { [indicator]: approved.join(' ') } : undefined;
    (grant as unknown as { rejected?: object }).rejected = {
      ...(declinedOidc.length ? { openid: { scope: declinedOidc.join(' ') } } : {}),
      ...(declined.length ? { resources: { [indicator]: declined.join(' ') } } : {}),
    };
    const grantId = await grant.save();
    const to = await provider.interactionResult(ctx.req, ctx.res, { consent: { grantId } }, { mergeWithLastSubmission: true });
    seeOther(ctx, to);
  });

  const routes = router.routes() as unknown as Middleware;
  const interactions: Middleware = async (ctx, next) => {
    try {
      await routes(ctx, next);
    } catch (err) {
      if (err instanceof BodyError) return renderAsPage(ctx, err.status, 'Connection refused', errorPage('invalid_request', err.message, 'Go back to your app and connect again.'));
      if (!(err instanceof InteractionProblem)) throw err;
      renderAsPage(ctx, err.status, 'Connection refused', errorPage(err.code, err.message, err.hint));
    }
  };

  const revocation = revocationEndpoint({ provider: async () => (await current()).provider, store, verifier: accessTokenVerifier(db, credentials, config) });

  return [answer_unavailable, registration_edge, interactions, revocation, metadata_url_check, serve_provider];
}
