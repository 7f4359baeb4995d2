// A medication list's schedule as instants: the times of day it names, in the loved one's zone, on
// the days it names, between its start and stop dates; and the state of each of today's doses,
// matched from what the agency and the family recorded.
//
// Zone math is Intl's, not a recurrence library's: a schedule here is "these wall-clock times on
// these weekdays", which needs no RRULE (no intervals, counts or monthly rules), and rrule's own
// time-zone support returns wall times dressed as UTC dates that still need this same conversion.
// The zone database is the runtime's, so daylight-saving changes follow it.
import { wallClockAt, wallTimeToInstant } from './instant.js';
import type { CareEventRecord } from './records.js';

export const WEEKDAYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const;
export type Weekday = (typeof WEEKDAYS)[number];

/** A dose is missed when nothing is recorded this long after it fell due (unless the medication sets its own). */
export const DEFAULT_GRACE_MINUTES = 60;

export interface MedicationSchedule {
  /** Taken only when needed: no dose falls due. */
  asNeeded: boolean;
  /** "08:00", "20:30": wall-clock times in `timeZone`. */
  times: string[];
  /** The days it is taken; empty: every day. */
  days: Weekday[];
  /** The loved one's IANA zone, in which the times are meant. */
  timeZone: string;
}

/** What the schedule math needs of a medication. */
export interface Scheduled {
  medicationId: string;
  name: string;
  /** "500 mg, 1 tablet" */
  amount: string;
  schedule: MedicationSchedule;
  /** "2026-11-01": first and last day it is taken, in its zone. */
  startDate?: string;
  stopDate?: string;
  /** Stopped: no dose falls due from this instant. */
  stoppedAt?: Date;
  graceMinutes?: number;
}

/** "2026-11-01" in `zone` at instant d. */
export function dayIn(zone: string, d: Date): string {
  const p = wallClockAt(zone, d.getTime());
  return `${p.year}-${p.month!.padStart(2, '0')}-${p.day!.padStart(2, '0')}`;
}

/** The weekday of a calendar day ("2026-03-08" is a Sunday). */
export const weekdayOf = (isoDay: string): Weekday => WEEKDAYS[(new Date(`${isoDay}T00:00:00Z`).getUTCDay() + 6) % 7]!;

/**
 * The instant a wall-clock time falls on a calendar day in a zone. A dose must fall due that day
 * whatever the clocks do, so a time the spring change skips (2:30 am on Mar 8, 2026 in New York) is
 * taken an hour later, when the clocks read it after the jump; a time the autumn change repeats
 * (1:30 am on Nov 1) is the first of the two, as calendars do.
 */
export function wallInstant(zone: string, isoDay: string, hhmm: string): Date {
  return wallTimeToInstant(zone, isoDay, hhmm, 'after')!;
}

/** The instants a medication falls due on a calendar day of its zone, earliest first. */
export function dosesOn(med: Scheduled, isoDay: string): Date[] {
  const s = med.schedule;
  if (s.asNeeded) return [];
  if (med.startDate && isoDay < med.startDate) return [];
  if (med.stopDate && isoDay > med.stopDate) return [];
  if (s.days.length && !s.days.includes(weekdayOf(isoDay))) return [];
  return [...new Set(s.times)]
    .sort()
    .map((t) => wallInstant(s.timeZone, isoDay, t))
    .filter((t) => !med.stoppedAt || t < med.stoppedAt);
}

export type ListDoseState = 'given' | 'refused' | 'missed' | 'due';

/** One of today's scheduled doses with its state. */
export interface ListDose {
  medicationId: string;
  medication: string;
  amount: string;
  due: Date;
  state: ListDoseState;
  /** When it was recorded given, refused or missed. */
  at?: Date;
  /** Who recorded it, in words. */
  by?: string;
  note?: string;
  eventId?: string;
}

const str = (v: unknown) => (typeof v === 'string' || typeof v === 'number' ? String(v).trim() : '');

/** A record without `scheduled_at` is matched to the nearest dose of that name this close to when it happened. */
const LOOSE_MATCH_MS = 3 * 3_600_000;

const STATE_OF: Record<string, ListDoseState> = { med_administered: 'given', med_refused: 'refused', med_missed: 'missed' };

/**
 * Today's doses of the listed medications (today in each medication's zone), earliest first, each
 * given, refused or missed as an agency or the family recorded it: a record names the medication
 * (`medication_name`, in any case) and the time it was due (`scheduled_at`); one without that time
 * is matched to the nearest unmatched dose of that name within three hours. A dose with no record
 * is missed once its grace period has passed, else due.
 */
export function todaysListDoses(meds: readonly Scheduled[], events: readonly CareEventRecord[], now: Date, who: (e: CareEventRecord) => string): ListDose[] {
  const doses: ListDose[] = meds.flatMap((m) =>
    dosesOn(m, dayIn(m.schedule.timeZone, now)).map((due): ListDose => ({
      medicationId: m.medicationId,
      medication: m.name,
      amount: m.amount,
      due,
      state: 'due',
    })),
  );
  const graceOf = new Map(meds.map((m) => [m.medicationId, (m.graceMinutes ?? DEFAULT_GRACE_MINUTES) * 60_000]));
  const records = events
    .filter((e) => STATE_OF[e.eventType] && str(e.payload.medication_name))
    .map((e) => {
      const due = typeof e.payload.scheduled_at === 'string' ? Date.parse(e.payload.scheduled_at) : NaN;
      return { e, key: str(e.payload.medication_name).toLowerCase(), due: Number.isNaN(due) ? null : due };
    })
    // The latest word on a dose wins: a dose recorded missed and then given was given.
    .sort((a, b) => a.e.occurredAt.getTime() - b.e.occurredAt.getTime());
  const matched = new Map<ListDose, CareEventRecord>();
  for (const r of records) {
    const same = doses.filter((d) => d.medication.toLowerCase() === r.key);
    const dose =
      r.due !== null
        ? same.find((d) => Math.abs(d.due.getTime() - r.due!) < 60_000)
        : same
            .filter((d) => !matched.has(d) && Math.abs(d.due.getTime() - r.e.occurredAt.getTime()) <= LOOSE_MATCH_MS)
            .sort((a, b) => Math.abs(a.due.getTime() - r.e.occurredAt.getTime()) - Math.abs(b.due.getTime() - r.e.occurredAt.getTime()))[0];
    if (dose) matched.set(dose, r.e);
  }
  for (const d of doses) {
    const e = matched.get(d);
    if (e) {
      d.state = STATE_OF[e.eventType]!;
      d.at = e.occurredAt;
      d.by = who(e);
      d.eventId = e._id;
      const reason = str(e.payload.reason) || str(e.payload.note_text) || str(e.payload.note);
      if (reason) d.note = reason.slice(0, 300);
    } else if (now.getTime() > d.due.getTime() + graceOf.get(d.medicationId)!) d.state = 'missed';
  }
  return doses.sort((a, b) => a.due.getTime() - b.due.getTime() || a.medication.localeCompare(b.medication));
}
