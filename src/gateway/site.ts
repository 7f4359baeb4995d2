// The site host ({base_url}): public directory MCP endpoint and, later, the site API and pages.
import cors from '@koa/cors';
import Router from '@koa/router';
import Koa from 'koa';
import { subjects } from '../bus/subjects.js';
import { DISCOVERY_PATHS, NEWSLETTER_PAGE_ROUTES, PAGE_ROUTES } from '../site/catalog.js';
import { perMinute } from '../store/rateLimit.js';
import { apiEndpoint } from './apiEdge.js';
import { sendApiError } from '../http/apiError.js';
import type { GatewayDeps } from './context.js';
import { mcpEndpoint } from './mcpEdge.js';
import { listenerBasics } from './middleware.js';

export const SITE_MCP_BODY_LIMIT = 256 * 1024;

export function createSiteApp(deps: GatewayDeps): Koa {
  const app = new Koa({ proxy: deps.config.trustProxy });
  const router = new Router();
  const directoryPolicy = perMinute(deps.config.rateDirectoryMcpPerMin);

  router.all(
    '/api/mcp',
    ...mcpEndpoint(deps, {
      subject: subjects(deps.config.busNamespace).directoryMcp,
      bodyLimit: SITE_MCP_BODY_LIMIT,
      bucket: (ctx) => ({ key: `directory-mcp:ip:${ctx.ip}`, policy: directoryPolicy }),
      forwardHeaders: ['accept', 'mcp-protocol-version'],
    }),
  );

  const sessionPolicy = perMinute(30);
  router.all(
    '/api/auth/session',
    ...apiEndpoint(deps, { subject: subjects(deps.config.busNamespace).session, methods: ['POST'], bodyLimit: 16 * 1024, bucket: (ctx) => ({ key: `session:ip:${ctx.ip}`, policy: sessionPolicy }) }),
  );
  router.all(['/api/auth/me', '/api/auth/signout'], ...apiEndpoint(deps, { subject: subjects(deps.config.busNamespace).session, methods: ['GET', 'POST'], forwardHeaders: ['cookie'] }));

  // Public site: discovery documents and markdown (readable from any origin), pages, newsletter, community.
  const site = subjects(deps.config.busNamespace);
  const anyOrigin = cors({ origin: '*', allowMethods: 'GET, HEAD', exposeHeaders: ['ETag', 'Link', 'Vary', 'X-Request-Id'], maxAge: 86400 });
  for (const path of DISCOVERY_PATHS) router.all(path, anyOrigin, ...apiEndpoint(deps, { subject: site.siteDiscovery, methods: ['GET'], forwardHeaders: ['if-none-match'] }));
  router.all('/api/md', anyOrigin, ...apiEndpoint(deps, { subject: site.sitePages, methods: ['GET'], forwardHeaders: ['accept', 'x-md-original-path', 'if-none-match'] }));
  for (const path of PAGE_ROUTES) router.all(path, ...apiEndpoint(deps, { subject: site.sitePages, methods: ['GET'], forwardHeaders: ['accept', 'if-none-match'] }));
  const newsletterPolicy = { capacity: deps.config.rateNewsletterPerHour, refillMs: 3_600_000 / deps.config.rateNewsletterPerHour };
  router.all(
    '/api/newsletter',
    ...apiEndpoint(deps, { subject: site.newsletter, methods: ['POST'], bodyLimit: 8 * 1024, forwardHeaders: ['accept'], bucket: (ctx) => ({ key: `newsletter:ip:${ctx.ip}`, policy: newsletterPolicy }) }),
  );
  for (const path of NEWSLETTER_PAGE_ROUTES) router.all(path, ...apiEndpoint(deps, { subject: site.newsletter, methods: ['GET', 'POST'], bodyLimit: 1024 }));
  router.all('/api/community', ...apiEndpoint(deps, { subject: site.community, methods: ['GET', 'POST'], bodyLimit: 32 * 1024, forwardHeaders: ['authorization'] }));

  for (const m of listenerBasics(deps, 'site')) app.use(m);
  app.use(router.routes());
  app.use(async (ctx) => {
    sendApiError(ctx, 404, 'NOT_FOUND', `Nothing at ${ctx.path}`, 'See /llms.txt for what this site serves.');
  });
  return app;
}
