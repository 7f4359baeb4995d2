// The inbox slice: which family inbox addresses exist, and storing the mail that reaches them.
import { defineSlice } from '../slice/contract.js';
import { inboxHandlers } from './handler.js';
import { INBOX_INDEXES } from './records.js';
import { INBOX_ROUTES } from './routes.js';

export const inboxSlice = defineSlice({
  name: 'inbox',
  routes: INBOX_ROUTES,
  indexes: INBOX_INDEXES,
  serve: (ctx) => inboxHandlers(ctx.db),
});
