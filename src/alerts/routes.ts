// The alerts' routes on the app host: each member's alert settings, a loved one's reading ranges,
// and the one-click unsubscribe link from a mail.
import { appPage } from '../app/routeTable.js';
import { defineRoutes } from '../slice/contract.js';

export const ALERT_ROUTES = defineRoutes({
  alertSettings: appPage('/settings/alerts', ['GET']),
  alertSettingsFor: appPage('/settings/alerts/:lovedOneId', ['GET', 'POST']),
  alertRanges: appPage('/care/:lovedOneId/alert-ranges', ['GET', 'POST']),
  // RFC 8058: a mail program posts `List-Unsubscribe=One-Click` from its own servers, with no cookie
  // and no Origin; the signed token in the path is the whole authority. The path carries the token,
  // so the request log shows the pattern only.
  unsubscribe: { hosts: ['app'], path: '/alerts/unsubscribe/:token', methods: ['GET', 'POST'], bodyLimit: 1024, logPattern: true },
});
