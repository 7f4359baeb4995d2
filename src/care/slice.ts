// The care slice: what the agencies and the family inbox reported about a loved one, as pages for
// the members of the loved one's workspace.
import { appHelpers } from '../app/helpers.js';
import { MEDICATION_INDEXES, MEDICATIONS } from '../family/medications.js';
import { defineSlice } from '../slice/contract.js';
import { carePages } from './pages.js';
import { CARE_ROUTES } from './routes.js';

export const careSlice = defineSlice({
  name: 'care',
  routes: CARE_ROUTES,
  // The medication list: its versions, read by loved one and medication.
  indexes: { [MEDICATIONS]: MEDICATION_INDEXES },
  serve: (ctx) => carePages(appHelpers(ctx.config, ctx.db, ctx.credentials, ctx.timelines), ctx.db, ctx.config.maxReplyBytes),
});
