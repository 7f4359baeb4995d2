// The site, app and pipe listeners, built from the slice manifests: every declared route gets the
// edge pipeline of its kind (API, MCP or signed bytes) and is forwarded to its slice's subject.
import { createHash } from 'node:crypto';
import cors from '@koa/cors';
import Router from '@koa/router';
import Koa, { type Context, type Middleware } from 'koa';
import { sendApiError } from '../http/apiError.js';
import {
  compilePath,
  pathsOf,
  sameOriginsOf,
  sliceSubject,
  type Host,
  type HttpMethod,
  type RouteSpec,
  type SameOriginRule,
  type SliceContext,
  type SliceManifest,
} from '../slice/contract.js';
import type { BucketPolicy } from '../limits/limiter.js';
import { leanMcp, type LeanHandler, type LeanRoute } from './leanMcp.js';
import { apiEndpoint, type ApiEdgeOptions } from './apiEdge.js';
import type { GatewayDeps } from './context.js';
import { mcp_cors, mcpEndpoint, type RateBucket } from './mcpEdge.js';
import { listenerBasics } from './middleware.js';
import { signedEndpoint } from './signedEdge.js';

export type ListenerHost = Exclude<Host, 'internal'> | 'auth';

/** What a listener answers for a path no slice declares. */
const NOT_FOUND_HINT: Record<ListenerHost, (path: string) => [string, string]> = {
  site: (path) => [`Nothing at ${path}`, 'See /llms.txt for what this site serves.'],
  app: (path) => [`Nothing at ${path}`, 'Check the path.'],
  pipe: (path) => [`Nothing at ${path.slice(0, 200)}`, 'The ingest is POST /pipe/v1/events; see docs/partners.md.'],
  auth: (path) => [`Nothing at ${path}`, 'This host serves sign-in and OAuth.'],
};

const publicRead = cors({ origin: '*', allowMethods: 'GET, HEAD', exposeHeaders: ['ETag', 'Link', 'Vary', 'X-Request-Id'], maxAge: 86400 });

type Bucket = (ctx: Context) => RateBucket | undefined;
type PlainBucket = LeanRoute['bucket'];

/** The route's bucket from the client address and Authorization header, wherever they were read. */
function plainBucketOf(route: RouteSpec, deps: GatewayDeps): PlainBucket | undefined {
  const rule = route.rate;
  if (!rule) return undefined;
  const policy: BucketPolicy = rule.policy(deps.config);
  if (rule.by === 'ip') return ({ ip }) => ({ key: `${rule.bucket}:ip:${ip}`, policy });
  // Per credential, hashed: the gateway never keeps a key or token. No credential, no bucket.
  return ({ authorization }) => (authorization ? { key: `${rule.bucket}:${createHash('sha256').update(authorization).digest('hex')}`, policy } : undefined);
}

function bucketOf(route: RouteSpec, deps: GatewayDeps): Bucket | undefined {
  const plain = plainBucketOf(route, deps);
  if (!plain) return undefined;
  const counted = route.rate?.methods;
  return (ctx) => (counted && !counted.includes(ctx.method as HttpMethod) ? undefined : plain({ ip: ctx.ip, authorization: ctx.get('authorization') }));
}

/** A route's same-origin rule with its hosts' origins, from the configured URLs. */
function sameOriginOf(rule: SameOriginRule, deps: GatewayDeps): NonNullable<ApiEdgeOptions['sameOrigin']> {
  const origins = sameOriginsOf(rule, deps.config);
  return { origins, allowMissing: rule.allowMissing ?? false, hint: rule.hint(origins.join(' or ')) };
}

function pipeline(route: RouteSpec, subject: string, deps: GatewayDeps): Middleware[] {
  const bucket = bucketOf(route, deps);
  const forwardHeaders = route.forwardHeaders ?? [];
  if (route.sameOrigin && (route.edge ?? 'api') !== 'api')
    throw new Error(`same-origin protection is for api routes, not ${route.edge} (${pathsOf(route).join(', ')})`);
  switch (route.edge ?? 'api') {
    case 'mcp':
      return mcpEndpoint(deps, { subject, bodyLimit: route.bodyLimit ?? 64 * 1024, bucket: bucket ?? (() => undefined), forwardHeaders });
    case 'signed':
      return signedEndpoint(deps, { subject, methods: route.methods, bodyLimit: route.bodyLimit ?? 64 * 1024, forwardHeaders });
    case 'api': {
      const corsStep = route.cors === 'public-read' ? [publicRead] : route.cors === 'mcp' ? [mcp_cors(deps)] : [];
      return [
        ...corsStep,
        ...apiEndpoint(deps, {
          subject,
          methods: route.methods,
          ...(route.bodyLimit ? { bodyLimit: route.bodyLimit } : {}),
          ...(bucket ? { bucket } : {}),
          forwardHeaders,
          ...(route.idempotent !== undefined ? { idempotent: route.idempotent } : {}),
          ...(route.sameOrigin ? { sameOrigin: sameOriginOf(route.sameOrigin, deps) } : {}),
        }),
      ];
    }
  }
}

/** The access log shows a declared pattern instead of a path that names someone. */
function loggedPathFor(routes: RouteSpec[]): ((path: string) => string) | undefined {
  const masked = routes.filter((r) => r.logPattern).flatMap((r) => pathsOf(r).map((p) => ({ p, re: compilePath(p).pattern })));
  if (!masked.length) return undefined;
  return (path) => masked.find((m) => m.re.test(path))?.p ?? path;
}

/** A listener serving every route the slices declare for `host`. */
export function createHostApp(host: Exclude<Host, 'internal'>, deps: GatewayDeps, slices: readonly SliceManifest[]): Koa {
  const app = new Koa({ proxy: deps.config.trustProxy });
  const router = new Router();
  const served: RouteSpec[] = [];
  for (const slice of slices) {
    const subject = sliceSubject(deps.config.busNamespace, slice.name);
    for (const route of Object.values(slice.routes ?? {})) {
      if (!route.hosts.includes(host)) continue;
      served.push(route);
      const steps = pipeline(route, subject, deps);
      for (const path of pathsOf(route)) router.all(path, ...steps);
    }
  }
  for (const m of listenerBasics(deps, host, loggedPathFor(served))) app.use(m);
  app.use(router.routes());
  app.use(async (ctx) => sendApiError(ctx, 404, 'NOT_FOUND', ...NOT_FOUND_HINT[host](ctx.path)));
  return app;
}

/**
 * The lean path of a listener (leanMcp.ts): the `mcp` routes its slices mark `lean`, each on its
 * one fixed path. Undefined when there are none or LEAN_PATH is off.
 */
export function createHostLean(host: Exclude<Host, 'internal'>, deps: GatewayDeps, slices: readonly SliceManifest[]): LeanHandler | undefined {
  if (!deps.config.leanPath) return undefined;
  const routes: LeanRoute[] = [];
  for (const slice of slices)
    for (const route of Object.values(slice.routes ?? {})) {
      if (!route.lean || route.edge !== 'mcp' || !route.hosts.includes(host) || typeof route.path !== 'string' || route.path.includes(':')) continue;
      const subject = sliceSubject(deps.config.busNamespace, slice.name);
      routes.push({
        path: route.path,
        subject,
        bodyLimit: route.bodyLimit ?? 64 * 1024,
        bucket: plainBucketOf(route, deps) ?? (() => undefined),
        forwardHeaders: route.forwardHeaders ?? [],
      });
    }
  return leanMcp(deps, host, routes);
}

/** The authorization host: the routes slices declare for it (sign-in, OAuth), each mounted by name. */
export function createAuthHostApp(deps: GatewayDeps, slices: readonly SliceManifest[], ctx: SliceContext): Koa {
  const app = new Koa({ proxy: deps.config.trustProxy });
  for (const m of listenerBasics(deps, 'auth')) app.use(m);
  for (const slice of slices)
    for (const listener of slice.listeners ?? []) {
      const steps = listener.mount(ctx);
      if (!steps) continue;
      const router = new Router();
      for (const [name, route] of Object.entries(listener.routes)) {
        const pipeline = steps[name];
        if (!pipeline?.length) throw new Error(`auth route ${slice.name}.${name} has no steps`);
        router.register(route.path, [...route.methods], [...pipeline] as never, { name: `${slice.name}.${name}` });
      }
      app.use(router.routes() as unknown as Middleware);
      if (listener.allowedMethods) app.use(router.allowedMethods() as unknown as Middleware);
    }
  app.use(async (c) => sendApiError(c, 404, 'NOT_FOUND', ...NOT_FOUND_HINT.auth(c.path)));
  return app;
}
