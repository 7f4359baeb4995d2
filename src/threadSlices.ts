// The slices a worker thread of the embedded run can host: those whose handlers need only the
// configuration, a logger and the clock (no store, no limiter), so a thread can answer them
// without opening connections of its own. Loaded by name, so a thread imports only what it serves.
import type { SliceManifest } from './slice/contract.js';

export const THREAD_SLICES = {
  directory: async (): Promise<SliceManifest> => (await import('./directory/slice.js')).directorySlice,
} as const;

export type ThreadSliceName = keyof typeof THREAD_SLICES;

export const isThreadSlice = (name: string): name is ThreadSliceName => Object.hasOwn(THREAD_SLICES, name);
