// The oauth slice: the OAuth 2.1 authorization server on the auth host, its stores and sweeps.
import { defineAuthListener, defineSlice } from '../slice/contract.js';
import { OAUTH_AUTH_ROUTES } from './paths.js';
import { OAUTH_REVOKED_ACCESS_TOKENS, REVOKED_ACCESS_TOKEN_INDEXES } from './revokedTokens.js';
import { authorizationServer } from './server.js';
import { OAUTH_INDEXES } from './store.js';
import { oauthSweepJobs } from './sweep.js';

export const oauthSlice = defineSlice({
  name: 'oauth',
  indexes: { ...OAUTH_INDEXES, [OAUTH_REVOKED_ACCESS_TOKENS]: REVOKED_ACCESS_TOKEN_INDEXES },
  listeners: [defineAuthListener({ host: 'auth', routes: OAUTH_AUTH_ROUTES, mount: (ctx) => authorizationServer(ctx) })],
  jobs: (ctx) => oauthSweepJobs(ctx.config, ctx.db, ctx.credentials),
});
