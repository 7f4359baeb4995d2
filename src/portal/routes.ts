// The portal pages' routes on the app host: a loved one's portal connections, the portal sign-in's return, the changes, and carecircle's portal key set.
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
  // The public keys a health system checks carecircle's private_key_jwt assertions with, readable by anyone.
  portalJwks: { hosts: ['app'], path: '/.well-known/portal-jwks.json', methods: ['GET'], cors: 'public-read' },
});
