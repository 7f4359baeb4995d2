// Where the authorization server's endpoints live on the auth host (issuer AUTH_URL), and the one
// declaration of every route the oauth slice answers there.
import type { AuthRouteTable } from '../slice/contract.js';

export const OAUTH_ROUTES = {
  authorization: '/oauth/authorize',
  token: '/oauth/token',
  registration: '/oauth/register',
  revocation: '/oauth/revoke',
  jwks: '/.well-known/jwks.json',
} as const;

/** The one stylesheet and one script of the authorization server's pages. */
export const ASSET_PATHS = { css: '/oauth/assets/oauth.css', js: '/oauth/assets/oauth.js' } as const;

/** The sign-in and consent step of one authorization request. */
export const interactionPath = (uid: string): string => `/oauth/interaction/${encodeURIComponent(uid)}`;

/**
 * The oauth slice's routes on the auth host. oidc-provider serves the metadata, keys, authorize,
 * token and registration endpoints (OPTIONS is its CORS preflight); the rest are ours.
 */
export const OAUTH_AUTH_ROUTES = {
  oauthMetadata: { path: '/.well-known/oauth-authorization-server', methods: ['GET', 'OPTIONS'], body: 'none' },
  openidMetadata: { path: '/.well-known/openid-configuration', methods: ['GET', 'OPTIONS'], body: 'none' },
  jwks: { path: OAUTH_ROUTES.jwks, methods: ['GET', 'OPTIONS'], body: 'none' },
  authorize: { path: OAUTH_ROUTES.authorization, methods: ['GET'], body: 'none' },
  /** Where an interaction's result sends the browser back to finish the authorization request. */
  resume: { path: `${OAUTH_ROUTES.authorization}/:uid`, methods: ['GET'], body: 'none' },
  token: { path: OAUTH_ROUTES.token, methods: ['POST', 'OPTIONS'], body: 'form' },
  register: { path: OAUTH_ROUTES.registration, methods: ['POST', 'OPTIONS'], body: 'json' },
  /** Reading a registration back (RFC 7592): refused, no registration access token is issued. */
  client: { path: `${OAUTH_ROUTES.registration}/:clientId`, methods: ['GET'], body: 'none' },
  revoke: { path: OAUTH_ROUTES.revocation, methods: ['POST', 'OPTIONS'], body: 'form' },
  css: { path: ASSET_PATHS.css, methods: ['GET'], body: 'none' },
  js: { path: ASSET_PATHS.js, methods: ['GET'], body: 'none' },
  interaction: { path: '/oauth/interaction/:uid', methods: ['GET'], body: 'none' },
  signedIn: { path: '/oauth/interaction/:uid/signed-in', methods: ['GET'], body: 'none' },
  /** The identity provider posted the ID token back (form_post): a browser without script signs in here. */
  signedInPosted: { path: '/oauth/interaction/:uid/signed-in', methods: ['POST'], body: 'form' },
  login: { path: '/oauth/interaction/:uid/login', methods: ['POST'], body: 'form' },
  consent: { path: '/oauth/interaction/:uid/consent', methods: ['POST'], body: 'form' },
} as const satisfies AuthRouteTable;
