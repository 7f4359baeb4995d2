// Running one load in a load-generator process of its own (so the measured servers' CPU is
// their own), and the CPU each watched process spent per request while it ran.
import { fork } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Watched } from './infra.js';
import { cpuMs } from './procs.js';

const here = path.dirname(fileURLToPath(import.meta.url));

export interface LoadBounds {
  connections: number;
  /** Requests before the measured phase (not counted). */
  warmup: number;
  maxRequests: number;
  maxSeconds: number;
}

export type LoadSpec = LoadBounds &
  (
    | {
        kind: 'http';
        url: string;
        headers: Record<string, string>;
        bodies: string[];
        expect: number;
        /** Replaced in each body by a number no other request of the run has: a write that is
         *  not a repeat (the same arguments from the same caller replay the first answer). */
        numbered?: string;
      }
    | {
        kind: 'ingest';
        url: string;
        institutionId: string;
        secret: string;
        subjectRef: string;
        tag: string;
        /** Every this many events, a note that mentions a fall (it should alert) instead of a visit; each one's 202 is reported in `alerting`. */
        alertEvery?: number;
      }
    | { kind: 'insert'; mongoUrl: string; collection: string; tag: string }
  );

export interface LoadResult {
  /** Responses in the measured phase, whatever their status. */
  count: number;
  /** Responses with the expected status. */
  ok: number;
  seconds: number;
  p50: number;
  p90: number;
  p99: number;
  /** Responses by status (or "error" for a failed connection), when not all were expected. */
  unexpected: Record<string, number>;
  firstError?: string;
  /** The alerting notes answered 202 in this phase: their `source_event_id` and the instant of the 202 (ms since the epoch, sub-millisecond). */
  alerting?: { sourceEventId: string; at: number }[];
}

export interface Measured extends LoadResult {
  perSecond: number;
  /** CPU milliseconds per request of each watched process (undefined: not measurable). */
  cpu: { label: string; ms: number | undefined }[];
  /** CPU milliseconds per request of the load generator itself. */
  clientMs: number | undefined;
  /** Store data commands per request (undefined: the store does not count them). */
  storeCommands: number | undefined;
}

export interface LoadOptions {
  /** Runs between warm-up and measurement (for example to let queues drain). */
  afterWarmup?: (warm: LoadResult) => Promise<void>;
  /** The store's data-command counter, read before and after the measured phase. */
  storeCommands?: () => Promise<number | undefined>;
}

export async function runLoad(spec: LoadSpec, watched: Watched[], opts: LoadOptions = {}): Promise<Measured> {
  const child = fork(path.join(here, 'loadgen.ts'), [], {
    cwd: path.resolve(here, '../..'),
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const exited = once(child, 'exit');
  // Warm-up and measurement are each bounded by maxSeconds; the ingest's drain by two minutes.
  const limitMs = (2 * spec.maxSeconds + 300) * 1000;
  const killer = setTimeout(() => child.kill('SIGKILL'), limitMs);
  try {
    let before: (number | undefined)[] = [];
    let clientBefore: number | undefined;
    let commandsBefore: number | undefined;
    const result = await new Promise<LoadResult>((resolve, reject) => {
      child.on('message', (m: { type: string; result?: LoadResult; error?: string }) => {
        if (m.type === 'warm') {
          const odd = m.result ? problems(m.result) : '';
          if (odd) process.stderr.write(`  warm-up: ${odd}${m.result?.firstError ? ` (${m.result.firstError})` : ''}\n`);
          const measure = async () => {
            await opts.afterWarmup?.(m.result!);
            commandsBefore = await opts.storeCommands?.();
            before = watched.map((w) => cpuMs(w.pid));
            clientBefore = cpuMs(child.pid);
            child.send('go');
          };
          measure().catch(reject);
        } else if (m.type === 'done' && m.result) resolve(m.result);
        else if (m.type === 'failed') reject(new Error(`load generator: ${m.error}`));
      });
      void exited.then(([code]) => reject(new Error(`load generator exited (${String(code)}) before reporting`)));
      child.send(spec);
    });
    const after = watched.map((w) => cpuMs(w.pid));
    const clientAfter = cpuMs(child.pid);
    const commandsAfter = await opts.storeCommands?.();
    const per = (a: number | undefined, b: number | undefined) => (a === undefined || b === undefined || !result.count ? undefined : (a - b) / result.count);
    return {
      ...result,
      // Only expected answers count: a run of fast 429s measures the limit, not the work.
      perSecond: result.ok / result.seconds,
      cpu: watched.map((w, i) => ({ label: w.label, ms: per(after[i], before[i]) })),
      clientMs: per(clientAfter, clientBefore),
      storeCommands: per(commandsAfter, commandsBefore),
    };
  } finally {
    clearTimeout(killer);
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
  }
}

/** Several runs of one target as one: rate over their total time; quantiles, CPU and commands weighted by responses. */
export function combineRuns(runs: Measured[]): Measured {
  const count = runs.reduce((s, r) => s + r.count, 0);
  const seconds = runs.reduce((s, r) => s + r.seconds, 0);
  const weigh = (pick: (r: Measured) => number | undefined) => {
    const values = runs.map(pick);
    return values.some((v) => v === undefined) ? undefined : runs.reduce((s, r, i) => s + values[i]! * r.count, 0) / count;
  };
  const unexpected: Record<string, number> = {};
  for (const r of runs) for (const [k, n] of Object.entries(r.unexpected)) unexpected[k] = (unexpected[k] ?? 0) + n;
  return {
    count,
    ok: runs.reduce((s, r) => s + r.ok, 0),
    seconds,
    perSecond: runs.reduce((s, r) => s + r.ok, 0) / seconds,
    p50: weigh((r) => r.p50)!,
    p90: weigh((r) => r.p90)!,
    p99: weigh((r) => r.p99)!,
    unexpected,
    cpu: runs[0]!.cpu.map((c, i) => ({ label: c.label, ms: weigh((r) => r.cpu[i]?.ms) })),
    clientMs: weigh((r) => r.clientMs),
    storeCommands: weigh((r) => r.storeCommands),
  };
}

/** Total CPU milliseconds per request, when every process's is known. */
export function cpuTotal(cpu: Measured['cpu']): number | undefined {
  return cpu.some((c) => c.ms === undefined) ? undefined : cpu.reduce((s, c) => s + c.ms!, 0);
}

/** "3.48 = carecircle 1.86 + FerretDB 1.62": CPU per request, total and by process. */
export function cpuCell(cpu: Measured['cpu']): string {
  const known = cpu.filter((c): c is { label: string; ms: number } => c.ms !== undefined);
  const parts = cpu.map((c) => `${c.label} ${c.ms === undefined ? 'n/a' : c.ms.toFixed(2)}`);
  const atLeast = known.length < cpu.length ? '≥ ' : '';
  return known.length ? `${atLeast}${known.reduce((s, c) => s + c.ms, 0).toFixed(2)} = ${parts.join(' + ')}` : parts.join(' + ');
}

/** Unexpected answers, for the table ("" when every answer was the expected one). */
export function problems(m: LoadResult): string {
  const entries = Object.entries(m.unexpected);
  return entries.length ? entries.map(([status, n]) => `${n}× ${status}`).join(', ') : '';
}
