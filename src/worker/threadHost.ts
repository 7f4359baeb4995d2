// A worker thread of the embedded run: it serves the slices it was given on a bus of its own and
// answers each request the main thread sends it (as JSON text) with the reply already encoded, so
// the main thread only passes text in and out. ./threads.ts starts the thread with the wiring's
// entry (src/workerThread.ts, through bin/worker-thread.js), which hands its slices to serveOnThread.
import { parentPort, workerData } from 'node:worker_threads';
import { MemoryBus } from '../bus/memory.js';
import { failureEnvelope } from '../bus/replies.js';
import type { BusHeaders } from '../bus/types.js';
import type { Config } from '../config.js';
import { createLogger, type Logger } from '../log.js';
import type { SliceContext, SliceManifest } from '../slice/contract.js';
import { sliceHandlers } from './router.js';
import { startWorkers } from './runtime.js';

export interface ThreadData {
  entry: string;
  config: Config;
  /** Names the entry looks up in its registry of slices a thread can host. */
  slices: string[];
  /** Its number in the pool, for the logs. */
  index: number;
}

/** Main thread → worker thread. */
export type ToThread = { type: 'request'; id: number; subject: string; json: string | undefined; headers: BusHeaders } | { type: 'stop' };
/** Worker thread → main thread. */
export type FromThread = { type: 'ready' } | { type: 'reply'; id: number; text: string };

/** What a thread-hosted slice may use; the store, the limiter and the credentials live on the main thread only. */
function threadContext(config: Config, log: Logger, bus: MemoryBus, manifests: readonly SliceManifest[]): SliceContext {
  const absent = (what: string): never => {
    throw new Error(`${what} is not available on a worker thread: the slices a thread hosts (src/threadSlices.ts) must not use it`);
  };
  return {
    config,
    log,
    bus,
    clock: Date.now,
    slices: manifests,
    get db() {
      return absent('the store');
    },
    get timelines() {
      return absent('the store');
    },
    get limiter() {
      return absent('the rate limiter');
    },
    get credentials() {
      return absent('the credentials');
    },
  };
}

/** Serves `manifests` on this thread until the main thread says stop; tells it once ready. */
export function serveOnThread(manifests: readonly SliceManifest[]): void {
  const port = parentPort;
  if (!port) throw new Error('serveOnThread runs on a worker thread only');
  const { config, index } = workerData as ThreadData;
  const log = createLogger(config.logLevel).child({ thread: index });
  const bus = new MemoryBus();
  const pool = startWorkers(bus, sliceHandlers(manifests, threadContext(config, log, bus, manifests)), { concurrency: config.workerConcurrency, log });

  port.on('message', (msg: ToThread) => {
    if (msg.type === 'request') {
      void bus
        .encodedAnswer(msg.subject, msg.json, msg.headers)
        .catch((err: unknown) => JSON.stringify(failureEnvelope(err)))
        .then((text) => port.postMessage({ type: 'reply', id: msg.id, text } satisfies FromThread));
      return;
    }
    void pool
      .stop()
      .then(() => bus.close())
      // With its port closed the thread ends, and the main thread sees it exit.
      .finally(() => port.close());
  });
  port.postMessage({ type: 'ready' } satisfies FromThread);
}
