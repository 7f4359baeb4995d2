// The cron job that purges sandboxes nobody claimed (and orphaned ones) after SANDBOX_TTL.
import type { Credentials } from '../auth/credentials.js';
import type { Db } from 'mongodb';
import type { Config } from '../config.js';
import type { SweepJob } from '../slice/contract.js';
import { SandboxService } from './service.js';
import type { Timelines } from '../store/timeline/port.js';

export function sandboxSweepJob(config: Config, db: Db, credentials: Credentials, timelines: Timelines, clock: () => number = Date.now): SweepJob {
  const service = new SandboxService(db, credentials, config.inboxDomain, timelines, clock);
  return {
    name: 'sandbox-sweep',
    schedule: '*/15 * * * *',
    run: () => service.sweep(new Date(clock() - config.sandboxTtl)),
  };
}
