// The slice contract: what a feature slice declares once — its HTTP routes, MCP endpoints, indexes,
// scheduled jobs and background work — so that gateways, the worker router, index creation, the
// cron role and every discovery document are built from the same declarations.
import type { Middleware } from 'koa';
import type { Db, IndexDescription } from 'mongodb';
import type { HttpReplyEnvelope, HttpRequestEnvelope } from '../bus/envelopes.js';
import type { Credentials } from '../auth/credentials.js';
import type { Bus } from '../bus/types.js';
import { identityProvider, type Config } from '../config.js';
import type { OpenApiKit } from '../http/openapi.js';
import type { Logger } from '../log.js';
import type { PromptDeclaration, ResourceTemplateDeclaration, ToolDeclaration } from '../rpc/mcp.js';
import type { BucketPolicy, Limiter } from '../limits/limiter.js';
import type { Stream, Timelines } from '../store/timeline/port.js';

/** The listeners a route can be served on; `internal` routes are reached over the bus only (the SMTP role). */
export type Host = 'site' | 'app' | 'pipe' | 'internal';
export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'DELETE';

/**
 * How the gateway treats a route before forwarding it:
 * - `api`: JSON API or page; errors are ApiError bodies; JSON or form bodies are parsed.
 * - `mcp`: a JSON-RPC endpoint; errors are JSON-RPC bodies; CORS and Origin rules of MCP apply.
 * - `signed`: exact body bytes forwarded for a signature check in the worker (partner ingest).
 */
export type Edge = 'api' | 'mcp' | 'signed';

export interface RateRule {
  /** Bucket name, the first part of the key. */
  bucket: string;
  /** Per client address, or per credential (the SHA-256 of the Authorization header; none without one). */
  by: 'ip' | 'credential';
  policy: (config: Config) => BucketPolicy;
  /** The methods it counts; default every method of the route. */
  methods?: readonly HttpMethod[];
}

/**
 * Where a route's changes may come from (CSRF defence): a POST, PUT or DELETE whose Origin is not
 * one of these hosts' pages is refused at the gateway with 403 FORBIDDEN, before a worker sees it.
 */
export interface SameOriginRule {
  /** The hosts whose pages may send it: the origins of SITE_URL and APP_URL, and of the identity
   *  provider's sign-in page (IDP_LOGIN_URL), which posts a sign-in back to the app. */
  from: readonly ('site' | 'app' | 'idp')[];
  /** A request without Origin passes: a server calling it. Browsers always send Origin on a POST. */
  allowMissing?: boolean;
  /** The refusal's hint, given the accepted origins joined by " or ". */
  hint: (origins: string) => string;
}

/** The origins a same-origin rule accepts, from the configured URLs. */
export function sameOriginsOf(rule: SameOriginRule, config: Config): string[] {
  const urlOf = { site: config.siteUrl, app: config.appUrl, idp: identityProvider(config).loginUrl };
  return [...new Set(rule.from.map((h) => new URL(urlOf[h]).origin))];
}

/** An OpenAPI 3.0 operation object, kept loose: the whole document is validated by its tests. */
export type OpenApiOperation = Record<string, unknown>;
export type OpenApiOperations = Partial<Record<Lowercase<HttpMethod>, OpenApiOperation>>;

export interface RouteSpec {
  hosts: readonly Host[];
  /** Koa-router style pattern (`/channels/:slug`), or several paths served alike. */
  path: string | readonly string[];
  methods: readonly HttpMethod[];
  /** Default `api`. */
  edge?: Edge;
  /** Largest request body in bytes (default 64 KB). */
  bodyLimit?: number;
  rate?: RateRule;
  /** Same-origin protection of its changes; only for `api` routes. */
  sameOrigin?: SameOriginRule;
  /** Request headers the worker needs, lower-case. */
  forwardHeaders?: readonly string[];
  /** Safe to send again after a worker timeout. Default: GET for `api` routes; always for `mcp` and `signed`. */
  idempotent?: boolean;
  /** `public-read`: any origin may GET it (discovery documents); `mcp`: the MCP endpoints' CORS. */
  cors?: 'public-read' | 'mcp';
  /** The access log shows the pattern instead of the path (the path names someone). */
  logPattern?: boolean;
  /** An `mcp` route on one fixed path whose POST the listener answers ahead of Koa, with the same checks (src/gateway/leanMcp.ts). */
  lean?: boolean;
  /** OpenAPI operations of this route (site routes are in the site's description), by lower-case method. */
  openapi?: (kit: OpenApiKit) => OpenApiOperations;
}

export type RouteTable = Readonly<Record<string, RouteSpec>>;

/** A worker-side handler of one method of one route. */
export type RouteHandler = (req: HttpRequestEnvelope, params: Record<string, string>, log: Logger) => Promise<HttpReplyEnvelope>;

/** Handlers by route name and method; the worker checks at start-up that every declared one is there. */
export type RouteHandlers = Readonly<Record<string, Partial<Record<HttpMethod, RouteHandler>>>>;

/** An MCP endpoint as the discovery documents and the endpoint's own server describe it. */
export interface McpEndpointSpec {
  id: 'directory' | 'workspace' | 'sandbox';
  /** serverInfo.name */
  name: string;
  /** serverInfo.title */
  title: string;
  /** One line for catalogs. */
  summary: string;
  /** The server's `instructions`. */
  instructions: (config: Config) => string;
  url: (config: Config) => string;
  auth: 'none' | 'bearer';
  authDescription: (config: Config) => string;
  tools: readonly ToolDeclaration[];
  /** Prompts it serves (prompts/list), when any. */
  prompts?: readonly PromptDeclaration[];
  /** URI templates of the resources it serves (resources/templates/list), when any. */
  resourceTemplates?: readonly ResourceTemplateDeclaration[];
}

export interface SweepJob {
  name: string;
  /** node-cron expression. */
  schedule: string;
  run(): Promise<Record<string, number>>;
  /** Once the cron role has stopped: let go of what the job holds open (a mail server's connections). */
  close?(): Promise<void>;
}

export interface Stoppable {
  stop(): Promise<void>;
}

/** What every slice receives: built once per process by the role wiring. */
export interface SliceContext {
  config: Config;
  log: Logger;
  db: Db;
  /** The records kept as timelines (care events, inbox, activity), in the shape chosen for this store. */
  timelines: Timelines;
  bus: Bus;
  limiter: Limiter;
  /** This process's credentials and family records in memory, and how a change reaches every process. */
  credentials: Credentials;
  clock: () => number;
  /** Every slice of the deployment, for the documents that describe the whole service. */
  slices: readonly SliceManifest[];
}

export interface SliceManifest {
  /** Also the bus subject of its routes (`cc.http.<name>`). */
  name: string;
  routes?: RouteTable;
  /** Worker side: the handlers of the routes above (called once per worker process). */
  serve?(ctx: SliceContext): RouteHandlers;
  mcp?: readonly McpEndpointSpec[];
  /** The records this slice keeps as timelines (src/store/timeline): a store an earlier version
   *  wrote is migrated to them on start-up. */
  timelines?: readonly Stream<never>[];
  /** Indexes by collection, for the collections this slice owns. */
  indexes?: Readonly<Record<string, readonly IndexDescription[]>>;
  /** Scheduled sweeps, run by the cron leader. */
  jobs?(ctx: SliceContext): SweepJob[];
  /** Work a worker process runs besides answering routes (a durable consumer); undefined when none. */
  background?(ctx: SliceContext): Stoppable | undefined;
  /** The slice's routes on the auth host (the authorization server and the sign-in pages), served by Koa middleware in the gateway process. */
  listeners?: readonly AuthListener[];
}

/** What a route of the auth host reads from the request body. */
export type AuthBody = 'none' | 'form' | 'json';

/** One route of the auth host. */
export interface AuthRoute {
  /** Koa-router style pattern (`/oauth/interaction/:uid`). */
  path: string;
  methods: readonly (HttpMethod | 'OPTIONS')[];
  body: AuthBody;
}

export type AuthRouteTable = Readonly<Record<string, AuthRoute>>;

/**
 * Routes a slice serves on the auth host. The gateway mounts each declared route with the steps
 * `mount` gives it, and nothing else: a path not declared here is not answered by the slice.
 */
export interface AuthListener<R extends AuthRouteTable = AuthRouteTable> {
  host: 'auth';
  routes: R;
  /** The steps of each route, by route name; undefined when the slice serves none in this deployment. */
  mount(ctx: SliceContext): { readonly [K in keyof R]: readonly Middleware[] } | undefined;
  /** Answer a declared path called with another method with 405 and `Allow` (and OPTIONS with `Allow`). */
  allowedMethods?: boolean;
}

/** Declares an auth host listener, keeping its route names for `mount`. */
export const defineAuthListener = <const R extends AuthRouteTable>(listener: AuthListener<R>): AuthListener => listener as unknown as AuthListener;

/** Declares a slice (an identity function that keeps declarations readable and typed). */
export const defineSlice = (manifest: SliceManifest): SliceManifest => manifest;

/** Declares a route table, keeping its names for `handlers()`. */
export const defineRoutes = <const R extends RouteTable>(routes: R): R => routes;

/** Collects a slice's handlers by route name: `handlers(routes).on('home', 'GET', fn)`. */
export function handlers<R extends RouteTable>(_routes: R) {
  const table: Record<string, Partial<Record<HttpMethod, RouteHandler>>> = {};
  const builder = {
    on<K extends keyof R & string>(name: K, method: R[K]['methods'][number], handler: RouteHandler) {
      (table[name] ??= {})[method] = handler;
      return builder;
    },
    /** Merge handlers built elsewhere (another module of the same slice). */
    with(more: RouteHandlers) {
      for (const [name, byMethod] of Object.entries(more)) Object.assign((table[name] ??= {}), byMethod);
      return builder;
    },
    done: (): RouteHandlers => table,
  };
  return builder;
}

/** Every path of a route. */
export const pathsOf = (route: RouteSpec): readonly string[] => (typeof route.path === 'string' ? [route.path] : route.path);

/** `/api/x/:id` → a RegExp with one group per parameter (a trailing slash is tolerated). */
export function compilePath(path: string): { pattern: RegExp; keys: string[] } {
  const keys: string[] = [];
  const source = path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/\/:([A-Za-z_]+)/g, (_m, key: string) => {
    keys.push(key);
    return '/([^/]+)';
  });
  return { pattern: new RegExp(`^${source}/?$`), keys };
}

/** The bus subject a slice's routes are forwarded on. */
export function sliceSubject(namespace: string, slice: string): string {
  return `${namespace ? `${namespace}.` : ''}cc.http.${slice}`;
}
