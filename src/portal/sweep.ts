// The cron leader's portal sweeps: each connected portal synced once an interval has passed since
// its last try (PORTAL_SYNC_INTERVAL), and the connections of removed loved ones revoked and deleted,
// so no sealed sign-in outlives the person it was for.
import type { Credentials } from '../auth/credentials.js';
import type { Config } from '../config.js';
import { hasLovedOne } from '../family/records.js';
import type { Logger } from '../log.js';
import type { Db } from 'mongodb';
import type { SweepJob } from '../slice/contract.js';
import type { Timelines } from '../store/timeline/port.js';
import type { PortalStore } from './connections.js';
import { disconnect, issuerOf } from './issuers.js';
import { PortalError } from './smart.js';
import { syncConnection, type PortalContext } from './sync.js';

/** A sweep stops starting syncs after this long, well inside the cron lease's five minutes; the rest are next. */
const SWEEP_BUDGET_MS = 3 * 60_000;

export function portalSweepJob(config: Config, db: Db, credentials: Credentials, store: PortalStore, log: Logger): SweepJob {
  const issuer = issuerOf(config);
  return {
    name: 'portal-orphans',
    schedule: '23 * * * *',
    run: async () => {
      let removed = 0;
      for await (const c of store.connections.find({})) {
        if (await hasLovedOne(db, credentials, c.workspaceId, c.lovedOneId)) continue;
        await disconnect(store, issuer(c), c, log);
        removed++;
      }
      return { removed };
    },
  };
}

/** Syncs the active connections whose last try is an interval old, the longest waiting first; one
 *  needing sign-in or confirmation waits for the family. A failure is kept on its connection. */
export function portalSyncJob(config: Config, store: PortalStore, timelines: Timelines, clock: () => number, log: Logger): SweepJob {
  const ctx: PortalContext = { store, timelines, issuerOf: issuerOf(config), clock };
  return {
    name: 'portal-sync',
    schedule: '*/10 * * * *',
    run: async () => {
      const started = clock();
      const due = new Date(started - config.portalSyncInterval);
      const counts = { synced: 0, failed: 0, waiting: 0, later: 0 };
      const connections = await store.connections.find({ status: 'active' }).toArray();
      const waiting = (c: (typeof connections)[number]) => (c.lastTriedAt ?? c.lastSync?.at ?? new Date(0)).getTime();
      for (const c of connections.sort((a, b) => waiting(a) - waiting(b))) {
        if (waiting(c) > due.getTime()) continue;
        if (clock() - started > SWEEP_BUDGET_MS) {
          counts.later++;
          continue;
        }
        try {
          await syncConnection(ctx, c);
          counts.synced++;
        } catch (err) {
          if (!(err instanceof PortalError)) log.error({ err, portal: c.base }, 'portal sync failed');
          counts.failed++;
        }
      }
      counts.waiting = await store.connections.countDocuments({ status: 'needs_sign_in' });
      return counts;
    },
  };
}
