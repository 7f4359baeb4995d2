// The inbox slice: which family inbox addresses exist, and storing the mail that reaches them.
import { defineSlice } from '../slice/contract.js';
import { inboxHandlers } from './handler.js';
import { INBOX_ROUTES } from './routes.js';

export const inboxSlice = defineSlice({
  name: 'inbox',
  routes: INBOX_ROUTES,
  serve: (ctx) => inboxHandlers(ctx.config, ctx.db),
});
