// The cron leader's sweep of connections whose loved one was removed: their tokens are revoked at
// the portal and deleted, so no sealed sign-in outlives the person it was for.
import type { Credentials } from '../auth/credentials.js';
import type { Config } from '../config.js';
import { hasLovedOne } from '../family/records.js';
import type { Logger } from '../log.js';
import type { Db } from 'mongodb';
import type { SweepJob } from '../slice/contract.js';
import type { PortalStore } from './connections.js';
import { disconnect, issuerOf } from './issuers.js';

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
