// The newsletter slice: double opt-in sign-up and one-click unsubscribe.
import { defineSlice } from '../slice/contract.js';
import { newsletterHandlers } from './handler.js';
import { NEWSLETTER_ROUTES } from './routes.js';
import { NEWSLETTER_INDEXES } from './store.js';

export const newsletterSlice = defineSlice({
  name: 'newsletter',
  routes: NEWSLETTER_ROUTES,
  indexes: NEWSLETTER_INDEXES,
  serve: (ctx) => newsletterHandlers(ctx.config, ctx.db),
});
