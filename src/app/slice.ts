// The app slice: sign-in, the family workspace pages and JSON API, Settings and the family circle.
import { defineSlice } from '../slice/contract.js';
import { connectedAppsRoutes } from './connectedApps.js';
import { familyRoutes } from './family.js';
import { FLASH_INDEXES } from './flash.js';
import { APP_ROUTES } from './routeTable.js';
import { appRoutes } from './routes.js';
import { PUSH_INDEXES } from '../push/subscriptions.js';
import { resolveVapid } from '../push/vapid.js';
import { workspaceApprovals } from '../workspace/approvals.js';

export const appSlice = defineSlice({
  name: 'app',
  routes: APP_ROUTES,
  indexes: { ...FLASH_INDEXES, ...PUSH_INDEXES },
  serve: (ctx) =>
    appRoutes({
      config: ctx.config,
      db: ctx.db,
      credentials: ctx.credentials,
      timelines: ctx.timelines,
      vapidPublicKey: resolveVapid(ctx.config, ctx.log).publicKey,
      approvals: workspaceApprovals(ctx.config, ctx.db, ctx.credentials, ctx.timelines, ctx.log, ctx.bus, { clock: ctx.clock }),
      extend: (routes, helpers) => {
        connectedAppsRoutes(routes, helpers, ctx.db, ctx.credentials);
        familyRoutes(routes, helpers, { config: ctx.config, db: ctx.db, credentials: ctx.credentials });
      },
    }),
});
