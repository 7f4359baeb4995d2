// The apex host ({apex_url}): every request but the health probes, whatever its path or method,
// gets a permanent redirect to the same path and query on SITE_URL. 308 keeps a POST's method and body.
import Koa from 'koa';
import type { GatewayDeps } from './context.js';
import { refuse_foreign_host } from './hostCheck.js';
import { serve_health } from './middleware.js';

export function createApexApp(deps: Pick<GatewayDeps, 'config' | 'bus' | 'store'>): Koa {
  const { config } = deps;
  const app = new Koa({ proxy: config.trustProxy });
  // Probes first, as on every listener: an orchestrator probes the apex port by pod address, and a
  // redirect (cached a day) or a 421 would report a live process as failing.
  app.use(serve_health(deps));
  app.use(refuse_foreign_host(config.apexUrl, config.trustProxy));
  app.use(async (ctx) => {
    // ctx.url is the raw request target: the path and query exactly as the client sent them.
    const target = ctx.url.startsWith('/') ? ctx.url : `/${ctx.url}`;
    ctx.status = 308;
    ctx.set('Location', `${config.siteUrl}${target}`);
    ctx.set('Cache-Control', 'public, max-age=86400');
    ctx.type = 'text/plain; charset=utf-8';
    ctx.body = `Moved permanently to ${config.siteUrl}${target}\n`;
  });
  return app;
}
