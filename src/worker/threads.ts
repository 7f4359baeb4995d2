// Worker threads of the embedded run: slices that need no store (THREAD_SLICES) answered on
// threads of their own, so the public directory uses a second core and a burst of its traffic does
// not hold up the family's requests on the main thread. Each thread joins the in-process bus as a
// member of its slices' queue groups; requests cross as JSON text and replies come back encoded,
// as they would over NATS. A thread that stops is replaced; what it had in hand is answered as
// unavailable (503 with Retry-After), never left waiting.
import { availableParallelism } from 'node:os';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { HandlerFailure } from '../bus/errors.js';
import type { MemoryBus } from '../bus/memory.js';
import { failureEnvelope } from '../bus/replies.js';
import { QUEUE } from '../bus/subjects.js';
import type { BusHeaders, Subscription } from '../bus/types.js';
import type { Config } from '../config.js';
import type { Logger } from '../log.js';
import { metrics } from '../metrics/index.js';
import { sliceSubject } from '../slice/contract.js';
import { PACKAGE_ROOT } from '../version.js';
import type { FromThread, ThreadData, ToThread } from './threadHost.js';

const BOOTSTRAP = path.join(PACKAGE_ROOT, 'bin', 'worker-thread.js');
const STOP_GRACE_MS = 10_000;
const RESTART_DELAYS_MS = [250, 1_000, 5_000, 30_000];
/** A thread that served this long before it stopped starts again after the shortest delay. */
const STEADY_MS = 60_000;

export interface ThreadOptions {
  config: Config;
  log: Logger;
  /** The module a thread runs (file URL): the wiring's, which hands its slices to serveOnThread. */
  entry: string;
  slices: readonly string[];
  count: number;
}

export interface WorkerThreads {
  /** Threads serving now. */
  serving(): number;
  /** Stop one thread abruptly, as a crash would (for the tests that prove it is replaced). */
  crashOne(): Promise<void>;
  stop(): Promise<void>;
}

const unavailableText = (why: string) => JSON.stringify(failureEnvelope(new HandlerFailure('unavailable', why)));

class HostedThread {
  private worker: Worker | undefined;
  private readonly pending = new Map<number, (text: string) => void>();
  private subs: Subscription[] = [];
  private nextId = 0;
  private stopping = false;
  private restarts = 0;
  private startedAt = 0;
  private restartTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly bus: MemoryBus,
    private readonly opts: ThreadOptions,
    private readonly index: number,
  ) {}

  get serving(): boolean {
    return this.subs.length > 0;
  }

  /** Resolves once the thread serves its slices; rejects when it could not start. */
  start(): Promise<void> {
    const data: ThreadData = { entry: this.opts.entry, config: this.opts.config, slices: [...this.opts.slices], index: this.index };
    const worker = new Worker(BOOTSTRAP, { workerData: data });
    this.worker = worker;
    return new Promise((resolve, reject) => {
      let ready = false;
      worker.on('message', (msg: FromThread) => {
        if (msg.type === 'reply') return this.settle(msg.id, msg.text);
        if (msg.type === 'ready') {
          ready = true;
          this.startedAt = Date.now();
          // A stop that came while it started: it never joins, and stop() ends it.
          if (!this.stopping) this.join();
          resolve();
        }
      });
      worker.on('error', (err) => {
        if (ready) this.opts.log.error({ err, thread: this.index }, 'worker thread failed');
        else reject(new Error(`worker thread ${this.index} could not start: ${err.message}`, { cause: err }));
      });
      worker.on('exit', (code) => {
        this.worker = undefined;
        this.leave(`the worker thread stopped (exit code ${code}) before it answered`);
        if (!ready) return reject(new Error(`worker thread ${this.index} exited (code ${code}) before it was ready`));
        if (!this.stopping) this.restart(code);
      });
    });
  }

  /** Joins the bus as a member of each slice's queue group. */
  private join(): void {
    const { config } = this.opts;
    this.subs = this.opts.slices.map((name) =>
      this.bus.serveRemote(sliceSubject(config.busNamespace, name), QUEUE, (subject, json, headers) => this.send(subject, json, headers)),
    );
    metrics.workerThreads.inc();
  }

  /** Leaves the bus and answers whatever the thread still had in hand as unavailable. */
  private leave(why: string): void {
    if (this.subs.length) metrics.workerThreads.dec();
    const subs = this.subs;
    this.subs = [];
    for (const id of [...this.pending.keys()]) this.settle(id, unavailableText(why));
    void Promise.all(subs.map((s) => s.drain()));
  }

  private send(subject: string, json: string | undefined, headers: BusHeaders): Promise<string> {
    const worker = this.worker;
    if (!worker) return Promise.resolve(unavailableText('the worker thread is restarting'));
    const id = ++this.nextId;
    metrics.workerInFlight.inc();
    return new Promise((resolve) => {
      this.pending.set(id, resolve);
      worker.postMessage({ type: 'request', id, subject, json, headers } satisfies ToThread);
    });
  }

  private settle(id: number, text: string): void {
    const resolve = this.pending.get(id);
    if (!resolve) return;
    this.pending.delete(id);
    metrics.workerInFlight.dec();
    // The thread's own counters are not scraped: its failures are counted here.
    if (text.startsWith('{"ok":false')) metrics.workerFailures.inc({ kind: (JSON.parse(text) as { kind?: string }).kind ?? 'failed' });
    resolve(text);
  }

  private restart(code: number): void {
    if (Date.now() - this.startedAt > STEADY_MS) this.restarts = 0;
    metrics.workerThreadRestarts.inc();
    this.opts.log.error({ thread: this.index, code }, 'worker thread stopped; starting a new one');
    this.startAgain();
  }

  /** Starts a new thread after the next delay, and keeps trying (each time later) while it fails. */
  private startAgain(): void {
    const delay = RESTART_DELAYS_MS[Math.min(this.restarts++, RESTART_DELAYS_MS.length - 1)]!;
    this.restartTimer = setTimeout(() => {
      this.restartTimer = undefined;
      if (this.stopping) return;
      this.start().catch((err: unknown) => {
        this.opts.log.error(
          { err, thread: this.index, retryInMs: RESTART_DELAYS_MS[Math.min(this.restarts, RESTART_DELAYS_MS.length - 1)] },
          'worker thread did not start again',
        );
        if (!this.stopping) this.startAgain();
      });
    }, delay);
  }

  async crash(): Promise<void> {
    await this.worker?.terminate();
  }

  /** Stops taking requests, lets the thread finish what it has, then ends it. */
  async stop(): Promise<void> {
    this.stopping = true;
    clearTimeout(this.restartTimer);
    const subs = this.subs;
    this.subs = [];
    if (subs.length) metrics.workerThreads.dec();
    // Drained first: requests in hand are answered (drain waits for them) before the thread goes.
    await Promise.all(subs.map((s) => s.drain()));
    // Read after the drain: a thread that ended meanwhile has no exit left to wait for.
    const worker = this.worker;
    if (!worker) return;
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    worker.postMessage({ type: 'stop' } satisfies ToThread);
    const timer = setTimeout(() => void worker.terminate(), STOP_GRACE_MS);
    await exited;
    clearTimeout(timer);
  }
}

/** DIRECTORY_THREADS resolved: auto is one thread where there is a second core to run it. */
export function directoryThreadCount(config: Config): number {
  if (config.directoryThreads !== 'auto') return config.directoryThreads;
  return availableParallelism() >= 2 ? 1 : 0;
}

/** Starts `count` threads serving `slices` on `bus`; resolves once every one of them serves. */
export async function startWorkerThreads(bus: MemoryBus, opts: ThreadOptions): Promise<WorkerThreads> {
  const threads = Array.from({ length: opts.count }, (_, i) => new HostedThread(bus, opts, i + 1));
  const stopAll = () => Promise.all(threads.map((t) => t.stop())).then(() => undefined);
  try {
    await Promise.all(threads.map((t) => t.start()));
  } catch (err) {
    await stopAll();
    throw err;
  }
  opts.log.info({ slices: opts.slices, threads: opts.count }, 'worker threads serving');
  return {
    serving: () => threads.filter((t) => t.serving).length,
    crashOne: async () => threads.find((t) => t.serving)?.crash(),
    stop: stopAll,
  };
}
