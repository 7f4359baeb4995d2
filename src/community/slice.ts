// The community slice: peer threads per channel.
import { defineSlice } from '../slice/contract.js';
import { communityHandlers } from './handler.js';
import { COMMUNITY_ROUTES } from './routes.js';
import { COMMUNITY_INDEXES } from './store.js';

export const communitySlice = defineSlice({
  name: 'community',
  routes: COMMUNITY_ROUTES,
  indexes: COMMUNITY_INDEXES,
  serve: (ctx) => communityHandlers(ctx.config, ctx.db, ctx.limiter),
});
