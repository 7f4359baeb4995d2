// The cron role: scheduled sweeps, run by whichever cron process holds the lease.
import { randomUUID } from 'node:crypto';
import cron, { type ScheduledTask } from 'node-cron';
import type { Logger } from '../log.js';
import type { SweepJob } from '../slice/contract.js';
import type { Store } from '../store/mongo.js';
import { Lease } from './lease.js';

export interface CronRole {
  /** Run every job once now (if this process leads); used at start and by tests. */
  tick(): Promise<void>;
  stop(): Promise<void>;
}

/** Every job the slices declare, on its schedule, by whichever cron process holds the lease. */
export function startCron(store: Store, log: Logger, jobs: readonly SweepJob[]): CronRole {
  const holder = `${process.pid}-${randomUUID()}`;
  const lease = new Lease(store.db, 'cron-leader', holder, 5 * 60 * 1000);
  const running = new Set<Promise<void>>();

  // Never rejects: a store that is down while the lease is asked for (a job every minute meets
  // that) is a failed sweep to log, not an unhandled rejection that ends the process.
  const runJob = async (job: SweepJob) => {
    try {
      if (!(await lease.acquire())) return;
      const counts = await job.run();
      log.info({ job: job.name, ...counts }, 'sweep done');
    } catch (err) {
      log.error({ err, job: job.name }, 'sweep failed');
    }
  };
  const track = (p: Promise<void>) => {
    running.add(p);
    void p.finally(() => running.delete(p));
    return p;
  };
  const tasks: ScheduledTask[] = jobs.map((job) => cron.schedule(job.schedule, () => void track(runJob(job)), { noOverlap: true }));
  log.info({ jobs: jobs.map((j) => j.name) }, 'cron scheduled');
  return {
    tick: async () => {
      for (const job of jobs) await track(runJob(job));
    },
    stop: async () => {
      for (const t of tasks) await t.stop();
      await Promise.allSettled([...running]);
      await lease.release().catch(() => undefined);
    },
  };
}
