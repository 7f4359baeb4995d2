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

type Series = { duration: ReturnType<typeof metrics.httpDuration.labels>; count: ReturnType<typeof metrics.httpRequests.labels> };

/** Records one answered request of `surface` under its route pattern (what countRequests does per request). */
export function requestRecorder(surface: string) {
  // The series of each label set, looked up once: the labels are declared routes, methods and
  // statuses, so there are few, and prom-client's own lookup hashes the labels on every call.
  const series = new Map<string, Series>();
  return (route: string, method: string, statusCode: number, started: number): void => {
    const labels = { surface, route, method: METHODS.has(method) ? method : 'other' };
    const status = String(statusCode);
    const key = `${labels.route}\n${labels.method}\n${status}`;
    let s = series.get(key);
    if (!s) series.set(key, (s = { duration: metrics.httpDuration.labels(labels), count: metrics.httpRequests.labels({ ...labels, status }) }));
    s.duration.observe((performance.now() - started) / 1000);
    s.count.inc();
  };
}

/** Koa middleware that records every request of `surface`; `route` fixes the label of all but the
 *  health probes (a listener with one answer, the apex). */
export function countRequests(surface: string, route?: string) {
  const record = requestRecorder(surface);
  return async (ctx: Context, next: Next): Promise<void> => {
    const started = performance.now();
    try {
      await next();
    } finally {
      record(route !== undefined && !HEALTH.has(ctx.path) ? route : routeOf(ctx), ctx.method, ctx.status, started);
    }
  };
}

/** Put the request counter in front of everything else the listener runs (before it is started). */
export function instrumentListener(app: Koa, surface: string, route?: string): Koa {
  app.middleware.unshift(countRequests(surface, route));
  return app;
}
