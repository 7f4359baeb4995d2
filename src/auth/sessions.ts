// Server-side sessions behind the cc_session cookie: only a hash of the cookie value is stored,
// so sign-out revokes it and a database copy cannot be replayed. Sign-out also remembers the hash
// of the ID token the session was opened with, until that token expires, so it opens no other.
// A session is read once per process and then served from memory until it is signed out.
import { createHash, randomBytes } from 'node:crypto';
import type { Collection, Db, IndexDescription } from 'mongodb';
import type { Config } from '../config.js';
import type { Tenant } from '../tenants.js';
import type { Credentials } from './credentials.js';

export const SESSION_COOKIE = 'cc_session';
export const SESSION_TTL_MS = 14 * 24 * 60 * 60 * 1000;
export const SESSIONS = 'sessions';
export const SESSION_INDEXES: IndexDescription[] = [
  { key: { expiresAt: 1 }, name: 'by_expiry' },
  { key: { uid: 1 }, name: 'by_uid' },
  { key: { idTokenHash: 1 }, name: 'by_id_token' },
];
export const SIGNED_OUT_ID_TOKENS = 'signed_out_id_tokens';
export const SIGNED_OUT_INDEXES: IndexDescription[] = [{ key: { expiresAt: 1 }, name: 'by_expiry' }];

export interface SessionRecord {
  _id: string; // sha256 of the cookie value
  uid: string;
  email: string;
  name?: string;
  tenant: Tenant;
  createdAt: Date;
  expiresAt: Date;
  /** sha256 of the ID token the session was opened with, and when that token expires. */
  idTokenHash?: string;
  idTokenExpiresAt?: Date;
}

/** An ID token whose session was signed out, kept until the token itself expires. */
interface SignedOutIdToken {
  _id: string; // sha256 of the ID token
  expiresAt: Date;
}

/** The ID token a session is opened with, as stored: its hash and its expiry. */
export interface SessionIdToken {
  hash: string;
  expiresAt: Date;
}

export interface SessionCaller {
  uid: string;
  email: string;
  name?: string;
  tenant: Tenant;
}

export const hashToken = (token: string): string => createHash('sha256').update(token).digest('hex');

export class SessionStore {
  private readonly sessions: Collection<SessionRecord>;
  private readonly signedOut: Collection<SignedOutIdToken>;
  constructor(
    db: Db,
    private readonly credentials: Credentials,
    private readonly clock: () => number = Date.now,
  ) {
    this.sessions = db.collection<SessionRecord>(SESSIONS);
    this.signedOut = db.collection<SignedOutIdToken>(SIGNED_OUT_ID_TOKENS);
  }

  async create(who: SessionCaller, idToken?: SessionIdToken): Promise<{ token: string; expiresAt: Date }> {
    const token = randomBytes(32).toString('base64url');
    const now = this.clock();
    const expiresAt = new Date(now + SESSION_TTL_MS);
    await this.sessions.insertOne({
      _id: hashToken(token),
      uid: who.uid,
      email: who.email,
      ...(who.name ? { name: who.name } : {}),
      tenant: who.tenant,
      createdAt: new Date(now),
      expiresAt,
      ...(idToken ? { idTokenHash: idToken.hash, idTokenExpiresAt: idToken.expiresAt } : {}),
    });
    return { token, expiresAt };
  }

  /** Whether a session opened with this ID token (by hash) was signed out. */
  async idTokenSignedOut(idTokenHash: string): Promise<boolean> {
    return (await this.signedOut.findOne({ _id: idTokenHash }, { projection: { _id: 1 } })) !== null;
  }

  /** The live session for a cookie value, or null (unknown, revoked or expired). */
  async find(token: string | undefined): Promise<SessionRecord | null> {
    if (!token || token.length > 100) return null;
    const _id = hashToken(token);
    const s = await this.credentials.cache.lookup('session', _id, () => this.sessions.findOne({ _id }));
    return s && s.expiresAt.getTime() > this.clock() ? s : null;
  }

  /** Sign out: the session goes, its ID token is remembered as signed out until it expires, and
   *  any other session opened with the same token goes too. */
  async revoke(token: string | undefined): Promise<void> {
    if (!token || token.length > 100) return;
    const _id = hashToken(token);
    const session = await this.sessions.findOne({ _id }, { projection: { idTokenHash: 1, idTokenExpiresAt: 1, expiresAt: 1 } });
    const ended = [_id];
    if (session?.idTokenHash) {
      await this.signedOut.updateOne({ _id: session.idTokenHash }, { $set: { expiresAt: session.idTokenExpiresAt ?? session.expiresAt } }, { upsert: true });
      ended.push(...(await this.sessions.find({ idTokenHash: session.idTokenHash }, { projection: { _id: 1 } }).toArray()).map((s) => s._id));
      await this.sessions.deleteMany({ idTokenHash: session.idTokenHash });
    }
    await this.sessions.deleteOne({ _id });
    // Every process forgets them before the sign-out is answered.
    await this.credentials.revoked('session', ended);
  }

  /** Every session of one person ends (their account is deleted); every process forgets them first. */
  async revokeAllOf(uid: string): Promise<void> {
    const ended = (await this.sessions.find({ uid }, { projection: { _id: 1 } }).toArray()).map((s) => s._id);
    await this.sessions.deleteMany({ uid });
    if (ended.length) await this.credentials.revoked('session', ended);
  }

  /** Expired sessions, and signed-out ID tokens that have expired (FerretDB v1 has no TTL index). */
  async sweep(): Promise<{ sessions: number; signedOutIdTokens: number }> {
    const now = new Date(this.clock());
    const sessions = (await this.sessions.deleteMany({ expiresAt: { $lt: now } })).deletedCount;
    const signedOutIdTokens = (await this.signedOut.deleteMany({ expiresAt: { $lt: now } })).deletedCount;
    return { sessions, signedOutIdTokens };
  }
}

/** One cookie's value from a Cookie header. */
export function readCookie(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? '').split(';')) {
    const i = part.indexOf('=');
    if (i > 0 && part.slice(0, i).trim() === name) {
      // A value with broken percent-encoding is no session of ours: as good as none.
      try {
        return decodeURIComponent(part.slice(i + 1).trim());
      } catch {
        return undefined;
      }
    }
  }
  return undefined;
}

/** Secure unless every host is plain http on localhost (the embedded run). */
function cookieAttributes(config: Config): string {
  const local = [config.siteUrl, config.appUrl].every((u) => /^http:\/\/(localhost|127\.0\.0\.1)(:\d+)?$/.test(u));
  return [
    'Path=/',
    'HttpOnly',
    'SameSite=Lax',
    ...(local ? [] : ['Secure']),
    ...(config.sessionCookieDomain ? [`Domain=${config.sessionCookieDomain}`] : []),
  ].join('; ');
}

export function sessionCookie(config: Config, token: string, expiresAt: Date): string {
  return `${SESSION_COOKIE}=${token}; ${cookieAttributes(config)}; Expires=${expiresAt.toUTCString()}; Max-Age=${Math.floor(SESSION_TTL_MS / 1000)}`;
}

export function clearedSessionCookie(config: Config): string {
  return `${SESSION_COOKIE}=; ${cookieAttributes(config)}; Expires=Thu, 01 Jan 1970 00:00:00 GMT; Max-Age=0`;
}

/** The signed-in caller of a forwarded request, from its cookie header. */
export async function sessionCaller(db: Db, credentials: Credentials, headers: Record<string, string>): Promise<SessionCaller | null> {
  const session = await new SessionStore(db, credentials).find(readCookie(headers.cookie, SESSION_COOKIE));
  return session ? { uid: session.uid, email: session.email, ...(session.name ? { name: session.name } : {}), tenant: session.tenant } : null;
}
