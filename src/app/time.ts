// Times for the viewer: in the person's own zone (Settings; the browser's at first sign-in), else
// the `tz` cookie the app's script sets from the browser, else UTC; the zone's name always shows.
import { readCookie } from '../auth/sessions.js';
import { wallTimeToInstant } from '../family/instant.js';

export const TZ_COOKIE = 'tz';

/** The viewer's IANA zone, if the cookie names one this runtime knows; else UTC. */
export function viewerZone(cookieHeader: string | undefined): string {
  const raw = readCookie(cookieHeader, TZ_COOKIE);
  if (!raw || raw.length > 64) return 'UTC';
  try {
    return new Intl.DateTimeFormat('en-US', { timeZone: raw }).resolvedOptions().timeZone;
  } catch {
    return 'UTC';
  }
}

export interface Clock {
  zone: string;
  /** "8:02 am" */
  time(d: Date): string;
  /** "Mon, Nov 23" (with the year when it is not this year's) */
  day(d: Date): string;
  /** "Mon, Nov 23, 8:02 am" */
  dayTime(d: Date): string;
  /** "2026-11-23" in the zone: for date inputs and grouping. */
  isoDay(d: Date): string;
  /** The zone's short name at that instant, e.g. "EST" or "GMT+1". */
  zoneName(d: Date): string;
  /** The instant a zone-local calendar day starts, from "YYYY-MM-DD"; null when not a date. */
  startOf(isoDay: string): Date | null;
}

const lower = (s: string) => s.replace(/\s?([AP]M)$/, (_, m: string) => ` ${m.toLowerCase()}`).replace(/\u202f/g, ' ');

export function clockIn(zone: string, now = new Date()): Clock {
  const time = new Intl.DateTimeFormat('en-US', { timeZone: zone, hour: 'numeric', minute: '2-digit' });
  const dayThisYear = new Intl.DateTimeFormat('en-US', { timeZone: zone, weekday: 'short', month: 'short', day: 'numeric' });
  const dayOtherYear = new Intl.DateTimeFormat('en-US', { timeZone: zone, weekday: 'short', month: 'short', day: 'numeric', year: 'numeric' });
  const iso = new Intl.DateTimeFormat('en-CA', { timeZone: zone, year: 'numeric', month: '2-digit', day: '2-digit' });
  const zoneName = new Intl.DateTimeFormat('en-US', { timeZone: zone, timeZoneName: 'short' });
  const year = iso.format(now).slice(0, 4);
  const clock: Clock = {
    zone,
    time: (d) => lower(time.format(d)),
    day: (d) => (iso.format(d).startsWith(year) ? dayThisYear : dayOtherYear).format(d),
    dayTime: (d) => `${clock.day(d)}, ${clock.time(d)}`,
    isoDay: (d) => iso.format(d),
    zoneName: (d) => zoneName.formatToParts(d).find((p) => p.type === 'timeZoneName')?.value ?? zone,
    // A day that starts with a skipped midnight (zones that change at 00:00) starts when the clocks jump.
    startOf: (isoDay) => wallTimeToInstant(zone, isoDay, '00:00', 'after'),
  };
  return clock;
}

export { duration } from '../family/careEventTypes.js';

/** " (EST)" after "America/New_York": the zone's short name at that instant, when it adds to the zone's own ("UTC" has none). */
export const zoneAside = (clock: Clock, d: Date): string => {
  const name = clock.zoneName(d);
  return name === clock.zone ? '' : ` (${name})`;
};

/** "Mon, Nov 23, 8:02 am EST": a time on its own, with its zone. */
export const stamp = (clock: Clock, d: Date | null | undefined, none = 'never'): string => (d ? `${clock.dayTime(d)} ${clock.zoneName(d)}` : none);
