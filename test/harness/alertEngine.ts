// The alert engine on a test's own database handle, as a carecircle process makes it (the embedded
// store's timeline shape, a silent log), its clock stopped at `at`.
import type { Db } from 'mongodb';
import { alertEngine } from '../../src/alerts/slice.js';
import { passThroughCredentials } from '../../src/auth/credentials.js';
import { loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/log.js';
import { timelinesOf } from '../../src/store/timeline/timelines.js';

export const engineOn = (db: Db, at: number) =>
  alertEngine({
    config: loadConfig({}),
    db,
    credentials: passThroughCredentials(db),
    timelines: timelinesOf(db, 'embedded'),
    log: createLogger('silent'),
    clock: () => at,
  });
