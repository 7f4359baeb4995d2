// The worker side of the slice manifests: one bus handler per slice, routing each forwarded request
// to the handler its slice bound to the declared route and method.
import type { HttpRequestEnvelope } from '../bus/envelopes.js';
import { apiError, ApiProblem } from '../http/reply.js';
import { compilePath, pathsOf, sliceSubject, type HttpMethod, type RouteHandler, type SliceContext, type SliceManifest } from '../slice/contract.js';
import type { HttpHandler } from './runtime.js';

interface Bound {
  pattern: RegExp;
  keys: string[];
  methods: Partial<Record<HttpMethod, RouteHandler>>;
}

/** A path segment decoded, or undefined when its percent-encoding is broken (`%ZZ`, a lone `%`, invalid UTF-8). */
function decodeParam(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}

/** Bind a slice's handlers to its declared routes; a declared method without a handler (or the reverse) stops the start. */
export function bindSlice(slice: SliceManifest, ctx: SliceContext): HttpHandler | undefined {
  const routes = slice.routes ?? {};
  if (!Object.keys(routes).length) return undefined;
  if (!slice.serve) throw new Error(`slice ${slice.name} declares routes but serves none`);
  const table = slice.serve(ctx);
  const bound: Bound[] = [];
  for (const [name, spec] of Object.entries(routes)) {
    const methods = table[name] ?? {};
    const missing = spec.methods.filter((m) => !methods[m]);
    const extra = Object.keys(methods).filter((m) => !spec.methods.includes(m as HttpMethod));
    if (missing.length || extra.length)
      throw new Error(
        `slice ${slice.name}, route ${name}: ${missing.length ? `no handler for ${missing.join(', ')}` : `handlers for undeclared ${extra.join(', ')}`}`,
      );
    for (const path of pathsOf(spec)) bound.push({ ...compilePath(path), methods });
  }
  const unknown = Object.keys(table).filter((name) => !(name in routes));
  if (unknown.length) throw new Error(`slice ${slice.name}: handlers for undeclared routes ${unknown.join(', ')}`);

  return {
    subject: sliceSubject(ctx.config.busNamespace, slice.name),
    maxReplyBytes: ctx.config.maxReplyBytes,
    handle: async (req: HttpRequestEnvelope, log) => {
      const method = (req.method === 'HEAD' ? 'GET' : req.method) as HttpMethod;
      // Gateways forward only declared paths and methods; the bus is a trust boundary all the same.
      const onPath = bound.filter((r) => r.pattern.test(req.path));
      const route = onPath.find((r) => r.methods[method]);
      const handler = route?.methods[method];
      if (!route || !handler)
        return apiError(
          onPath.length ? 405 : 404,
          onPath.length ? 'METHOD_NOT_ALLOWED' : 'NOT_FOUND',
          `Nothing serves ${req.method} ${req.path}`,
          'Check the method and path.',
        );
      const match = route.pattern.exec(req.path)!;
      const params: Record<string, string> = {};
      for (const [i, k] of route.keys.entries()) {
        const value = decodeParam(match[i + 1] ?? '');
        if (value === undefined)
          return apiError(
            400,
            'BAD_REQUEST',
            `The path parameter ${k} is not valid percent-encoding`,
            'Encode the value with encodeURIComponent (UTF-8) and send it again.',
          );
        params[k] = value;
      }
      try {
        return await handler(req, params, log);
      } catch (err) {
        if (err instanceof ApiProblem) return apiError(err.status, err.code, err.message, err.hint, err.headers);
        throw err;
      }
    },
  };
}

/** Every slice's bus handler. */
export function sliceHandlers(slices: readonly SliceManifest[], ctx: SliceContext): HttpHandler[] {
  return slices.flatMap((s) => bindSlice(s, ctx) ?? []);
}
