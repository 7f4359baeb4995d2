// Where the authorization server's endpoints live on the auth host (issuer AUTH_URL).
export const OAUTH_ROUTES = {
  authorization: '/oauth/authorize',
  token: '/oauth/token',
  registration: '/oauth/register',
  revocation: '/oauth/revoke',
  jwks: '/.well-known/jwks.json',
} as const;

/** The sign-in and consent step of one authorization request. */
export const interactionPath = (uid: string): string => `/oauth/interaction/${encodeURIComponent(uid)}`;
