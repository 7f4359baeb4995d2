// The portal pages' routes on the app host: a loved one's portal connections, the portal sign-in's return, and the changes.
import { appPage } from '../app/routeTable.js';
import { defineRoutes } from '../slice/contract.js';

export const PORTAL_ROUTES = defineRoutes({
  portalPage: appPage('/care/:lovedOneId/portal', ['GET']),
  portalConnect: appPage('/care/:lovedOneId/portal/connect', ['POST']),
  portalConfirm: appPage('/care/:lovedOneId/portal/:key/confirm', ['POST']),
  portalSync: appPage('/care/:lovedOneId/portal/:key/sync', ['POST']),
  portalDisconnect: appPage('/care/:lovedOneId/portal/:key/disconnect', ['POST']),
  // The portal sends the browser back with a code and state in the query: the log shows the pattern only.
  portalCallback: { ...appPage('/portal/callback', ['GET']), logPattern: true },
});
