// A member's calendar feed: turned on, rotated or off in Settings (the secret URL is shown once,
// after the post, through a one-time message), and served to calendar apps at that URL.
import type { Db } from 'mongodb';
import type { Credentials } from '../auth/credentials.js';
import type { HttpReplyEnvelope, HttpRequestEnvelope } from '../bus/envelopes.js';
import type { Config } from '../config.js';
import type { AppHelpers } from '../app/helpers.js';
import { Flashes } from '../app/flash.js';
import { stamp } from '../app/time.js';
import { FamilyCircle } from '../family/circle.js';
import { redirect } from '../http/page.js';
import { text } from '../http/reply.js';
import { CalendarFeeds, calendarText, feedPath } from './calendar.js';
import { PlansStore } from '../family/plans.js';

/** How far back a feed reaches: last month's appointments stay in the calendar. */
const FEED_PAST_DAYS = 30;
const FLASH_NAME = 'calendar feed';

export function feedPages(h: AppHelpers, db: Db, credentials: Credentials, config: Config) {
  const feeds = new CalendarFeeds(db);
  const flashes = new Flashes(db, config);
  const plans = new PlansStore(db);
  const circle = new FamilyCircle(db, credentials);
  const urlOf = (token: string) => `${config.appUrl}${feedPath(token)}`;

  const settingsPage = async (req: HttpRequestEnvelope): Promise<HttpReplyEnvelope> => {
    const caller = await h.currentCaller(req);
    if (!caller) return h.signedOutPage('/settings/calendar');
    const membership = await h.store.workspaceOf(caller.uid);
    if (!membership) return redirect('/onboarding');
    const [feed, shown, clock] = await Promise.all([feeds.hasFeed(caller.uid), flashes.take(caller.uid, req.headers.cookie), h.clockFor(caller, req)]);
    const fresh = shown?.keyName === FLASH_NAME ? shown.plaintext : null;
    return h.pageFor(
      200,
      'Your calendar feed',
      <>
        <h1>Your calendar feed</h1>
        <section class="card" id="calendar-feed">
          <p>
            A private address your calendar app (Google Calendar, Apple Calendar, Outlook) can subscribe to, so the family's appointments for your loved ones
            appear there and stay up to date. Anyone who has the address can read those appointments: keep it to yourself.
          </p>
          {fresh ? (
            <>
              <p class="notice">Copy this address now and add it to your calendar app as a subscription ("From URL"); it is not shown again.</p>
              <label for="feed-url">Your calendar address</label>
              <input id="feed-url" type="text" readOnly value={urlOf(fresh)} />
            </>
          ) : feed ? (
            <p id="feed-on">Your feed is on since {stamp(clock, feed.since)}. Its address was shown once, when you made it.</p>
          ) : (
            <p id="feed-off">Your feed is off.</p>
          )}
          <form method="post" action="/settings/calendar">
            <input type="hidden" name="action" value="rotate" />
            <button type="submit" id="feed-rotate">
              {feed ? 'Make a new address (the old one stops working)' : 'Turn on my calendar feed'}
            </button>
          </form>
          {feed ? (
            <form method="post" action="/settings/calendar">
              <input type="hidden" name="action" value="off" />
              <button type="submit" class="secondary" id="feed-off-button">
                Turn the feed off
              </button>
            </form>
          ) : null}
          <p>
            <a href="/settings">Back to Settings</a>
          </p>
        </section>
      </>,
      caller,
      fresh ? { 'set-cookie': flashes.cleared } : {},
    );
  };

  const settingsPost = async (req: HttpRequestEnvelope): Promise<HttpReplyEnvelope> => {
    const caller = await h.currentCaller(req);
    if (!caller) return redirect('/signin?next=%2Fsettings%2Fcalendar');
    const membership = await h.store.workspaceOf(caller.uid);
    if (!membership) return redirect('/onboarding');
    const action = (req.body as Record<string, unknown> | undefined)?.action;
    if (action === 'off') {
      await feeds.turnOff(caller.uid);
      return redirect('/settings/calendar');
    }
    const token = await feeds.rotate(caller.uid, membership.workspace._id);
    const cookie = await flashes.put(caller.uid, { plaintext: token, keyName: FLASH_NAME, last4: token.slice(-4) });
    return redirect('/settings/calendar', { 'set-cookie': cookie });
  };

  /** The feed: only while the token is current and its owner is still in that workspace. */
  const feed = async (_req: HttpRequestEnvelope, params: Record<string, string>): Promise<HttpReplyEnvelope> => {
    const name = params.feed ?? '';
    const notFound = text(404, 'No calendar here: the address may have been replaced or turned off in Settings.\n', 'text/plain; charset=utf-8', {
      'cache-control': 'no-store',
    });
    if (!name.endsWith('.ics')) return notFound;
    const owner = await feeds.open(name.slice(0, -'.ics'.length));
    if (!owner) return notFound;
    const membership = await h.store.workspaceOf(owner.uid);
    if (!membership || membership.workspace._id !== owner.workspaceId) return notFound;
    const [lovedOnes, members, appointments] = await Promise.all([
      h.store.lovedOnesOf(owner.workspaceId),
      circle.members(owner.workspaceId),
      plans.forFeed(owner.workspaceId, new Date(Date.now() - FEED_PAST_DAYS * 86_400_000)),
    ]);
    const body = calendarText(
      { name: `${membership.workspace.name} (carecircle)`, host: new URL(config.appUrl).host, url: `${config.appUrl}/` },
      appointments.filter((a) => lovedOnes.some((l) => l._id === a.lovedOneId)),
      (id) => lovedOnes.find((l) => l._id === id)?.displayName ?? 'Your loved one',
      (uid) => {
        const m = members.find((x) => x.uid === uid);
        return m ? (m.name ?? m.email) : undefined;
      },
    );
    return text(200, body, 'text/calendar; charset=utf-8', {
      'cache-control': 'private, no-store',
      'referrer-policy': 'no-referrer',
      'x-robots-tag': 'noindex',
    });
  };

  return { settingsPage, settingsPost, feed };
}
