// The app host ({app_url}): workspace MCP endpoint, session helpers, pages and JSON API.
import { createHash } from 'node:crypto';
import Router from '@koa/router';
import Koa from 'koa';
import { subjects } from '../bus/subjects.js';
import { perMinute } from '../store/rateLimit.js';
import { apiEndpoint } from './apiEdge.js';
import type { GatewayDeps } from './context.js';
import { mcp_cors, mcpEndpoint } from './mcpEdge.js';
import { listenerBasics } from './middleware.js';

export const APP_MCP_BODY_LIMIT = 256 * 1024;
/** SPEC §B2: the sandbox body is limited to 64 KB. */
export const SANDBOX_BODY_LIMIT = 64 * 1024;

export function createAppApp(deps: GatewayDeps): Koa {
  const app = new Koa({ proxy: deps.config.trustProxy });
  const router = new Router();
  const s = subjects(deps.config.busNamespace);
  const sessionPolicy = perMinute(30);
  const edgePolicy = perMinute(deps.config.rateDirectoryMcpPerMin);
  // SPEC: 60 requests per minute per API key, a bucket of 60 refilled at one a second.
  const keyPolicy = perMinute(deps.config.rateMcpKeyPerMin);

  router.all(
    '/api/mcp',
    ...mcpEndpoint(deps, {
      subject: s.appMcp,
      bodyLimit: APP_MCP_BODY_LIMIT,
      // Bearer callers share a bucket per credential (hashed: the gateway never keeps it);
      // session-cookie callers (in-app agents) are not rate-limited.
      bucket: (ctx) => {
        const auth = ctx.get('authorization');
        return auth ? { key: `mcp-key:${createHash('sha256').update(auth).digest('hex')}`, policy: keyPolicy } : undefined;
      },
      forwardHeaders: ['authorization', 'cookie', 'accept', 'mcp-protocol-version'],
    }),
  );
  router.all(
    '/api/mcp/public',
    ...mcpEndpoint(deps, {
      subject: s.appSandbox,
      bodyLimit: SANDBOX_BODY_LIMIT,
      // The SPEC's 6-an-hour bucket is spent by creations, which only a worker can recognise;
      // the edge keeps a general per-address limit on everything else.
      bucket: (ctx) => ({ key: `sandbox-endpoint:ip:${ctx.ip}`, policy: edgePolicy }),
      forwardHeaders: ['accept', 'mcp-protocol-version'],
    }),
  );
  router.all(['/.well-known/oauth-protected-resource', '/.well-known/oauth-protected-resource/api/mcp'], mcp_cors(deps), ...apiEndpoint(deps, { subject: s.appWeb, methods: ['GET'] }));
  router.all(
    '/api/auth/session',
    ...apiEndpoint(deps, { subject: s.session, methods: ['POST'], bodyLimit: 16 * 1024, bucket: (ctx) => ({ key: `session:ip:${ctx.ip}`, policy: sessionPolicy }) }),
  );
  router.all(['/api/auth/me', '/api/auth/signout'], ...apiEndpoint(deps, { subject: s.session, methods: ['GET', 'POST'], forwardHeaders: ['cookie'] }));
  // The family enters an agency's link code to bind a partner's client to a loved one.
  router.all('/api/family-share/link', ...apiEndpoint(deps, { subject: s.familyShareLink, methods: ['POST'], bodyLimit: 4096, forwardHeaders: ['cookie', 'origin'], idempotent: false }));
  // Pages and the JSON API: the worker routes them and answers 404/405 itself.
  router.all(/^\/(?!api\/mcp)(.*)$/, ...apiEndpoint(deps, { subject: s.appWeb, methods: ['GET', 'POST'], bodyLimit: 32 * 1024, forwardHeaders: ['cookie', 'origin', 'accept'] }));

  for (const m of listenerBasics(deps, 'app')) app.use(m);
  app.use(router.routes());
  return app;
}
