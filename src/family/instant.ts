// What an instant is wherever carecircle reads one (event times, signed send times): strict ISO 8601;
// and the one conversion of a wall-clock time in a zone to an instant, daylight-saving changes included.
/** Strict ISO 8601 date-time with seconds and a zone: `2026-11-22T10:15:00Z`, `…T10:15:00.123+01:00`. */
const ISO_DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?(Z|[+-](\d{2}):(\d{2}))$/;

/** Milliseconds since the epoch, or null when the text is not a strict, real ISO 8601 instant. */
export function parseIsoInstant(text: string): number | null {
  const m = ISO_DATE_TIME.exec(text);
  if (!m) return null;
  const [, y, mo, d, h, mi, s] = m.map(Number) as number[];
  if (mo! < 1 || mo! > 12 || d! < 1 || h! > 23 || mi! > 59 || s! > 59) return null;
  if (d! > new Date(Date.UTC(y!, mo!, 0)).getUTCDate()) return null;
  if (m[9] !== undefined && (Number(m[9]) > 23 || Number(m[10]) > 59)) return null;
  const ms = Date.parse(text);
  return Number.isNaN(ms) ? null : ms;
}

/**
 * What to do with a wall time the zone skips (2:30 am on the day New York springs forward):
 * `refuse` answers null, for a time a person typed, who can pick another; `after` reads it with
 * the offset from before the jump, so it lands as far past the change as it was meant to be
 * (2:30 becomes 3:30), for a time that must happen that day whatever the clocks do (a dose, the
 * start of a day). A time the zone repeats (1:30 am on the day it falls back) is always the first
 * of the two, as calendars take it (RFC 5545, 3.3.5): no caller wants the second.
 */
export type SkippedWallTime = 'refuse' | 'after';

const wallFormats = new Map<string, Intl.DateTimeFormat>();
function wallFormat(zone: string): Intl.DateTimeFormat {
  let f = wallFormats.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    // Bounded: zones come from people's settings, and a name the runtime refuses never gets here.
    if (wallFormats.size < 500) wallFormats.set(zone, f);
  }
  return f;
}

/** `zone`'s wall clock at instant t, as the runtime's zone database has it: year, month, day, hour, minute, second. */
export const wallClockAt = (zone: string, t: number): Record<string, string> =>
  Object.fromEntries(
    wallFormat(zone)
      .formatToParts(new Date(t))
      .map((x) => [x.type, x.value]),
  );

/** How far `zone`'s wall clock is ahead of UTC at instant t, in ms (the zone database is the runtime's). */
export function zoneOffsetAt(zone: string, t: number): number {
  const p = wallClockAt(zone, t);
  return Date.UTC(Number(p.year), Number(p.month) - 1, Number(p.day), Number(p.hour) % 24, Number(p.minute), Number(p.second)) - Math.floor(t / 1000) * 1000;
}

/**
 * The instant a wall-clock time ("HH:MM") on a calendar day ("YYYY-MM-DD") names in an IANA zone:
 * the one conversion every form, schedule and day boundary uses. Null when the day or time is not
 * a real one, or (with `skipped: 'refuse'`) when the zone skips that time.
 */
export function wallTimeToInstant(zone: string, isoDay: string, hhmm: string, skipped: SkippedWallTime): Date | null {
  const d = /^(\d{4})-(\d{2})-(\d{2})$/.exec(isoDay);
  const t = /^(\d{2}):(\d{2})$/.exec(hhmm);
  if (!d || !t) return null;
  const [y, mo, day, h, mi] = [d[1], d[2], d[3], t[1], t[2]].map(Number) as [number, number, number, number, number];
  if (h > 23 || mi > 59 || mo < 1 || mo > 12 || day < 1 || day > new Date(Date.UTC(y, mo, 0)).getUTCDate()) return null;
  const local = Date.UTC(y, mo - 1, day, h, mi);
  // The offsets either side of the day's change (if it has one): a day before, a day after.
  const before = zoneOffsetAt(zone, local - 86_400_000);
  const after = zoneOffsetAt(zone, local + 86_400_000);
  // The earlier candidate first: a repeated time is its first occurrence.
  for (const at of [local - Math.max(before, after), local - Math.min(before, after)]) if (zoneOffsetAt(zone, at) === local - at) return new Date(at);
  return skipped === 'refuse' ? null : new Date(local - before);
}
