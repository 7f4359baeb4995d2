// What in a care record may need the family's attention, read from the record alone: the reviewed
// words of a note, a visit that started late, a reading, new mail. The alert rules (src/alerts/rules.ts)
// build their alerts on these; the ingest sends a partner event for which `mayRaiseAlert` holds on
// its urgent lane, before anyone knows the family's settings.
import { ALERTING_REASONS, flaggableText, flaggedReasons } from './careEventTypes.js';
import type { CareEventRecord } from './careEvents.js';
import { DAY_NOTED } from './entries.js';

/** What of a record the checks read: enough to judge an event before it is stored. */
type Judged = Pick<CareEventRecord, 'eventType' | 'payload' | 'supersedes'>;

/** A visit that starts this long after its scheduled start is late. */
export const LATE_VISIT_MS = 30 * 60_000;

/** The text of a record the reviewed words are read in: notes, how the day went, unknown types. */
function textOf(e: Judged): string | null {
  if (e.eventType === DAY_NOTED) return typeof e.payload.text === 'string' ? e.payload.text : null;
  return flaggableText(e);
}

/** The alerting reasons of the reviewed words in a record's text ("fall", "hospital"…), in list order. */
export function alertingReasons(e: Judged): string[] {
  const text = textOf(e);
  return text ? flaggedReasons(text).filter((r) => ALERTING_REASONS.includes(r)) : [];
}

/** How many minutes late a visit started, or null when it was on time or is not a visit's start. */
export function minutesLate(e: Judged): number | null {
  if (e.eventType !== 'visit_started') return null;
  const scheduled = Date.parse(String(e.payload.scheduled_start));
  const actual = Date.parse(String(e.payload.actual_start));
  return Number.isFinite(scheduled) && Number.isFinite(actual) && actual - scheduled >= LATE_VISIT_MS ? Math.round((actual - scheduled) / 60_000) : null;
}

/** A reading: outside a range the family set, it raises an alert. */
export const isReading = (e: Pick<CareEventRecord, 'eventType'>): boolean => e.eventType === 'vital_recorded';

/** New mail in the family inbox. */
export const isInboxMail = (e: Pick<CareEventRecord, 'eventType'>): boolean => e.eventType === 'inbox_message';

/**
 * Whether a new record could raise an alert for some family, whatever its settings: what the alert
 * rules act on, a correction or a withdrawal aside.
 */
export function mayRaiseAlert(e: Judged): boolean {
  if (e.supersedes) return false;
  return isReading(e) || isInboxMail(e) || minutesLate(e) !== null || alertingReasons(e).length > 0;
}
