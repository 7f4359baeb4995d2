import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'machines/**/*.test.ts', 'bridge/**/*.test.ts', 'test/**/*.test.ts'],
    // One FerretDB (or MONGO_URL) and one nats-server (or NATS_URL) for the whole run.
    globalSetup: ['test/harness/globalSetup.ts'],
    testTimeout: 30_000,
    // Generous for hooks that start their own servers (a first FerretDB build takes about a minute).
    hookTimeout: 120_000,
    pool: 'forks',
  },
});
