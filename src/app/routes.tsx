// The app host's pages: sign-in, the family workspace, onboarding, and the modules that add
// Settings and editing. Everything here acts for the signed-in caller only.
import type { Credentials } from '../auth/credentials.js';
import { readFileSync } from 'node:fs';
import type { Db } from 'mongodb';
import type { Config } from '../config.js';
import { KeyStore } from '../keys/keys.js';
import { clearedSessionCookie, readCookie, SESSION_COOKIE, SessionStore } from '../auth/sessions.js';
import { redirect } from '../http/page.js';
import { returnTarget } from '../http/returnTarget.js';
import { ApiProblem, json, text } from '../http/reply.js';
import { sessionOpener } from '../session/handler.js';
import { handlers, type RouteHandlers } from '../slice/contract.js';
import { friendlyIssues, workspaceInput } from './actions.js';
import { appApiRoutes } from './api.js';
import { BRIDGE_FILE, bridgeBundle } from './bridgeDownload.js';
import { isFormToken, newFormToken, WorkspaceCreations } from './creations.js';
import { homeBody } from './home.js';
import { canManage } from '../family/circle.js';
import { editingRoutes } from './editing.js';
import { errorBox, settingsRoutes, zoneDetectForm } from './settings.js';
import type { Approvals } from '../workspace/approvals.js';
import { accountRoutes } from './account.js';
import { pushDevicesRoutes } from './pushDevices.js';
import { appHelpers, type AppHelpers } from './helpers.js';
import { APP_ROUTES, type AppRouteBuilder } from './routeTable.js';
import { AuditLog } from '../workspace/audit.js';
import { SCOPES } from '../auth/scopes.js';
import type { Markup } from '../http/html.js';
import type { Timelines } from '../store/timeline/port.js';

const asset = (name: string) => readFileSync(new URL(`./assets/${name}`, import.meta.url), 'utf8');
/** The rule for where a sign-in may lead, as the page script imports it (see returnTarget.js). */
const returnTargetJs = readFileSync(new URL('../http/returnTarget.js', import.meta.url), 'utf8');

export interface AppRoutesDeps {
  config: Config;
  db: Db;
  credentials: Credentials;
  timelines: Timelines;
  /** The browser's applicationServerKey for web push (the VAPID public key). */
  vapidPublicKey: string;
  /** More of the app slice's routes, built elsewhere (Connected apps). */
  extend?: (routes: AppRouteBuilder, helpers: AppHelpers) => void;
  /** Makes a change waiting in Settings when the person approves it (the workspace's write tools). */
  approvals?: Approvals;
}

export function appRoutes(deps: AppRoutesDeps): RouteHandlers {
  const { config, db, credentials, timelines } = deps;
  const helpers = appHelpers(config, db, credentials, timelines);
  const { store, signInUrl, currentCaller, pageFor, signedOutPage } = helpers;
  const keys = new KeyStore(db, credentials);
  const audit = new AuditLog(timelines);
  const sessions = new SessionStore(db, credentials);
  const creations = new WorkspaceCreations(db, store);
  const openSession = sessionOpener(config, db, credentials, timelines);
  const css = asset('app.css');
  const js = asset('app.js');

  /** The form, with a one-time token: sending it again (a retry after an error, a double click)
   *  lands on the workspace the first submission made. A form shown again after a mistake keeps
   *  its token, since nothing was created. */
  const onboardingForm = (error: Markup = null, formToken = newFormToken()) => (
    <>
      <h1>Create your family workspace</h1>
      <section class="card">
        {error}
        <form method="post" action="/onboarding">
          <input type="hidden" name="formToken" value={formToken} />
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
   *  forms send people here); anything else goes home, so the link cannot send anyone elsewhere.
   *  The page script checks the answer again with the same function before following it. */
  const safeNext = (next: string | undefined): string => returnTarget(next ?? '/', config.appUrl, [config.siteUrl]) ?? '/';
  const siteOrigin = new URL(config.siteUrl).origin;

  const routes = handlers(APP_ROUTES)
    .on('protectedResource', 'GET', protectedResource)
    .on('css', 'GET', async () => text(200, css, 'text/css; charset=utf-8', { 'cache-control': 'public, max-age=300' }))
    .on('js', 'GET', async () => text(200, js, 'text/javascript; charset=utf-8', { 'cache-control': 'public, max-age=300' }))
    .on('returnTargetJs', 'GET', async () => text(200, returnTargetJs, 'text/javascript; charset=utf-8', { 'cache-control': 'public, max-age=300' }))
    .on('bridgeDownload', 'GET', async () => {
      const bundle = await bridgeBundle();
      return text(200, bundle.code, 'text/javascript; charset=utf-8', {
        'content-disposition': `attachment; filename="${BRIDGE_FILE}"`,
        'cache-control': 'public, max-age=300',
        'x-content-type-options': 'nosniff',
      });
    })
    .on('bridgeDownloadSha256', 'GET', async () => {
      const bundle = await bridgeBundle();
      return text(200, `${bundle.sha256}  ${BRIDGE_FILE}\n`, 'text/plain; charset=utf-8', { 'cache-control': 'public, max-age=300' });
    })
    .on('signin', 'GET', async (req) => redirect(signInUrl(safeNext(req.query.next))))
    .on('authCallback', 'GET', async (req) => {
      const next = safeNext(req.query.next);
      return pageFor(
        200,
        'Signing in',
        <>
          <h1>Signing you in…</h1>
          <p id="signin-callback" data-next={next} data-also={siteOrigin} role="status">
            One moment.
          </p>
          <noscript>
            <p class="error" id="signin-needs-script">
              Your identity provider sent this sign-in back in a way only the page's script can read, and scripts are off in this browser.{' '}
              <a href={signInUrl(next)}>Sign in again</a>, or turn JavaScript on for this site.
            </p>
          </noscript>
        </>,
      );
    })
    // The provider posted the ID token (form_post): a browser without script signs in here.
    .on('authCallback', 'POST', async (req) => {
      const next = safeNext(req.query.next);
      const idToken = (req.body as { id_token?: unknown } | undefined)?.id_token;
      const again = (status: number, why: string) =>
        pageFor(
          status,
          'Sign-in failed',
          <>
            <h1>That sign-in did not work</h1>
            <section class="card" id="signin-failed">
              <p role="alert">{why}</p>
              <p>
                <a href={signInUrl(next)}>Sign in again</a>
              </p>
            </section>
          </>,
        );
      if (typeof idToken !== 'string' || idToken === '' || idToken.length > 8192) return again(400, 'The sign-in came back without a token (id_token).');
      let opened;
      try {
        opened = await openSession(idToken);
      } catch (err) {
        if (err instanceof ApiProblem && err.status === 401) return again(401, 'The identity provider’s answer was not accepted, or it was used already.');
        throw err;
      }
      if (!opened) return again(401, 'That sign-in is more than 5 minutes old.');
      return redirect(next, { 'set-cookie': opened.cookie });
    })
    .on('signout', 'POST', async (req) => {
      await sessions.revoke(readCookie(req.headers.cookie, SESSION_COOKIE));
      return redirect('/', { 'set-cookie': clearedSessionCookie(config) });
    })
    .on('home', 'GET', async (req) => {
      const caller = await currentCaller(req);
      if (!caller) return signedOutPage('/');
      const membership = await store.workspaceOf(caller.uid);
      if (!membership) return redirect('/onboarding');
      const [lovedOnes, user] = await Promise.all([store.lovedOnesOf(membership.workspace._id), store.user(caller.uid)]);
      const body = homeBody(membership.workspace.name, lovedOnes, config.appUrl, canManage(membership.member));
      return pageFor(200, membership.workspace.name, [user?.timeZone ? null : zoneDetectForm(), body], caller);
    })
    .on('onboarding', 'GET', async (req) => {
      // A sandbox claim link: /onboarding?workspace=<id> (the sandbox slice serves the claim page).
      if (req.query.workspace) return redirect(`/onboarding/claim?workspace=${encodeURIComponent(req.query.workspace)}`);
      const caller = await currentCaller(req);
      if (!caller) return signedOutPage(`/onboarding${req.query.workspace ? `?workspace=${encodeURIComponent(req.query.workspace)}` : ''}`);
      if (await store.workspaceOf(caller.uid)) return redirect('/');
      return pageFor(200, 'Create your workspace', [zoneDetectForm(), onboardingForm()], caller);
    })
    .on('onboarding', 'POST', async (req) => {
      const caller = await currentCaller(req);
      if (!caller) return redirect('/signin?next=/onboarding');
      const input = workspaceInput.safeParse(req.body ?? {});
      const formToken = (req.body as { formToken?: unknown } | undefined)?.formToken;
      const token = isFormToken(formToken) ? formToken : undefined;
      if (!input.success) {
        if (await store.workspaceOf(caller.uid)) return redirect('/');
        return pageFor(400, 'Create your workspace', onboardingForm(errorBox(friendlyIssues(input.error)), token), caller);
      }
      // A repeat of this submission, or someone who has a workspace already: home, where it is.
      await creations.create(caller, input.data, token);
      return redirect('/');
    });
  appApiRoutes(routes, helpers, { keys, audit, store, db });
  settingsRoutes(routes, helpers, {
    config,
    db,
    credentials,
    keys,
    audit,
    vapidPublicKey: deps.vapidPublicKey,
    ...(deps.approvals ? { approvals: deps.approvals } : {}),
  });
  pushDevicesRoutes(routes, helpers, { config, db });
  accountRoutes(routes, helpers, { config, db, credentials, keys });
  editingRoutes(routes, helpers, db, credentials);
  deps.extend?.(routes, helpers);
  return routes.done();
}
