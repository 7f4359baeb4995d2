// Something a process opens on first use (a stream, a key-value bucket) and shares from then on;
// an open that failed is tried again on the next use instead of failing every use after it.
export function onFirstUse<T>(open: () => Promise<T>): () => Promise<T> {
  let opened: Promise<T> | undefined;
  return () =>
    (opened ??= open().catch((err: unknown) => {
      opened = undefined;
      throw err;
    }));
}
