// Building worker replies and routing forwarded requests by method and path.
import type { HttpReplyEnvelope, HttpRequestEnvelope } from '../bus/envelopes.js';
import { apiErrorBody, type ApiErrorCode } from '../http/apiError.js';
import type { Logger } from '../log.js';
import type { HttpHandler } from './runtime.js';

export const json = (status: number, body: unknown, headers: Record<string, string> = {}): HttpReplyEnvelope => ({ status, headers, body });

export const apiError = (status: number, code: ApiErrorCode, message: string, hint: string, headers: Record<string, string> = {}): HttpReplyEnvelope => ({
  status,
  headers,
  body: apiErrorBody(code, message, hint),
});

export const text = (status: number, body: string, contentType: string, headers: Record<string, string> = {}): HttpReplyEnvelope => ({
  status,
  headers: { 'content-type': contentType, ...headers },
  body,
  raw: true,
});

/** A handled failure with an ApiError body: thrown inside a route, answered by the router. */
export class ApiProblem extends Error {
  override name = 'ApiProblem';
  constructor(
    readonly status: number,
    readonly code: ApiErrorCode,
    message: string,
    readonly hint: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

export type RouteHandler = (req: HttpRequestEnvelope, params: Record<string, string>, log: Logger) => Promise<HttpReplyEnvelope>;

interface Route {
  method: string;
  pattern: RegExp;
  keys: string[];
  handler: RouteHandler;
}

/** `/api/x/:id` patterns; a route matches one method (GET also answers HEAD). */
export class Routes {
  private readonly routes: Route[] = [];

  add(method: string, path: string, handler: RouteHandler): this {
    const keys: string[] = [];
    const pattern = new RegExp(
      `^${path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/\/:([A-Za-z_]+)/g, (_m, key: string) => {
        keys.push(key);
        return '/([^/]+)';
      })}/?$`,
    );
    this.routes.push({ method, pattern, keys, handler });
    return this;
  }

  /** One bus handler serving every route on `subject`. */
  handler(subject: string): HttpHandler {
    return {
      subject,
      handle: async (req, log) => {
        const method = req.method === 'HEAD' ? 'GET' : req.method;
        const onPath = this.routes.filter((r) => r.pattern.test(req.path));
        const route = onPath.find((r) => r.method === method);
        if (!route) {
          if (onPath.length) return apiError(405, 'METHOD_NOT_ALLOWED', `Method ${req.method} is not allowed on ${req.path}`, `Use ${onPath.map((r) => r.method).join(' or ')}.`, { allow: onPath.map((r) => r.method).join(', ') });
          return apiError(404, 'NOT_FOUND', `Nothing at ${req.path}`, 'Check the path.');
        }
        const match = route.pattern.exec(req.path)!;
        const params = Object.fromEntries(route.keys.map((k, i) => [k, decodeURIComponent(match[i + 1] ?? '')]));
        try {
          return await route.handler(req, params, log);
        } catch (err) {
          if (err instanceof ApiProblem) return apiError(err.status, err.code, err.message, err.hint, err.headers);
          throw err;
        }
      },
    };
  }
}
