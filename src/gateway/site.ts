// The site host ({base_url}): public directory MCP endpoint and, later, the site API and pages.
import Router from '@koa/router';
import Koa from 'koa';
import { subjects } from '../bus/subjects.js';
import { perMinute } from '../store/rateLimit.js';
import { sendApiError } from './apiError.js';
import type { GatewayDeps } from './context.js';
import { mcpEndpoint } from './mcpEdge.js';
import { assign_request_id, log_request, serve_health } from './middleware.js';

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

  app.use(assign_request_id);
  app.use(log_request(deps, 'site'));
  app.use(async (ctx, next) => {
    try {
      await next();
    } catch (err) {
      deps.log.error({ err, requestId: ctx.state.requestId }, 'site failure');
      sendApiError(ctx, 500, 'INTERNAL', 'Something went wrong on our side', `Try again; quote request id ${ctx.state.requestId} if it persists.`);
    }
  });
  app.use(serve_health(deps));
  app.use(router.routes());
  app.use(async (ctx) => {
    sendApiError(ctx, 404, 'NOT_FOUND', `Nothing at ${ctx.path}`, 'See /llms.txt for what this site serves.');
  });
  return app;
}
