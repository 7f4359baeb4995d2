// A small kit for writing OpenAPI 3.0 operations beside the routes they describe: references to
// shared components, the standard ApiError responses, and zod schemas registered as components.
import { z } from 'zod';
import type { Config } from '../config.js';

export type Json = Record<string, unknown>;

/** The ApiError responses every site operation may name, by component name. */
export const STANDARD_ERRORS = {
  BadRequest: { status: 400, description: 'The request is malformed or a field is invalid; `message` names the field.' },
  Unauthorized: { status: 401, description: 'A valid identity-provider ID token is required.' },
  Forbidden: { status: 403, description: 'Signed in, but not allowed (for example not a member of the channel).' },
  NotFound: { status: 404, description: 'Nothing by that name or path.' },
  MethodNotAllowed: { status: 405, description: 'Wrong HTTP method; the Allow header lists the right ones.' },
  PayloadTooLarge: { status: 413, description: 'The body is too large.' },
  UnsupportedMediaType: { status: 415, description: 'The body must be JSON (Content-Type: application/json).' },
  RateLimited: { status: 429, description: 'Too many requests; wait for the Retry-After header.' },
  Internal: { status: 500, description: 'A failure on our side; quote the X-Request-Id.' },
  Unavailable: { status: 503, description: 'Temporarily unavailable; retry after the Retry-After header.' },
} as const;
export type StandardError = keyof typeof STANDARD_ERRORS;

export const ref = (name: string): Json => ({ $ref: `#/components/schemas/${name}` });
export const jsonContent = (schema: Json): Json => ({ 'application/json': { schema } });
export const errors = (...names: StandardError[]): Record<string, Json> =>
  Object.fromEntries(names.map((n) => [String(STANDARD_ERRORS[n].status), { $ref: `#/components/responses/${n}` }]));

/** JSON Schema (OpenAPI 3.0 dialect) of a zod schema, as parsed (`input`) or as answered (`output`). */
export const schemaOf = (s: z.ZodType, io: 'input' | 'output' = 'output'): Json =>
  z.toJSONSchema(s, { target: 'openapi-3.0', io, unrepresentable: 'any' }) as Json;

/** What a route's operation builder gets: the configuration and a place to register its schemas. */
export interface OpenApiKit {
  config: Config;
  /** Register a named component schema (zod or JSON Schema) and get its $ref. */
  component(name: string, schema: z.ZodType | Json, io?: 'input' | 'output'): Json;
}

export function openApiKit(config: Config, components: Record<string, Json>): OpenApiKit {
  return {
    config,
    component: (name, schema, io = 'output') => {
      components[name] = schema instanceof z.ZodType ? schemaOf(schema, io) : schema;
      return ref(name);
    },
  };
}
