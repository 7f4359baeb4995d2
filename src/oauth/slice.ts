// The oauth slice: the OAuth 2.1 authorization server on the auth host, its stores and sweeps.
import { defineSlice } from '../slice/contract.js';
import { OAUTH_REVOKED_ACCESS_TOKENS, REVOKED_ACCESS_TOKEN_INDEXES } from './revokedTokens.js';
import { authorizationServer } from './server.js';
import { OAUTH_INDEXES } from './store.js';
import { oauthSweepJobs } from './sweep.js';

export const oauthSlice = defineSlice({
  name: 'oauth',
  indexes: { ...OAUTH_INDEXES, [OAUTH_REVOKED_ACCESS_TOKENS]: REVOKED_ACCESS_TOKEN_INDEXES },
  listeners: [{ host: 'auth', middleware: (ctx) => authorizationServer(ctx) }],
  jobs: (ctx) => oauthSweepJobs(ctx.config, ctx.db, ctx.credentials),
});
