// The identity slice: the development identity provider's sign-in pages on the auth host (only
// when no real identity provider is configured; production refuses it).
import { identityProvider } from '../config.js';
import { defineAuthListener, defineSlice } from '../slice/contract.js';
import { DEV_IDP_ROUTES, devIdpHandlers } from './devIdp.js';

export const identitySlice = defineSlice({
  name: 'identity',
  listeners: [
    defineAuthListener({
      host: 'auth',
      routes: DEV_IDP_ROUTES,
      mount: (ctx) => {
        if (!identityProvider(ctx.config).development) return undefined;
        const dev = devIdpHandlers(ctx.config, ctx.db);
        return { jwks: [dev.jwks], loginPage: [dev.loginPage], signIn: [dev.signIn] };
      },
      allowedMethods: true,
    }),
  ],
});
