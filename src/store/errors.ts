// Recognising storage errors by their server code, never by message text.

/** E11000: a unique index (or `_id`) already holds this value. */
export function isDuplicateKey(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: unknown }).code === 11000;
}
