// The portal slice: a family connects a loved one's health-system portal over SMART on FHIR, and
// the clinicians' records (results, medications, conditions, allergies, visits, appointments,
// immunizations) join the loved one's timeline, synced on a schedule and on demand.
import { appHelpers } from '../app/helpers.js';
import { resolveDataKey, SecretBox } from '../partner/secretBox.js';
import { defineSlice, type SliceContext } from '../slice/contract.js';
import { PORTAL_INDEXES, PortalStore } from './connections.js';
import { portalPages } from './pages.js';
import { PORTAL_ROUTES } from './routes.js';
import { portalSweepJob, portalSyncJob } from './sweep.js';

const storeOf = (ctx: SliceContext) => new PortalStore(ctx.db, new SecretBox(resolveDataKey(ctx.config, ctx.log)));

export const portalSlice = defineSlice({
  name: 'portal',
  routes: PORTAL_ROUTES,
  indexes: PORTAL_INDEXES,
  serve: (ctx) =>
    portalPages(appHelpers(ctx.config, ctx.db, ctx.credentials, ctx.timelines), {
      config: ctx.config,
      log: ctx.log,
      store: storeOf(ctx),
      timelines: ctx.timelines,
      clock: ctx.clock,
    }),
  jobs: (ctx) => {
    const store = storeOf(ctx);
    return [portalSweepJob(ctx.config, ctx.db, ctx.credentials, store, ctx.log), portalSyncJob(ctx.config, store, ctx.timelines, ctx.clock, ctx.log)];
  },
});
