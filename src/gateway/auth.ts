// The authorization host ({auth_url}): sign-in and OAuth. The one gateway with logic of its own (DESIGN
// rule 1): the identity and authorization servers are Koa apps storing state in MongoDB.
import Koa from 'koa';
import { identityProvider } from '../config.js';
import { devIdpRouter } from '../identity/devIdp.js';
import { authorizationServer } from '../oauth/server.js';
import { sendApiError } from '../http/apiError.js';
import type { GatewayDeps } from './context.js';
import { assign_request_id, log_request, serve_health } from './middleware.js';

export function createAuthApp(deps: GatewayDeps): Koa {
  const app = new Koa({ proxy: deps.config.trustProxy });
  app.use(assign_request_id);
  app.use(log_request(deps, 'auth'));
  app.use(async (ctx, next) => {
    try {
      await next();
    } catch (err) {
      deps.log.error({ err, requestId: ctx.state.requestId }, 'auth failure');
      sendApiError(ctx, 500, 'INTERNAL', 'Something went wrong on our side', `Try again; quote request id ${ctx.state.requestId} if it persists.`);
    }
  });
  app.use(serve_health(deps));
  if (identityProvider(deps.config).development) {
    const dev = devIdpRouter(deps.config, deps.store.db);
    app.use(dev.routes());
    app.use(dev.allowedMethods());
  }
  // The OAuth 2.1 authorization server (src/oauth/): /oauth/*, discovery and its key set.
  for (const mw of authorizationServer(deps)) app.use(mw);
  app.use(async (ctx) => sendApiError(ctx, 404, 'NOT_FOUND', `Nothing at ${ctx.path}`, 'This host serves sign-in and OAuth.'));
  return app;
}
