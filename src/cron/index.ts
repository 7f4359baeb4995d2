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

/**
 * Every job the slices declare, on its schedule, by whichever cron process holds the lease. A
 * leader that dies keeps it `leaseMs` (CRON_LEASE); every cron process asks for it each third of
 * that, so another takes over soon after it runs out.
 */
export function startCron(store: Store, log: Logger, jobs: readonly SweepJob[], leaseMs = 5 * 60 * 1000): CronRole {
  const holder = `${process.pid}-${randomUUID()}`;
  const lease = new Lease(store.db, 'cron-leader', holder, leaseMs);
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
  // Asked between runs too: the leader keeps a lease shorter than the gap between runs, and the
  // others take it over within about `leaseMs` of the leader's death, not at a run that finds it lapsed.
  const renewal = setInterval(() => void lease.acquire().catch(() => undefined), Math.max(1_000, Math.floor(leaseMs / 3)));
  renewal.unref();
  log.info({ jobs: jobs.map((j) => j.name) }, 'cron scheduled');
  return {
    tick: async () => {
      for (const job of jobs) await track(runJob(job));
    },
    stop: async () => {
      clearInterval(renewal);
      for (const t of tasks) await t.stop();
      await Promise.allSettled([...running]);
      await lease.release().catch(() => undefined);
    },
  };
}
