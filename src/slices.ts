// Every slice of carecircle, in one list: the role wiring builds listeners, workers, indexes,
// jobs and discovery documents from it. Order matters only where listeners share a host (the
// sign-in pages before the authorization server).
import { alertsSlice } from './alerts/slice.js';
import { appSlice } from './app/slice.js';
import { careSlice } from './care/slice.js';
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
import { plansSlice } from './plans/slice.js';
import { portalSlice } from './portal/slice.js';
import { sandboxSlice } from './sandbox/slice.js';
import { sessionSlice } from './session/slice.js';
import { siteSlice } from './site/slice.js';
import { defineSlice, type SliceManifest } from './slice/contract.js';
import { ENTITY_SNAPSHOTS } from './store/entities.js';
import { versionedIndexes } from './store/versioned.js';
import { workspaceSlice } from './workspace/slice.js';

/** The shared mechanism's own collections: leases and entity snapshots. */
const platformSlice = defineSlice({
  name: 'platform',
  indexes: { [LEASES]: versionedIndexes, [ENTITY_SNAPSHOTS]: versionedIndexes },
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
  careSlice,
  plansSlice,
  portalSlice,
  inboxSlice,
  ingestSlice,
  alertsSlice,
];
