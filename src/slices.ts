// Every slice of carecircle, in one list: the role wiring builds listeners, workers, indexes,
// jobs and discovery documents from it. Order matters only where listeners share a host (the
// sign-in pages before the authorization server).
import { appSlice } from './app/slice.js';
import { communitySlice } from './community/slice.js';
import { LEASES } from './cron/lease.js';
import { directorySlice } from './directory/slice.js';
import { familySlice } from './family/slice.js';
import { identitySlice } from './identity/slice.js';
import { inboxSlice } from './inbox/slice.js';
import { ingestSlice } from './ingest/slice.js';
import { keysSlice } from './keys/slice.js';
import { newsletterSlice } from './newsletter/slice.js';
import { oauthSlice } from './oauth/slice.js';
import { sandboxSlice } from './sandbox/slice.js';
import { sessionSlice } from './session/slice.js';
import { siteSlice } from './site/slice.js';
import { defineSlice, type SliceManifest } from './slice/contract.js';
import { ENTITY_SNAPSHOTS } from './store/entities.js';
import { RATE_HEADS, RATE_TOKENS, RateLimiter, rateTokenIndexes } from './store/rateLimit.js';
import { versionedIndexes } from './store/versioned.js';
import { workspaceSlice } from './workspace/slice.js';

/** The shared mechanism's own collections and sweep: rate limits, leases, entity snapshots. */
const platformSlice = defineSlice({
  name: 'platform',
  indexes: { [RATE_TOKENS]: rateTokenIndexes, [RATE_HEADS]: rateTokenIndexes, [LEASES]: versionedIndexes, [ENTITY_SNAPSHOTS]: versionedIndexes },
  jobs: (ctx) => {
    const limiter = new RateLimiter(ctx.db);
    // A spent token outside its window no longer limits anyone.
    return [{ name: 'rate-tokens', schedule: '*/15 * * * *', run: async () => ({ removed: await limiter.sweep() }) }];
  },
});

export const SLICES: readonly SliceManifest[] = [
  platformSlice,
  familySlice,
  directorySlice,
  siteSlice,
  newsletterSlice,
  communitySlice,
  sessionSlice,
  identitySlice,
  oauthSlice,
  keysSlice,
  workspaceSlice,
  appSlice,
  sandboxSlice,
  inboxSlice,
  ingestSlice,
];
