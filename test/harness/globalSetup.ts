/**
 * vitest globalSetup: one MongoDB-compatible server and one nats-server (JetStream on) for the
 * whole run, shared by every test worker. Tests read the URLs with
 * `inject('mongoUrl')` / `inject('natsUrl')` from 'vitest', and each takes its own database:
 * `freshDatabaseUrl(inject('mongoUrl'))` from './servers.js'. Databases derived that way are
 * dropped at the end of the run even on an external `MONGO_URL`.
 */
import os from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { startMongo, startNats, type RunningServer } from './servers.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** MongoDB URL naming this run's database; derive per-test databases with freshDatabaseUrl(). */
    mongoUrl: string;
    /** NATS URL of a server with JetStream enabled. */
    natsUrl: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  // The test workers and every process the tests start (role processes, the stdio bridge, the
  // conformance suite) load the same modules again and again: Node's compile cache keeps their
  // compiled code between processes. Set here, before the workers start, so all of them inherit it.
  process.env.NODE_COMPILE_CACHE ??= path.join(os.tmpdir(), 'carecircle-node-compile-cache');
  const started: RunningServer[] = [];
  const teardown = async (): Promise<void> => {
    const results = await Promise.allSettled(started.map((s) => s.stop()));
    for (const r of results) if (r.status === 'rejected') process.stderr.write(`[test harness] stop failed: ${String(r.reason)}\n`);
  };
  try {
    const [mongo, nats] = await Promise.all([
      startMongo().then((s) => (started.push(s), s)),
      startNats({ jetstream: true }).then((s) => (started.push(s), s)),
    ]);
    project.provide('mongoUrl', mongo.url);
    project.provide('natsUrl', nats.url);
  } catch (err) {
    await teardown();
    throw err;
  }
  return teardown;
}
