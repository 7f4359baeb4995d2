// The cron role's OAuth sweep: FerretDB v1 has no TTL indexes, so expiry is a field checked on
// every read plus this periodic delete.
import type { Credentials } from '../auth/credentials.js';
import type { Db } from 'mongodb';
import type { Config } from '../config.js';
import type { SweepJob } from '../slice/contract.js';
import { OAuthKeys } from './keys.js';
import { OAuthStore } from './store.js';

export function oauthSweepJobs(
  config: Pick<Config, 'oauthClientUnused' | 'oauthKeyRotation'>,
  db: Db,
  credentials: Credentials,
  clock: () => number = Date.now,
): SweepJob[] {
  const store = new OAuthStore(db, credentials, clock);
  const keys = new OAuthKeys(db, config.oauthKeyRotation, undefined, clock);
  return [
    {
      name: 'oauth',
      schedule: '7,37 * * * *',
      run: async () => ({ ...(await store.sweep(config.oauthClientUnused)), retiredKeys: await keys.sweep() }),
    },
  ];
}
