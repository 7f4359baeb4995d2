// What a failed fetch says about the network: shared by the MCP upstream and the OAuth calls.

/** What went wrong under fetch's "fetch failed": the socket error(s), and their code. */
export function describeCause(err: unknown): { text: string; code: string | undefined } {
  let e: unknown = err;
  while (e instanceof Error && e.message === 'fetch failed' && e.cause !== undefined) e = e.cause;
  const errors = e instanceof AggregateError && e.errors.length > 0 ? e.errors : [e];
  const texts = [...new Set(errors.map((x) => (x instanceof Error ? x.message || (x as NodeJS.ErrnoException).code || x.name : String(x))))];
  const code =
    errors.map((x) => (x as NodeJS.ErrnoException | undefined)?.code).find((c) => typeof c === 'string') ?? (e as NodeJS.ErrnoException | undefined)?.code;
  return { text: texts.join('; '), code };
}
