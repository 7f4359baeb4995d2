// The family slice: the records every family-facing slice reads and writes through its one
// owner module (users, workspaces, members, loved ones, care events, invitations).
import { defineSlice } from '../slice/contract.js';
import { FAMILY_INVITE_INDEXES, FAMILY_INVITES } from './invites.js';
import { CARE_EVENT_STREAM, WORKSPACE_INDEXES } from './records.js';

export const familySlice = defineSlice({ name: 'family', timelines: [CARE_EVENT_STREAM], indexes: { ...WORKSPACE_INDEXES, [FAMILY_INVITES]: FAMILY_INVITE_INDEXES } });
