// The domain layer's manifest: the indexes of the family records (users, workspaces, members, loved
// ones, care events, invitations) that every family-facing slice reads and writes through one owner
// module. No routes, handlers or jobs: family/ sits below the slices (docs/architecture.md).
import { defineSlice } from '../slice/contract.js';
import { FAMILY_INVITE_INDEXES, FAMILY_INVITES } from './invites.js';
import { CARE_EVENT_STREAM, WORKSPACE_INDEXES } from './records.js';

export const familySlice = defineSlice({
  name: 'family',
  timelines: [CARE_EVENT_STREAM],
  indexes: { ...WORKSPACE_INDEXES, [FAMILY_INVITES]: FAMILY_INVITE_INDEXES },
});
