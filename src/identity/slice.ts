// The identity slice: the development identity provider's sign-in pages on the auth host (only
// when no real identity provider is configured; production refuses it).
import type { Middleware } from 'koa';
import { identityProvider } from '../config.js';
import { defineSlice } from '../slice/contract.js';
import { devIdpRouter } from './devIdp.js';

export const identitySlice = defineSlice({
  name: 'identity',
  listeners: [
    {
      host: 'auth',
      middleware: (ctx) => {
        if (!identityProvider(ctx.config).development) return [];
        const dev = devIdpRouter(ctx.config, ctx.db);
        // The router's middleware expects its own context type; Koa passes the same object.
        return [dev.routes(), dev.allowedMethods()] as unknown as Middleware[];
      },
    },
  ],
});
