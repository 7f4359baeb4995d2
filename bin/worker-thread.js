// Entry point of a carecircle worker thread: the compiled module in production, else its
// TypeScript source through tsx (a thread does not inherit the loader its parent registered).
import { workerData } from 'node:worker_threads';

if (workerData.entry.endsWith('.ts')) {
  const { register } = await import('tsx/esm/api');
  register();
}
await import(workerData.entry);
