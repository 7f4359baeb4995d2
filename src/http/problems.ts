// Turning zod failures into ApiErrors that name each field and say what is allowed.
import type { z } from 'zod';
import { ApiProblem } from './reply.js';

/** `field: message` for each issue, the field path written as `a.b[0]`. */
export function describeIssues(error: z.ZodError, max = 5): string {
  const parts = error.issues.slice(0, max).map((i) => {
    const path = i.path.map((p, n) => (typeof p === 'number' ? `[${p}]` : n === 0 ? String(p) : `.${String(p)}`)).join('');
    if (i.code === 'unrecognized_keys')
      return `unknown field${i.keys.length > 1 ? 's' : ''} ${i.keys.map((k) => `"${k}"`).join(', ')}${path ? ` in ${path}` : ''}`;
    return path ? (i.message.startsWith(path) ? i.message : `${path}: ${i.message}`) : i.message;
  });
  return parts.join('; ') + (error.issues.length > max ? ` (and ${error.issues.length - max} more)` : '');
}

/** A 400 VALIDATION_FAILED naming the fields; `hint` says what a valid request looks like. */
export function validationProblem(error: z.ZodError, hint: string): ApiProblem {
  return new ApiProblem(400, 'VALIDATION_FAILED', describeIssues(error), hint);
}

/** Parse or throw a 400 naming the fields. */
export function parseOr400<S extends z.ZodType>(schema: S, value: unknown, hint: string): z.output<S> {
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw validationProblem(parsed.error, hint);
  return parsed.data;
}
