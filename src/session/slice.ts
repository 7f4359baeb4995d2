// The session slice: sign-in helpers for the website, and the sessions collection they own.
import { defineSlice } from '../slice/contract.js';
import { sessionHandlers } from './handler.js';
import { SESSION_ROUTES } from './routes.js';
import { SESSION_INDEXES, SESSIONS, SessionStore, SIGNED_OUT_ID_TOKENS, SIGNED_OUT_INDEXES } from '../auth/sessions.js';

export const sessionSlice = defineSlice({
  name: 'session',
  routes: SESSION_ROUTES,
  indexes: { [SESSIONS]: SESSION_INDEXES, [SIGNED_OUT_ID_TOKENS]: SIGNED_OUT_INDEXES },
  serve: (ctx) => sessionHandlers(ctx.config, ctx.db, ctx.credentials, ctx.timelines),
  jobs: (ctx) => {
    const sessions = new SessionStore(ctx.db, ctx.credentials, ctx.clock);
    return [{ name: 'sessions', schedule: '17,47 * * * *', run: () => sessions.sweep() }];
  },
});
