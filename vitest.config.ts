import os from 'node:os';
import { configDefaults, defineConfig } from 'vitest/config';
import { CONFORMANCE, FAULTS, LEFT_OUT_OF_QUICK, OWN_PROCESS } from './test/harness/quickRun.js';

const FILES = ['src/**/*.test.ts', 'machines/**/*.test.ts', 'bridge/**/*.test.ts', 'test/**/*.test.ts'];
/** Files that start several carecircle processes (or a NATS cluster): one such file at a time. */
const PROCESSES = [...LEFT_OUT_OF_QUICK.cluster, 'test/chaos.test.ts', 'test/fuzz.test.ts'];
/** Files that drive Chromium. */
const BROWSER = LEFT_OUT_OF_QUICK.browser;
/** Runs of their own, by mode: `npm test` and the quick run leave these files out. */
const SEPARATE_RUNS = { faults: FAULTS, conformance: CONFORMANCE };
// Two files at a time even on two cores (vitest's default there is one): most of a file's time is
// spent waiting on servers, child processes and Chromium, so a second one fills the gaps.
// TEST_WORKERS sets another number.
const MAX_WORKERS = Number(process.env.TEST_WORKERS ?? Math.max(2, os.availableParallelism() - 1));

export default defineConfig(({ mode }) => {
  // `vitest run --mode quick` (npm run test:quick): the inner loop, without the long, browser and cluster files.
  // `vitest run --mode faults` (npm run test:faults) and `--mode conformance` (npm run
  // test:conformance): only those files, one at a time, which every other mode leaves out.
  const separate = SEPARATE_RUNS[mode as keyof typeof SEPARATE_RUNS] as string[] | undefined;
  const exclude = [
    ...configDefaults.exclude,
    ...(mode === 'quick' ? Object.values(LEFT_OUT_OF_QUICK).flat() : []),
    ...Object.values(SEPARATE_RUNS).flatMap((files) => (files === separate ? [] : files)),
  ];
  const project = (name: string, include: string[], options: { isolate?: boolean; maxWorkers: number; order: number; without?: string[] }) => ({
    test: {
      name,
      include,
      exclude: [...exclude, ...(options.without ?? [])],
      isolate: options.isolate ?? false,
      maxWorkers: options.maxWorkers,
      sequence: { groupOrder: options.order },
      testTimeout: 30_000,
      // Generous for hooks that start their own servers (a first FerretDB build takes about a minute).
      hookTimeout: 120_000,
      pool: 'forks' as const,
    },
  });
  return {
    test: {
      // One FerretDB (or MONGO_URL) and one nats-server (or NATS_URL) for the whole run.
      globalSetup: ['test/harness/globalSetup.ts'],
      maxWorkers: MAX_WORKERS,
      // Files share their worker's modules (isolate: false): each file imports the service once per
      // worker, not once per file (about 1.5 s of CPU each). Every test starts its own services and
      // database all the same. The groups run one after another.
      projects: separate
        ? [project(mode, separate, { maxWorkers: 1, order: 0 })]
        : [
            project('in process', FILES, { maxWorkers: MAX_WORKERS, order: 0, without: [...OWN_PROCESS, ...BROWSER, ...PROCESSES] }),
            // Files that read what belongs to the whole process, such as the metrics registry.
            project('own process', OWN_PROCESS, { isolate: true, maxWorkers: MAX_WORKERS, order: 0 }),
            project('browser', BROWSER, { maxWorkers: MAX_WORKERS, order: 1 }),
            // Each starts several processes of its own: two such files at once starve each other on two cores.
            project('processes', PROCESSES, { maxWorkers: 1, order: 2 }),
          ],
    },
  };
});
