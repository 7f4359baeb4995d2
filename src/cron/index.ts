// The cron role: scheduled sweeps, run by whichever cron process holds the lease.
import { randomUUID } from 'node:crypto';
import cron, { type ScheduledTask } from 'node-cron';
import type { Logger } from '../log.js';
import type { Store } from '../store/mongo.js';
import { RateLimiter } from '../store/rateLimit.js';
import { Lease } from './lease.js';

export interface SweepJob {
  name: string;
  /** node-cron expression. */
  schedule: string;
  run(): Promise<Record<string, number>>;
}

export interface CronRole {
  /** Run every job once now (if this process leads); used at start and by tests. */
  tick(): Promise<void>;
  stop(): Promise<void>;
}

export function defaultJobs(store: Store): SweepJob[] {
  const limiter = new RateLimiter(store.db);
  return [
    {
      name: 'rate-tokens',
      schedule: '*/15 * * * *',
      // A spent token outside its window no longer limits anyone.
      run: async () => ({ removed: await limiter.sweep() }),
    },
  ];
}

export function startCron(store: Store, log: Logger, jobs: SweepJob[] = defaultJobs(store)): CronRole {
  const holder = `${process.pid}-${randomUUID()}`;
  const lease = new Lease(store.db, 'cron-leader', holder, 5 * 60 * 1000);
  const running = new Set<Promise<void>>();

  const runJob = async (job: SweepJob) => {
    if (!(await lease.acquire())) return;
    try {
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
