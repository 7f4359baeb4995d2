// Server-side sessions behind the cc_session cookie: only a hash of the cookie value is stored,
// so sign-out revokes it and a database copy cannot be replayed.
import { createHash, randomBytes } from 'node:crypto';
import type { Collection, Db, IndexDescription } from 'mongodb';
import type { Config } from '../config.js';
import type { Tenant } from '../tenants.js';

export const SESSION_COOKIE = 'cc_session';
export const SESSION_TTL_MS = 14 * 24 * 60 * 60 * 1000;
export const SESSIONS = 'sessions';
export const SESSION_INDEXES: IndexDescription[] = [{ key: { expiresAt: 1 }, name: 'by_expiry' }, { key: { uid: 1 }, name: 'by_uid' }];

export interface SessionRecord {
  _id: string; // sha256 of the cookie value
  uid: string;
  email: string;
  name?: string;
  tenant: Tenant;
  createdAt: Date;
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
  constructor(db: Db, private readonly clock: () => number = Date.now) {
    this.sessions = db.collection<SessionRecord>(SESSIONS);
  }

  async create(who: SessionCaller): Promise<{ token: string; expiresAt: Date }> {
    const token = randomBytes(32).toString('base64url');
    const now = this.clock();
    const expiresAt = new Date(now + SESSION_TTL_MS);
    await this.sessions.insertOne({ _id: hashToken(token), uid: who.uid, email: who.email, ...(who.name ? { name: who.name } : {}), tenant: who.tenant, createdAt: new Date(now), expiresAt });
    return { token, expiresAt };
  }

  /** The live session for a cookie value, or null (unknown, revoked or expired). */
  async find(token: string | undefined): Promise<SessionRecord | null> {
    if (!token || token.length > 100) return null;
    const s = await this.sessions.findOne({ _id: hashToken(token) });
    return s && s.expiresAt.getTime() > this.clock() ? s : null;
  }

  async revoke(token: string | undefined): Promise<void> {
    if (token) await this.sessions.deleteOne({ _id: hashToken(token) });
  }

  async sweep(): Promise<number> {
    return (await this.sessions.deleteMany({ expiresAt: { $lt: new Date(this.clock()) } })).deletedCount;
  }
}

/** One cookie's value from a Cookie header. */
export function readCookie(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? '').split(';')) {
    const i = part.indexOf('=');
    if (i > 0 && part.slice(0, i).trim() === name) return decodeURIComponent(part.slice(i + 1).trim());
  }
  return undefined;
}

/** Secure unless every host is plain http on localhost (the embedded run). */
function cookieAttributes(config: Config): string {
  const local = [config.siteUrl, config.appUrl].every((u) => /^http:\/\/(localhost|127\.0\.0\.1)(:\d+)?$/.test(u));
  return ['Path=/', 'HttpOnly', 'SameSite=Lax', ...(local ? [] : ['Secure']), ...(config.sessionCookieDomain ? [`Domain=${config.sessionCookieDomain}`] : [])].join('; ');
}

export function sessionCookie(config: Config, token: string, expiresAt: Date): string {
  return `${SESSION_COOKIE}=${token}; ${cookieAttributes(config)}; Expires=${expiresAt.toUTCString()}; Max-Age=${Math.floor(SESSION_TTL_MS / 1000)}`;
}

export function clearedSessionCookie(config: Config): string {
  return `${SESSION_COOKIE}=; ${cookieAttributes(config)}; Expires=Thu, 01 Jan 1970 00:00:00 GMT; Max-Age=0`;
}

/** The signed-in caller of a forwarded request, from its cookie header. */
export async function sessionCaller(db: Db, headers: Record<string, string>): Promise<SessionCaller | null> {
  const session = await new SessionStore(db).find(readCookie(headers.cookie, SESSION_COOKIE));
  return session ? { uid: session.uid, email: session.email, ...(session.name ? { name: session.name } : {}), tenant: session.tenant } : null;
}
