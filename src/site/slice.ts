// The site slice: the public pages, their markdown twins and the discovery documents that
// describe every slice of the service.
import { loadDirectory } from '../directory/handler.js';
import { defineSlice, handlers } from '../slice/contract.js';
import { discoveryHandlers } from './discoveryHandler.js';
import { pagesHandlers } from './pagesHandler.js';
import { SITE_ROUTES } from './routes.js';

export const siteSlice = defineSlice({
  name: 'site',
  routes: SITE_ROUTES,
  serve: (ctx) => {
    const directory = loadDirectory(ctx.config.siteUrl);
    return handlers(SITE_ROUTES)
      .with(discoveryHandlers(ctx.config, directory, ctx.slices))
      .with(pagesHandlers(ctx.config, ctx.db, ctx.credentials, directory, ctx.limiter))
      .done();
  },
});
