// Settings → Connected apps on the app host: the OAuth grants a caregiver gave (app name, scopes,
// last use) and revoking one, which ends the app's access on its very next request.
import type { Credentials } from '../auth/credentials.js';
import type { Db } from 'mongodb';
import { scopesIn, SCOPE_TEXT } from '../auth/scopes.js';
import type { HttpReplyEnvelope, HttpRequestEnvelope } from '../bus/envelopes.js';
import type { SessionCaller } from '../auth/sessions.js';
import type { Markup } from '../http/html.js';
import { redirect } from '../http/page.js';
import { ApiProblem, json } from '../http/reply.js';
import { OAuthStore, type ConnectedApp } from '../oauth/store.js';
import type { AppRouteBuilder } from './routeTable.js';
import { stamp, type Clock } from './time.js';

/** What these routes need of the app's helpers (AppHelpers has them): named here so this module
 *  does not import the routes module that renders its section. */
export interface ConnectedAppsHelpers {
  currentCaller(req: HttpRequestEnvelope): Promise<SessionCaller | null>;
  requireCaller(req: HttpRequestEnvelope): Promise<{ uid: string }>;
  pageFor(status: number, title: string, body: Markup, caller?: SessionCaller | null): HttpReplyEnvelope;
  signedOutPage(next: string): HttpReplyEnvelope;
}

export function connectedAppsSection(apps: ConnectedApp[], clock: Clock) {
  const when = (d: Date | undefined) => stamp(clock, d);
  const rows = apps.length ? (
    <table id="connected-apps-list" class="stack">
      <caption>Apps connected with OAuth</caption>
      <thead>
        <tr>
          <th scope="col">App</th>
          <th scope="col">May read</th>
          <th scope="col">Connected</th>
          <th scope="col">Last used</th>
          <th scope="col">Action</th>
        </tr>
      </thead>
      <tbody>
        {apps.map((a) => {
          const scopes = scopesIn(a.scope);
          return (
            <tr data-grant-id={a.grantId}>
              <td data-label="App">
                {a.clientName}
                <br />
                <span class="muted">{a.redirectHosts.join(', ')}</span>
              </td>
              <td class="scopes" data-label="May read">
                {scopes.length ? (
                  scopes.map((s, i) => (
                    <>
                      {i > 0 ? <br /> : null}
                      {SCOPE_TEXT[s].title} <code>{s}</code>
                    </>
                  ))
                ) : (
                  <span class="muted">nothing (connection check only)</span>
                )}
              </td>
              <td data-label="Connected">{when(a.createdAt)}</td>
              <td class="last-used" data-label="Last used">
                {when(a.lastUsedAt)}
              </td>
              <td>
                <a class="button danger" href={`/settings/apps/${encodeURIComponent(a.grantId)}/revoke`}>
                  Revoke {a.clientName}
                </a>
              </td>
            </tr>
          );
        })}
      </tbody>
    </table>
  ) : (
    <p class="muted">No apps connected yet.</p>
  );
  return (
    <section class="card">
      <h2 id="connected-apps">Connected apps</h2>
      <p>
        Apps you connected with OAuth (an assistant that asked you to sign in and tick what it may read). Each reads only what you allowed;{' '}
        <strong>Revoke</strong> ends its access on its very next request.
      </p>
      {rows}
    </section>
  );
}

const view = (a: ConnectedApp) => ({
  grantId: a.grantId,
  clientId: a.clientId,
  clientName: a.clientName,
  redirectHosts: a.redirectHosts,
  scopes: scopesIn(a.scope),
  connectedAt: a.createdAt.toISOString(),
  lastUsedAt: a.lastUsedAt?.toISOString() ?? null,
});

/** The page form and the JSON API, behind the session cookie (mounted through appRoutes' extend hook). */
export function connectedAppsRoutes(routes: AppRouteBuilder, helpers: ConnectedAppsHelpers, db: Db, credentials: Credentials): void {
  const store = new OAuthStore(db, credentials);
  routes
    .on('settingsAppsRevoke', 'GET', async (req, params) => {
      const id = params.id ?? '';
      const caller = await helpers.currentCaller(req);
      if (!caller) return helpers.signedOutPage(`/settings/apps/${encodeURIComponent(id)}/revoke`);
      const app = (await store.connectedApps(caller.uid)).find((a) => a.grantId === id);
      if (!app)
        return helpers.pageFor(
          404,
          'No such app',
          <p class="error" role="alert">
            That app is not connected to your account any more. <a href="/settings#connected-apps">Back to Settings</a>
          </p>,
          caller,
        );
      const scopes = scopesIn(app.scope);
      return helpers.pageFor(
        200,
        'Revoke an app',
        <>
          <h1>Revoke {app.clientName}'s access?</h1>
          <section class="card" id="confirm">
            <p>
              {app.clientName} ({app.redirectHosts.join(', ')}) may now read:{' '}
              {scopes.length ? scopes.map((sc) => SCOPE_TEXT[sc].title).join(', ') : 'nothing (connection check only)'}. Revoking stops it on its very next
              request; to use it again, connect it again from the app.
            </p>
            <form method="post" action={`/settings/apps/${encodeURIComponent(app.grantId)}/revoke`}>
              <button class="danger" type="submit">
                Revoke {app.clientName}
              </button>
            </form>
            <p>
              <a href="/settings#connected-apps">Keep it connected</a>
            </p>
          </section>
        </>,
        caller,
      );
    })
    .on('settingsAppsRevoke', 'POST', async (req, params) => {
      const caller = await helpers.requireCaller(req);
      await store.revokeGrantOf(caller.uid, params.id ?? '');
      return redirect('/settings#connected-apps');
    })
    .on('apiOauthApps', 'GET', async (req) => json(200, { apps: (await store.connectedApps((await helpers.requireCaller(req)).uid)).map(view) }))
    .on('apiOauthAppsRevoke', 'POST', async (req, params) => {
      const caller = await helpers.requireCaller(req);
      if (!(await store.revokeGrantOf(caller.uid, params.id ?? '')))
        throw new ApiProblem(404, 'NOT_FOUND', 'No such connected app on your account', 'GET /api/oauth/apps lists them.');
      return json(200, { revoked: true, grantId: params.id });
    });
}
