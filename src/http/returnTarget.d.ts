// Types of returnTarget.js, which stays plain JavaScript so the browser runs the same file.

/**
 * Where to send the browser after signing in, or null when `candidate` might lead anywhere else:
 * a path on `home` (relative candidates resolve against it), or a full URL on one of `others`.
 * `home` null accepts absolute URLs only.
 */
export function returnTarget(candidate: unknown, home: string | null, others?: readonly string[]): string | null;
