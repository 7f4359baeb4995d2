// The sandbox slice: workspaces evaluator agents start without signing in, claimed later by a person.
import { appHelpers } from '../app/helpers.js';
import { defineSlice, handlers } from '../slice/contract.js';
import { sandboxAppRoutes } from './claim.js';
import { SANDBOX_ENDPOINT } from './endpoint.js';
import { sandboxEndpoint } from './handler.js';
import { SANDBOX_ROUTES } from './routes.js';
import { SANDBOX_INDEXES } from './service.js';
import { sandboxSweepJob } from './sweep.js';

export const sandboxSlice = defineSlice({
  name: 'sandbox',
  routes: SANDBOX_ROUTES,
  mcp: [SANDBOX_ENDPOINT],
  indexes: SANDBOX_INDEXES,
  serve: (ctx) => {
    const endpoint = sandboxEndpoint(ctx.config, ctx.db, ctx.credentials, ctx.timelines, ctx.bus, ctx.limiter, ctx.log);
    const routes = handlers(SANDBOX_ROUTES).on('mcp', 'GET', endpoint).on('mcp', 'POST', endpoint);
    sandboxAppRoutes(routes, appHelpers(ctx.config, ctx.db, ctx.credentials, ctx.timelines), ctx.config, ctx.db, ctx.credentials);
    return routes.done();
  },
  jobs: (ctx) => [sandboxSweepJob(ctx.config, ctx.db, ctx.credentials, ctx.timelines)],
});
