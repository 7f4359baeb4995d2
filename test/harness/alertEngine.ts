// The alert engine on a test's own database handle, as a carecircle process makes it (the embedded
// store's timeline shape, a silent log), its clock stopped at `at`; with `claims`, as on NATS,
// taking each delivery's attempt in key-value instead of in the store.
import type { Db } from 'mongodb';
import type { AttemptClaims } from '../../src/alerts/claims.js';
import { alertEngine } from '../../src/alerts/slice.js';
import { passThroughCredentials } from '../../src/auth/credentials.js';
import { loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/log.js';
import { timelinesOf } from '../../src/store/timeline/timelines.js';

export const engineOn = (db: Db, at: number, claims?: AttemptClaims) =>
  alertEngine({
    ...(claims ? { claims } : {}),
    config: loadConfig({}),
    db,
    credentials: passThroughCredentials(db),
    timelines: timelinesOf(db, 'embedded'),
    log: createLogger('silent'),
    clock: () => at,
  });
