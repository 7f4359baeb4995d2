// The sign-in and consent steps of an authorization request on the auth host: one handler per
// route, each refusal an InteractionProblem answered as an HTML page with the OAuth error code.
import type { Context, Middleware } from 'koa';
import type Provider from 'oidc-provider';
import { SCOPES, scopesIn } from '../auth/scopes.js';
import { hashToken, type SessionStore } from '../auth/sessions.js';
import type { Config } from '../config.js';
import type { WorkspaceStore } from '../family/records.js';
import { BodyError, readRawBody } from '../http/body.js';
import { cspSourceFor } from '../http/csp.js';
import { IdTokenError, type createIdTokenVerifier } from '../identity/verify.js';
import { workspaceResource } from './accessTokens.js';
import { refusalIn } from './clientMetadata.js';
import { consentPage, errorPage, OAUTH_CSS, OAUTH_JS, renderAsPage, signedInPage } from './pages.js';
import { interactionPath } from './paths.js';
import type { ProviderRuntime } from './runtime.js';

/** A refusal on one of our interaction pages. */
export class InteractionProblem extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly hint: string,
  ) {
    super(message);
  }
}

/** The step in front of every interaction route: its refusals (and unreadable forms) become error pages. */
export const answer_interaction_problem: Middleware = async (ctx, next) => {
  try {
    await next();
  } catch (err) {
    if (err instanceof BodyError)
      return renderAsPage(ctx, err.status, 'Connection refused', errorPage('invalid_request', err.message, 'Go back to your app and connect again.'));
    if (!(err instanceof InteractionProblem)) throw err;
    renderAsPage(ctx, err.status, 'Connection refused', errorPage(err.code, err.message, err.hint));
  }
};

/** The stylesheet or the script of the pages. */
export function serveAsset(kind: 'css' | 'js'): Middleware {
  const [type, body] = kind === 'css' ? ['text/css; charset=utf-8', OAUTH_CSS] : ['text/javascript; charset=utf-8', OAUTH_JS];
  return async (ctx) => {
    ctx.type = type;
    ctx.set('Cache-Control', 'public, max-age=300');
    ctx.body = body;
  };
}

export interface InteractionParts {
  config: Config;
  runtime: ProviderRuntime;
  users: WorkspaceStore;
  sessions: SessionStore;
  verifyIdToken: ReturnType<typeof createIdTokenVerifier>;
  /** Where the identity provider's sign-in page is. */
  loginUrl: string;
  /** The accepted forms of the workspace resource indicator. */
  resourceForms: readonly string[];
}

type Interaction = Awaited<ReturnType<Provider['interactionDetails']>>;

const again = 'Go back to your app and connect again.';
const redirectUriOf = (params: Record<string, unknown>) => (typeof params.redirect_uri === 'string' ? params.redirect_uri : undefined);
const formOf = async (ctx: Context) => new URLSearchParams((await readRawBody(ctx, 16 * 1024)).toString('utf8'));
const seeOther = (ctx: Context, location: string) => {
  ctx.status = 303;
  ctx.set('Cache-Control', 'no-store');
  ctx.redirect(location);
};

/** The handlers of the four interaction routes. */
export function interactionHandlers(parts: InteractionParts) {
  const { config, runtime, users } = parts;
  const authOrigin = new URL(config.authUrl).origin;
  const indicatorOf = (params: Record<string, unknown>) =>
    typeof params.resource === 'string' && parts.resourceForms.includes(params.resource) ? params.resource : workspaceResource(config);

  const requireSameOrigin = (ctx: Context) => {
    if (ctx.get('origin') && ctx.get('origin') !== authOrigin)
      throw new InteractionProblem(403, 'access_denied', 'This form was sent from another site.', 'Start the connection again from your app.');
  };

  async function details(ctx: Context, provider: Provider, expected: 'login' | 'consent' | undefined): Promise<Interaction> {
    let interaction;
    try {
      interaction = await provider.interactionDetails(ctx.req, ctx.res);
    } catch (err) {
      if (runtime.lib()?.isSessionNotFound(err))
        throw new InteractionProblem(400, 'invalid_request', 'This sign-in step has expired or was opened in another browser.', again);
      throw err;
    }
    if (interaction.uid !== ctx.params.uid)
      throw new InteractionProblem(400, 'invalid_request', 'This sign-in step does not match the one in progress.', again);
    if (expected && interaction.prompt.name !== expected) throw new InteractionProblem(400, 'invalid_request', 'This step is already done.', again);
    return interaction;
  }

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
    if (!client || !user) throw new InteractionProblem(400, 'invalid_request', 'The app or your account is no longer known.', again);
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

  /** Where /oauth/authorize sends the browser: sign in first, then consent. */
  const show_interaction: Middleware = async (ctx) => {
    const { provider } = await runtime.current();
    const interaction = await details(ctx, provider, undefined);
    const { prompt } = interaction;
    if (prompt.name === 'login')
      return seeOther(ctx, `${parts.loginUrl}?return_to=${encodeURIComponent(`${config.authUrl}${interactionPath(interaction.uid)}/signed-in`)}`);
    if (prompt.name !== 'consent') throw new InteractionProblem(400, 'invalid_request', 'This step is not one we know.', again);
    await renderConsent(ctx, provider, interaction);
  };

  /** The identity provider returns here with the ID token in the fragment; the page posts it on. */
  const show_signed_in: Middleware = async (ctx) => {
    const { provider } = await runtime.current();
    const interaction = await details(ctx, provider, 'login');
    renderAsPage(ctx, 200, 'Signing in', signedInPage(interaction.uid), cspSourceFor(redirectUriOf(interaction.params)));
  };

  const submit_login: Middleware = async (ctx) => {
    requireSameOrigin(ctx);
    const { provider } = await runtime.current();
    await details(ctx, provider, 'login');
    const form = await formOf(ctx);
    const idToken = form.get('id_token') ?? '';
    let identity;
    try {
      identity = await parts.verifyIdToken(idToken);
    } catch (err) {
      if (err instanceof IdTokenError) throw new InteractionProblem(401, 'login_required', `Sign-in failed: ${err.message}.`, again);
      throw err;
    }
    // A token whose session was signed out signs no one in again, here either.
    if (await parts.sessions.idTokenSignedOut(hashToken(idToken)))
      throw new InteractionProblem(401, 'login_required', 'Sign-in failed: this sign-in was signed out.', again);
    await users.upsertUser(identity);
    const to = await provider.interactionResult(ctx.req, ctx.res, { login: { accountId: identity.uid } }, { mergeWithLastSubmission: false });
    seeOther(ctx, to);
  };

  const submit_consent: Middleware = async (ctx) => {
    requireSameOrigin(ctx);
    const { provider } = await runtime.current();
    const interaction = await details(ctx, provider, 'consent');
    const form = await formOf(ctx);
    const { params, session } = interaction;
    if (form.get('decision') !== 'allow' || !session) {
      const to = await provider.interactionResult(
        ctx.req,
        ctx.res,
        { error: 'access_denied', error_description: 'The caregiver did not allow this app to connect.' },
        { mergeWithLastSubmission: false },
      );
      return seeOther(ctx, to);
    }
    const requestedAll = new Set(typeof params.scope === 'string' ? params.scope.split(' ').filter(Boolean) : []);
    const chosen = new Set(form.getAll('scope'));
    const approved = scopesIn([...requestedAll].join(' ')).filter((s) => chosen.has(s));
    // oidc-provider issues no code for a grant without scope, so an empty "allow" is asked again.
    if (!approved.length) return renderConsent(ctx, provider, interaction, 'Tick at least one box to connect the app, or choose Deny.');
    // Adding to the record without reading it would leave the app writing blind.
    if (approved.every((s) => s === 'care_circle:write'))
      return renderConsent(ctx, provider, interaction, 'Tick at least one thing the app may read: it adds to the care record only alongside reading it.');
    const declinedOidc = [...requestedAll].filter((s) => (s === 'openid' || (SCOPES as readonly string[]).includes(s)) && !(approved as string[]).includes(s));
    const declined = scopesIn([...requestedAll].join(' ')).filter((s) => !approved.includes(s));
    const indicator = indicatorOf(params);
    const grant =
      (interaction.grantId ? await provider.Grant.find(interaction.grantId) : undefined) ??
      new provider.Grant({ accountId: session.accountId, clientId: String(params.client_id) });
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
  };

  return { show_interaction, show_signed_in, submit_login, submit_consent };
}
