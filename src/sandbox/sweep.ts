// The cron job that purges sandboxes nobody claimed (and orphaned ones) after SANDBOX_TTL.
import type { Db } from 'mongodb';
import type { Config } from '../config.js';
import type { SweepJob } from '../slice/contract.js';
import { SandboxService } from './service.js';
import type { Timelines } from '../store/timeline/port.js';

export function sandboxSweepJob(config: Config, db: Db, timelines: Timelines, clock: () => number = Date.now): SweepJob {
  const service = new SandboxService(db, config.inboxDomain, timelines, clock);
  return {
    name: 'sandbox-sweep',
    schedule: '*/15 * * * *',
    run: () => service.sweep(new Date(clock() - config.sandboxTtl)),
  };
}
