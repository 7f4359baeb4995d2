// The app host's pages and JSON API, declared once: sign-in, the family workspace and Settings.
import { perMinute } from '../limits/limiter.js';
import { defineRoutes, type handlers, type HttpMethod, type SameOriginRule } from '../slice/contract.js';

/** Cookie-authenticated changes are accepted only from the app's own pages (CSRF defence). */
const APP_CHANGES: SameOriginRule = { from: ['app'], hint: (origins) => `Changes are accepted only from pages on ${origins}.` };

/** Pages and the JSON API behind the session cookie: forms and JSON up to 32 KB, changes from our pages only. */
export const appPage = <const M extends readonly HttpMethod[]>(path: string, methods: M) =>
  ({ hosts: ['app'], path, methods, bodyLimit: 32 * 1024, forwardHeaders: ['cookie', 'origin', 'accept'], sameOrigin: APP_CHANGES }) as const;

export const APP_ROUTES = defineRoutes({
  // RFC 9728 protected-resource metadata of the workspace MCP endpoint (root and path forms), readable cross-origin.
  protectedResource: {
    hosts: ['app'],
    path: ['/.well-known/oauth-protected-resource', '/.well-known/oauth-protected-resource/api/mcp'],
    methods: ['GET'],
    cors: 'mcp',
  },
  css: appPage('/assets/app.css', ['GET']),
  js: appPage('/assets/app.js', ['GET']),
  // The sign-in's return rule as an ES module, imported by app.js on the sign-in callback page.
  returnTargetJs: appPage('/assets/return-target.js', ['GET']),
  // The stdio bridge as one file to run with node, and its checksum in sha256sum's format (./bridgeDownload.ts).
  bridgeDownload: appPage('/downloads/carecircle-bridge.mjs', ['GET']),
  bridgeDownloadSha256: appPage('/downloads/carecircle-bridge.mjs.sha256', ['GET']),
  signin: appPage('/signin', ['GET']),
  // GET: the provider answered in the URL fragment, which the page script reads. POST: it posted
  // the ID token (form_post), which works without script; only its sign-in page may post it here.
  authCallback: {
    ...appPage('/auth/callback', ['GET', 'POST']),
    sameOrigin: { from: ['idp'], hint: (origins) => `A sign-in is accepted only from the identity provider's page on ${origins}.` },
    // The page itself is free; a posted sign-in counts with POST /api/auth/session.
    rate: { bucket: 'session', by: 'ip', policy: (c) => perMinute(c.rateSessionPerMin), methods: ['POST'] },
  },
  signout: appPage('/signout', ['POST']),
  home: appPage('/', ['GET']),
  onboarding: appPage('/onboarding', ['GET', 'POST']),
  workspaceLovedOnes: appPage('/workspace/loved-ones', ['POST']),
  workspaceName: appPage('/workspace/name', ['GET', 'POST']),
  lovedOneEdit: appPage('/workspace/loved-ones/:id/edit', ['GET', 'POST']),
  lovedOneRemove: appPage('/workspace/loved-ones/:id/remove', ['GET', 'POST']),
  settings: appPage('/settings', ['GET']),
  settingsKeys: appPage('/settings/keys', ['POST']),
  settingsKeysRevoke: appPage('/settings/keys/:id/revoke', ['GET', 'POST']),
  settingsKeysRemove: appPage('/settings/keys/:id/remove', ['POST']),
  settingsConnect: appPage('/settings/connect', ['GET']),
  settingsTimeZone: appPage('/settings/time-zone', ['POST']),
  // A change an assistant asked for, approved or declined by the person (workspace/writeStore.ts).
  settingsWaiting: appPage('/settings/waiting/:id/:decision', ['POST']),
  settingsAppsRevoke: appPage('/settings/apps/:id/revoke', ['GET', 'POST']),
  // Deleting one's own account: a page saying what goes and what stays, then the confirmed post.
  settingsDeleteAccount: appPage('/settings/delete-account', ['GET', 'POST']),
  // Web push (./pushDevices.tsx): a browser leaving the list, after a confirmation; works without script.
  settingsDevicesRemove: appPage('/settings/devices/:id/remove', ['GET', 'POST']),
  // The service worker that shows notifications, at the root so its scope is the whole app.
  serviceWorker: appPage('/sw.js', ['GET']),
  // The Settings script's opt-in, imported by app.js on the Settings page.
  pushJs: appPage('/assets/push.js', ['GET']),
  // A browser's push subscription, posted by the Settings script; the user agent names the device in the list.
  apiPushSubscriptions: { ...appPage('/api/push/subscriptions', ['POST']), forwardHeaders: ['cookie', 'origin', 'accept', 'user-agent'] },
  apiPushUnsubscribe: appPage('/api/push/subscriptions/unsubscribe', ['POST']),
  family: appPage('/family', ['GET']),
  familyInvites: appPage('/family/invites', ['POST']),
  familyInviteRevoke: appPage('/family/invites/:id/revoke', ['POST']),
  familyRemove: appPage('/family/members/:uid/remove', ['GET', 'POST']),
  familyHandOver: appPage('/family/members/:uid/hand-over', ['GET', 'POST']),
  familyAccess: appPage('/family/members/:uid/access', ['POST']),
  familyLeave: appPage('/family/leave', ['GET', 'POST']),
  // An invitation link: its path carries the token, so the request log shows the pattern only.
  join: { ...appPage('/join/:token', ['GET', 'POST']), logPattern: true },
  apiFamily: appPage('/api/family', ['GET']),
  // Idempotency-Key: a retried creation answers as the first did (./creations.ts).
  apiWorkspace: { ...appPage('/api/workspace', ['GET', 'POST']), forwardHeaders: ['cookie', 'origin', 'accept', 'idempotency-key'] },
  apiWorkspaceLovedOnes: appPage('/api/workspace/loved-ones', ['POST']),
  apiKeys: appPage('/api/keys', ['GET', 'POST']),
  apiKeysRevoke: appPage('/api/keys/:id/revoke', ['POST']),
  apiActivity: appPage('/api/activity', ['GET']),
  apiOauthApps: appPage('/api/oauth/apps', ['GET']),
  apiOauthAppsRevoke: appPage('/api/oauth/apps/:id/revoke', ['POST']),
});

export type AppRouteBuilder = ReturnType<typeof handlers<typeof APP_ROUTES>>;
