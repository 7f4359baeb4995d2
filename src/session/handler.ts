// The session helpers of SPEC §A: POST /api/auth/session, GET /api/auth/me, POST /api/auth/signout.
// Served on the site and app hosts alike, so one sign-in covers both. Both writes are refused from a
// page on another site (login and logout CSRF), and an ID token opens no session once signed out.
import type { Credentials } from '../auth/credentials.js';
import type { Db } from 'mongodb';
import { z } from 'zod';
import type { Config } from '../config.js';
import { identityProvider } from '../config.js';
import { createIdTokenVerifier, IdTokenError, type IdTokenVerifier } from '../identity/verify.js';
import { describeIssues } from '../rpc/envelope.js';
import { ApiProblem, json } from '../http/reply.js';
import { handlers, type RouteHandlers } from '../slice/contract.js';
import { WorkspaceStore, type UserRecord } from '../family/records.js';
import { SESSION_ROUTES } from './routes.js';
import { clearedSessionCookie, hashToken, readCookie, SESSION_COOKIE, SESSION_TTL_MS, sessionCaller, sessionCookie, SessionStore } from '../auth/sessions.js';
import type { Timelines } from '../store/timeline/port.js';

/** Providers demand a fresh sign-in before minting a long session from an old token. */
export const FRESH_SIGN_IN_SEC = 5 * 60;

const sessionBody = z.object({ idToken: z.string().min(1, 'is required').max(8192, 'is too long') });

/** A session opened from an ID token: who, and the cookie that carries it. */
export interface OpenedSession {
  user: UserRecord;
  expiresAt: Date;
  cookie: string;
}

/** The answer when the sign-in is too old to open a long session from. */
export const REFRESH_REQUIRED = 'Sign-in is older than 5 minutes: refresh the ID token (or sign in again) and send it once more.';

/**
 * Verify an ID token and open a session for its person: the one place the JSON API and the app's
 * sign-in return (a plain form post) open sessions. Null when the sign-in is too old; an ApiProblem
 * (401 UNAUTHORIZED) when the token is refused.
 */
export function sessionOpener(
  config: Config,
  db: Db,
  credentials: Credentials,
  timelines: Timelines,
  verify: IdTokenVerifier = createIdTokenVerifier(identityProvider(config)),
  clock: () => number = Date.now,
): (idToken: string) => Promise<OpenedSession | null> {
  const sessions = new SessionStore(db, credentials, clock);
  const workspaces = new WorkspaceStore(db, credentials, config.inboxDomain, timelines);
  return async (rawToken) => {
    let identity;
    try {
      identity = await verify(rawToken);
    } catch (err) {
      if (err instanceof IdTokenError)
        throw new ApiProblem(401, 'UNAUTHORIZED', `idToken rejected: ${err.message}`, 'Sign in again with the identity provider and send the new ID token.');
      throw err;
    }
    if (identity.authTime !== undefined && clock() / 1000 - identity.authTime > FRESH_SIGN_IN_SEC) return null;
    const idToken = { hash: hashToken(rawToken), expiresAt: new Date(identity.expiresAt ? identity.expiresAt * 1000 : clock() + SESSION_TTL_MS) };
    if (await sessions.idTokenSignedOut(idToken.hash))
      throw new ApiProblem(
        401,
        'UNAUTHORIZED',
        'idToken rejected: a session opened with this ID token was signed out',
        'Sign in again with the identity provider and send the new ID token.',
      );
    const user = await workspaces.upsertUser(identity, new Date(clock()));
    const { token, expiresAt } = await sessions.create(
      { uid: user._id, email: user.email, ...(user.name ? { name: user.name } : {}), tenant: user.tenant },
      idToken,
    );
    return { user, expiresAt, cookie: sessionCookie(config, token, expiresAt) };
  };
}

export function sessionHandlers(
  config: Config,
  db: Db,
  credentials: Credentials,
  timelines: Timelines,
  verify: IdTokenVerifier = createIdTokenVerifier(identityProvider(config)),
  clock: () => number = Date.now,
): RouteHandlers {
  const sessions = new SessionStore(db, credentials, clock);
  const workspaces = new WorkspaceStore(db, credentials, config.inboxDomain, timelines);
  const openSession = sessionOpener(config, db, credentials, timelines, verify, clock);
  return handlers(SESSION_ROUTES)
    .on('apiAuthSession', 'POST', async (req) => {
      const body = sessionBody.safeParse(req.body ?? {});
      if (!body.success)
        throw new ApiProblem(400, 'VALIDATION_FAILED', `Invalid body: ${describeIssues(body.error)}`, 'Send {"idToken": "<identity-provider ID token>"}.');
      const opened = await openSession(body.data.idToken);
      if (!opened) return json(200, { authenticated: false, refreshRequired: true, message: REFRESH_REQUIRED });
      const { user, expiresAt } = opened;
      return json(
        200,
        { authenticated: true, uid: user._id, email: user.email, name: user.name ?? null, tenant: user.tenant, expiresAt: expiresAt.toISOString() },
        { 'set-cookie': opened.cookie, 'cache-control': 'no-store' },
      );
    })
    .on('apiAuthMe', 'GET', async (req) => {
      const caller = await sessionCaller(db, credentials, req.headers);
      if (!caller) return json(200, { authenticated: false }, { 'cache-control': 'no-store' });
      const membership = await workspaces.workspaceOf(caller.uid);
      return json(
        200,
        {
          authenticated: true,
          uid: caller.uid,
          email: caller.email,
          name: caller.name ?? null,
          tenant: caller.tenant,
          workspace: membership ? { id: membership.workspace._id, name: membership.workspace.name, role: membership.member.role } : null,
        },
        { 'cache-control': 'no-store' },
      );
    })
    .on('apiAuthSignout', 'POST', async (req) => {
      await sessions.revoke(readCookie(req.headers.cookie, SESSION_COOKIE));
      return json(200, { signedOut: true }, { 'set-cookie': clearedSessionCookie(config), 'cache-control': 'no-store' });
    })
    .done();
}
