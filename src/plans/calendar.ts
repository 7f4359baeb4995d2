// Each member's private calendar feed: a secret URL whose token is kept only as its SHA-256, which
// the member can rotate (the old URL stops at once) or turn off; and the feed itself, iCalendar
// (RFC 5545) written by ical-generator, so escaping, line folding and dates follow the standard.
import { randomBytes } from 'node:crypto';
import ical, { ICalCalendarMethod, ICalEventStatus } from 'ical-generator';
import type { Collection, Db, IndexDescription } from 'mongodb';
import { hashToken } from '../auth/sessions.js';
import type { AppointmentRecord } from '../family/plans.js';

export const CALENDAR_FEEDS = 'plan_calendar_feeds';
export const CALENDAR_FEED_INDEXES: Record<string, IndexDescription[]> = {
  [CALENDAR_FEEDS]: [{ key: { uid: 1 }, name: 'by_uid' }],
};

/** A feed token: 32 random bytes, base64url. */
const FEED_TOKEN = /^[A-Za-z0-9_-]{43}$/;

interface FeedRecord {
  _id: string; // SHA-256 of the token
  uid: string;
  workspaceId: string;
  createdAt: Date;
}

export const feedPath = (token: string) => `/calendar/${token}.ics`;

export class CalendarFeeds {
  private readonly feeds: Collection<FeedRecord>;
  constructor(
    db: Db,
    private readonly clock: () => number = Date.now,
  ) {
    this.feeds = db.collection(CALENDAR_FEEDS);
  }

  /** Whether the member has a feed turned on. */
  async hasFeed(uid: string): Promise<{ since: Date } | null> {
    const found = await this.feeds.findOne({ uid });
    return found ? { since: found.createdAt } : null;
  }

  /** A new secret for the member; any earlier one stops working. The plaintext is shown once. */
  async rotate(uid: string, workspaceId: string): Promise<string> {
    const token = randomBytes(32).toString('base64url');
    await this.feeds.deleteMany({ uid });
    await this.feeds.insertOne({ _id: hashToken(token), uid, workspaceId, createdAt: new Date(this.clock()) });
    return token;
  }

  async turnOff(uid: string): Promise<void> {
    await this.feeds.deleteMany({ uid });
  }

  /** Whose feed a token opens; null for a malformed, rotated or turned-off one. Looked up by the
   *  token's hash, so the token itself is never compared nor stored. */
  async open(token: string): Promise<{ uid: string; workspaceId: string } | null> {
    if (!FEED_TOKEN.test(token)) return null;
    const found = await this.feeds.findOne({ _id: hashToken(token) });
    return found ? { uid: found.uid, workspaceId: found.workspaceId } : null;
  }
}

/** The feed: a workspace's appointments as VEVENTs in UTC (exact instants, shown by the calendar
 *  app in its own zone), a cancelled one kept as STATUS:CANCELLED so subscribed calendars drop it. */
export function calendarText(
  o: { name: string; host: string; url: string },
  appointments: readonly AppointmentRecord[],
  lovedOneName: (id: string) => string,
  memberName: (uid: string) => string | undefined,
): string {
  const cal = ical({
    name: o.name,
    prodId: { company: 'carecircle', product: 'family calendar', language: 'EN' },
    method: ICalCalendarMethod.PUBLISH,
    url: o.url,
    // Calendar apps refresh a subscription about this often.
    ttl: 60 * 60,
  });
  for (const a of appointments) {
    const taker = a.takenBy ? memberName(a.takenBy) : undefined;
    const description = [a.withWhom ? `With ${a.withWhom}` : '', taker ? `Taking ${lovedOneName(a.lovedOneId)}: ${taker}` : '', a.notes ?? '']
      .filter(Boolean)
      .join('\n');
    cal.createEvent({
      id: `${a._id}@${o.host}`,
      start: a.start,
      end: a.end,
      stamp: a.updatedAt,
      lastModified: a.updatedAt,
      created: a.createdAt,
      sequence: a.sequence,
      summary: `${lovedOneName(a.lovedOneId)}: ${a.title}`,
      ...(a.place ? { location: a.place } : {}),
      ...(description ? { description } : {}),
      status: a.status === 'cancelled' ? ICalEventStatus.CANCELLED : ICalEventStatus.CONFIRMED,
    });
  }
  return cal.toString();
}
