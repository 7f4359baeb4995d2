// The apex host ({apex_url}): every request, whatever its path or method, gets a permanent
// redirect to the same path and query on SITE_URL. 308 keeps the method and body of a POST.
import Koa from 'koa';
import type { Config } from '../config.js';
import { refuse_foreign_host } from './hostCheck.js';

export function createApexApp(config: Pick<Config, 'siteUrl' | 'apexUrl' | 'trustProxy'>): Koa {
  const app = new Koa({ proxy: config.trustProxy });
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
