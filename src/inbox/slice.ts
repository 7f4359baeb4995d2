// The inbox slice: which family inbox addresses exist, storing the mail that reaches them, and
// its attachments for the family.
import { defineSlice } from '../slice/contract.js';
import { inboxHandlers } from './handler.js';
import { INBOX_INDEXES, INBOX_STREAM } from './records.js';
import { INBOX_ROUTES } from './routes.js';

export const inboxSlice = defineSlice({
  name: 'inbox',
  routes: INBOX_ROUTES,
  timelines: [INBOX_STREAM],
  indexes: INBOX_INDEXES,
  serve: (ctx) => inboxHandlers(ctx.db, ctx.credentials, ctx.timelines, ctx.config.inboxDomain),
});
