// The app host's pages: sign-in, the family workspace, and Settings (MCP API keys, connected
// apps, recent MCP activity). Everything here acts for the signed-in caller only.
import { readFileSync } from 'node:fs';
import type { Db } from 'mongodb';
import { type z } from 'zod';
import type { Config } from '../config.js';
import { KeyStore, TooManyKeys, type ApiKeyView } from '../keys/keys.js';
import { connectedAppsSection } from './connectedApps.js';
import { OAuthStore } from '../oauth/store.js';
import { describeIssues } from '../rpc/envelope.js';
import { clearedSessionCookie, readCookie, SESSION_COOKIE, SessionStore, type SessionCaller } from '../auth/sessions.js';
import { redirect } from '../http/page.js';
import { json, text } from '../http/reply.js';
import { handlers, type RouteHandlers } from '../slice/contract.js';
import { createWorkspace, keyInput, lovedOneInput, revokeKey, workspaceInput } from './actions.js';
import { appApiRoutes } from './api.js';
import { homeBody } from './home.js';
import { keyRows } from './keyRows.js';
import { canManage } from '../family/circle.js';
import { appHelpers, type AppHelpers } from './helpers.js';
import { APP_ROUTES, type AppRouteBuilder } from './routeTable.js';
import { AuditLog } from '../workspace/audit.js';
import { SCOPES } from '../auth/scopes.js';
import type { Markup } from '../http/html.js';

const asset = (name: string) => readFileSync(new URL(`./assets/${name}`, import.meta.url), 'utf8');


export interface AppRoutesDeps {
  config: Config;
  db: Db;
  /** More of the app slice's routes, built elsewhere (Connected apps). */
  extend?: (routes: AppRouteBuilder, helpers: AppHelpers) => void;
}

export function appRoutes(deps: AppRoutesDeps): RouteHandlers {
  const { config, db } = deps;
  const helpers = appHelpers(config, db);
  const { store, signInUrl, currentCaller, requireCaller, requireSameOrigin, pageFor, signedOutPage } = helpers;
  const keys = new KeyStore(db);
  const audit = new AuditLog(db);
  const oauthApps = new OAuthStore(db);
  const sessions = new SessionStore(db);
  const css = asset('app.css');
  const js = asset('app.js');

  const formError = (err: z.ZodError) => (
    <p class="error" role="alert">
      {describeIssues(err)}
    </p>
  );

  const onboardingForm = (error: Markup = null) => (
    <>
      <h1>Create your family workspace</h1>
      <section class="card">
        {error}
        <form method="post" action="/onboarding">
          <label for="familyName">Family name</label>
          <input id="familyName" name="familyName" type="text" required maxLength={120} placeholder="The Rivera Family" />
          <label for="firstName">Loved one's first name</label>
          <input id="firstName" name="firstName" type="text" required maxLength={60} />
          <label for="lastName">Loved one's last name</label>
          <input id="lastName" name="lastName" type="text" required maxLength={60} />
          <button type="submit">Create workspace</button>
        </form>
      </section>
    </>
  );

  const settingsPage = async (caller: SessionCaller, minted?: { plaintext: string; key: ApiKeyView }, error: Markup = null) => {
    const [list, activity, apps] = await Promise.all([keys.list(caller.uid), audit.recent(caller.uid, 20), oauthApps.connectedApps(caller.uid)]);
    const mintedBlock = minted ? (
      <section class="card" id="minted">
        <h2>Your new key: copy it now</h2>
        <p>This is the only time it is shown. Store it somewhere safe, such as your assistant's configuration.</p>
        <p class="secret" id="new-key">
          {minted.plaintext}
        </p>
        <button type="button" class="secondary" data-copy="new-key">
          Copy key
        </button>
      </section>
    ) : null;
    const activityRows = activity.length ? (
      <table id="activity">
        <thead>
          <tr>
            <th>When</th>
            <th>Method</th>
            <th>Tool</th>
            <th>Via</th>
            <th>Result</th>
          </tr>
        </thead>
        <tbody>
          {activity.map((a) => (
            <tr>
              <td>{a.at.toISOString().slice(0, 19).replace('T', ' ')}</td>
              <td>{a.method}</td>
              <td>{a.tool ?? ''}</td>
              <td>{a.authMethod}</td>
              <td>{a.success ? 'ok' : 'failed'}</td>
            </tr>
          ))}
        </tbody>
      </table>
    ) : (
      <p class="muted">No MCP requests yet.</p>
    );
    return pageFor(
      200,
      'Settings',
      <>
        <h1>Settings</h1>
        {mintedBlock}
        <section class="card">
          <h2 id="mcp-api-keys">MCP API keys</h2>
          <p>
            An MCP API key lets an AI assistant read your family workspace (read-only) at <code>{config.appUrl}/api/mcp</code>. Revoking a key stops it on its very next request.
          </p>
          {error}
          <form method="post" action="/settings/keys">
            <label for="key-name">Name (optional)</label>
            <input id="key-name" name="name" type="text" maxLength={60} placeholder="Claude Desktop" />
            <button type="submit">Mint a new key</button>
          </form>
          <h2>Your keys</h2>
          {keyRows(list)}
        </section>
        {connectedAppsSection(apps)}
        <section class="card">
          <h2>Recent MCP activity</h2>
          {activityRows}
        </section>
      </>,
      caller,
    );
  };

  // RFC 9728 protected-resource metadata for the workspace MCP endpoint (root and path forms).
  const protectedResource = async () =>
    json(
      200,
      {
        resource: `${config.appUrl}/api/mcp`,
        authorization_servers: [config.authUrl],
        scopes_supported: [...SCOPES],
        bearer_methods_supported: ['header'],
        resource_name: 'carecircle family workspace (MCP)',
        resource_documentation: `${config.siteUrl}/llms.txt`,
      },
      { 'cache-control': 'public, max-age=300' },
    );

  /** Where to go after signing in: a path of the app, or a page of the public site (its community
   *  forms send people here); anything else goes home, so the link cannot send anyone elsewhere. */
  const safeNext = (next: string | undefined): string => {
    if (!next) return '/';
    if (next.startsWith('/') && !next.startsWith('//') && !next.startsWith('/\\')) return next;
    return next.startsWith(`${config.siteUrl}/`) && URL.parse(next)?.origin === new URL(config.siteUrl).origin ? next : '/';
  };

  const routes = handlers(APP_ROUTES)
    .on('protectedResource', 'GET', protectedResource)
    .on('css', 'GET', async () => text(200, css, 'text/css; charset=utf-8', { 'cache-control': 'public, max-age=300' }))
    .on('js', 'GET', async () => text(200, js, 'text/javascript; charset=utf-8', { 'cache-control': 'public, max-age=300' }))
    .on('signin', 'GET', async (req) => redirect(signInUrl(safeNext(req.query.next))))
    .on('authCallback', 'GET', async (req) => {
      const next = safeNext(req.query.next);
      return pageFor(
        200,
        'Signing in',
        <>
          <h1>Signing you in…</h1>
          <p id="signin-callback" data-next={next} role="status">
            One moment.
          </p>
        </>,
      );
    })
    .on('signout', 'POST', async (req) => {
      requireSameOrigin(req);
      await sessions.revoke(readCookie(req.headers.cookie, SESSION_COOKIE));
      return redirect('/', { 'set-cookie': clearedSessionCookie(config) });
    })
    .on('home', 'GET', async (req) => {
      const caller = await currentCaller(req);
      if (!caller) return signedOutPage('/');
      const membership = await store.workspaceOf(caller.uid);
      if (!membership) return redirect('/onboarding');
      const lovedOnes = await store.lovedOnesOf(membership.workspace._id);
      return pageFor(200, membership.workspace.name, homeBody(membership.workspace.name, lovedOnes, config.appUrl, canManage(membership.member)), caller);
    })
    .on('onboarding', 'GET', async (req) => {
      // A sandbox claim link: /onboarding?workspace=<id> (the sandbox slice serves the claim page).
      if (req.query.workspace) return redirect(`/onboarding/claim?workspace=${encodeURIComponent(req.query.workspace)}`);
      const caller = await currentCaller(req);
      if (!caller) return signedOutPage(`/onboarding${req.query.workspace ? `?workspace=${encodeURIComponent(req.query.workspace)}` : ''}`);
      if (await store.workspaceOf(caller.uid)) return redirect('/');
      return pageFor(200, 'Create your workspace', onboardingForm(), caller);
    })
    .on('onboarding', 'POST', async (req) => {
      requireSameOrigin(req);
      const caller = await currentCaller(req);
      if (!caller) return redirect('/signin?next=/onboarding');
      if (await store.workspaceOf(caller.uid)) return redirect('/');
      const input = workspaceInput.safeParse(req.body ?? {});
      if (!input.success) return pageFor(400, 'Create your workspace', onboardingForm(formError(input.error)), caller);
      await createWorkspace(store, caller, input.data);
      return redirect('/');
    })
    .on('workspaceLovedOnes', 'POST', async (req) => {
      requireSameOrigin(req);
      const caller = await requireCaller(req);
      const membership = await store.workspaceOf(caller.uid);
      if (!membership) return redirect('/onboarding');
      if (!canManage(membership.member)) return pageFor(403, 'Add a loved one', <p class="error" role="alert">Only the primary caregiver can add a loved one.</p>, caller);
      const input = lovedOneInput.safeParse(req.body ?? {});
      if (!input.success)
        return pageFor(
          400,
          'Add a loved one',
          <>
            <h1>Add a loved one</h1>
            {formError(input.error)}
            <p>
              <a href="/">Back to the workspace</a>
            </p>
          </>,
          caller,
        );
      await store.addLovedOne(membership.workspace._id, input.data, false);
      return redirect('/');
    })
    .on('settings', 'GET', async (req) => {
      const caller = await currentCaller(req);
      if (!caller) return signedOutPage('/settings');
      return settingsPage(caller);
    })
    .on('settingsKeys', 'POST', async (req) => {
      requireSameOrigin(req);
      const caller = await currentCaller(req);
      if (!caller) return redirect('/signin?next=/settings');
      const input = keyInput.safeParse(req.body ?? {});
      if (!input.success) return settingsPage(caller, undefined, formError(input.error));
      try {
        return await settingsPage(caller, await keys.mint(caller.uid, input.data.name));
      } catch (err) {
        if (err instanceof TooManyKeys)
          return settingsPage(
            caller,
            undefined,
            <p class="error" role="alert">
              {err.message}: revoke one first.
            </p>,
          );
        throw err;
      }
    })
    .on('settingsKeysRevoke', 'POST', async (req, params) => {
      requireSameOrigin(req);
      const caller = await currentCaller(req);
      if (!caller) return redirect('/signin?next=/settings');
      await revokeKey(keys, caller, params.id ?? '');
      return redirect('/settings');
    });
  appApiRoutes(routes, helpers, { keys, audit, store });
  deps.extend?.(routes, helpers);
  return routes.done();
}
