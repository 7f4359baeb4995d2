// Recognising storage errors by their server code, never by message text.

/** E11000: a unique index (or `_id`) already holds this value. */
export function isDuplicateKey(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: unknown }).code === 11000;
}

/** The positions an unordered insert refused as duplicate keys (a redelivery, a repeat); undefined
 *  when anything else was refused too, so the caller throws. */
export function duplicateIndexes(err: unknown): number[] | undefined {
  const writeErrors = (err as { writeErrors?: { code?: number; index: number }[] | { code?: number; index: number } }).writeErrors;
  const list = writeErrors === undefined ? undefined : Array.isArray(writeErrors) ? writeErrors : [writeErrors];
  if (!list || list.length === 0 || list.some((w) => w.code !== 11000)) return undefined;
  return list.map((w) => w.index);
}
