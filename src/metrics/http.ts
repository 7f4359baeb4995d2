// Counting and timing every request a Koa listener answers, labelled by the route pattern that
// served it (never the raw path: paths can name people).
import type Koa from 'koa';
import type { Context, Next } from 'koa';
import { metrics } from './registry.js';

/** Label of a request no declared route served. */
export const UNMATCHED = '(unmatched)';

const HEALTH = new Set(['/healthz', '/readyz']);
const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/** The pattern that served the request: koa-router's, the OAuth provider's route name, a probe, or none. */
function routeOf(ctx: Context): string {
  const matched = (ctx as { _matchedRoute?: unknown })._matchedRoute;
  if (typeof matched === 'string') return matched;
  const oidcRoute = (ctx as { oidc?: { route?: unknown } }).oidc?.route;
  if (typeof oidcRoute === 'string' && /^[a-z_]{1,40}$/.test(oidcRoute)) return `oidc:${oidcRoute}`;
  return HEALTH.has(ctx.path) ? ctx.path : UNMATCHED;
}

/** Koa middleware that records every request of `surface`; `route` fixes the label (a listener with one answer). */
export function countRequests(surface: string, route?: string) {
  return async (ctx: Context, next: Next): Promise<void> => {
    const end = metrics.httpDuration.startTimer();
    try {
      await next();
    } finally {
      const labels = { surface, route: route ?? routeOf(ctx), method: METHODS.has(ctx.method) ? ctx.method : 'other' };
      end(labels);
      metrics.httpRequests.inc({ ...labels, status: String(ctx.status) });
    }
  };
}

/** Put the request counter in front of everything else the listener runs (before it is started). */
export function instrumentListener(app: Koa, surface: string, route?: string): Koa {
  app.middleware.unshift(countRequests(surface, route));
  return app;
}
