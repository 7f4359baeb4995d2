// What a worker thread of the embedded run runs (started through bin/worker-thread.js): it loads
// the slices it was asked to host and serves them (src/worker/threadHost.ts).
import { workerData } from 'node:worker_threads';
import { isThreadSlice, THREAD_SLICES } from './threadSlices.js';
import { serveOnThread, type ThreadData } from './worker/threadHost.js';

const { slices } = workerData as ThreadData;
const unknown = slices.filter((name) => !isThreadSlice(name));
if (unknown.length) throw new Error(`a worker thread cannot host ${unknown.join(', ')}: see src/threadSlices.ts`);
serveOnThread(await Promise.all(slices.filter(isThreadSlice).map((name) => THREAD_SLICES[name]())));
