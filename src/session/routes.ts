// The session helpers' routes (SPEC §A), on the site and app hosts alike so one sign-in covers both.
import { errors, jsonContent } from '../http/openapi.js';
import { defineRoutes, type SameOriginRule } from '../slice/contract.js';
import { perMinute } from '../limits/limiter.js';

const sessionStatus = { type: 'object', required: ['authenticated'], additionalProperties: true, properties: { authenticated: { type: 'boolean' } } };
const sessionRequest = {
  type: 'object',
  required: ['idToken'],
  properties: { idToken: { type: 'string', minLength: 1, maxLength: 8192, description: 'An identity-provider ID token of a signed-in user.' } },
};

/** A browser always sends Origin on a POST: a foreign one is another site's page (login CSRF). Servers send none. */
const OWN_PAGES: SameOriginRule = {
  from: ['site', 'app'],
  allowMissing: true,
  hint: (origins) => `Sign-in and sign-out are accepted only from pages on ${origins}.`,
};

export const SESSION_ROUTES = defineRoutes({
  apiAuthSession: {
    hosts: ['site', 'app'],
    path: '/api/auth/session',
    methods: ['POST'],
    bodyLimit: 16 * 1024,
    rate: { bucket: 'session', by: 'ip', policy: (c) => perMinute(c.rateSessionPerMin) },
    sameOrigin: OWN_PAGES,
    forwardHeaders: ['origin'],
    openapi: (kit) => ({
      post: {
        tags: ['session'],
        summary: 'Start a session from an ID token',
        description: 'Exchanges an identity-provider ID token for a session cookie (cc_session), or says that a token refresh is required.',
        operationId: 'create_session',
        requestBody: { required: true, content: jsonContent(kit.component('SessionRequest', sessionRequest)) },
        responses: {
          '200': { description: 'A session cookie was set, or a refresh is required.', content: jsonContent({ type: 'object', additionalProperties: true }) },
          ...errors('BadRequest', 'Unauthorized', 'Forbidden', 'RateLimited', 'Internal'),
        },
      },
    }),
  },
  apiAuthMe: {
    hosts: ['site', 'app'],
    path: '/api/auth/me',
    methods: ['GET'],
    forwardHeaders: ['cookie'],
    openapi: (kit) => ({
      get: {
        tags: ['session'],
        summary: 'Who is signed in',
        description: 'Reads the session cookie. Without a valid session the answer is still 200, with `authenticated: false`.',
        operationId: 'get_session',
        security: [{}, { sessionCookie: [] }],
        responses: { '200': { description: 'The session state.', content: jsonContent(kit.component('SessionStatus', sessionStatus)) } },
      },
    }),
  },
  apiAuthSignout: {
    hosts: ['site', 'app'],
    path: '/api/auth/signout',
    methods: ['POST'],
    sameOrigin: OWN_PAGES,
    forwardHeaders: ['cookie', 'origin'],
    openapi: () => ({
      post: {
        tags: ['session'],
        summary: 'Sign out',
        operationId: 'sign_out',
        responses: {
          '200': { description: 'The session cookie is cleared.', content: jsonContent({ type: 'object', additionalProperties: true }) },
          ...errors('Forbidden'),
        },
      },
    }),
  },
});
