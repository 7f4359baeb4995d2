// Every dose in a period with its state: given, refused, not recorded or still due. Doses given
// come from the agency's events; the daily times come from its `scheduled_at` (./schedule.ts); a
// dose the agency reports refused or missed, or a refusal an aide wrote in a note that names the
// medication, fills the time it was due. A loved one with a medication list has today's doses from
// its schedule instead (`listDoseRows`, family/medSchedule.ts).
import { flaggedReasons, type AideNamer } from '../family/careEventTypes.js';
import type { CareEventRecord } from '../family/records.js';
import { scheduledOf, type Medication } from '../family/medications.js';
import { todaysListDoses, type ListDose } from '../family/medSchedule.js';
import { dailySlots, dueTimes, GRACE_MS } from './schedule.js';
import type { Clock } from './time.js';

/** `missed`: a dose of the medication list with nothing recorded after its grace period, or recorded missed. */
export type DoseState = 'given' | 'refused' | 'not recorded' | 'missed' | 'due';

export interface DoseRow {
  medication: string;
  amount: string;
  state: DoseState;
  /** When it was given, refused, or fell due. */
  at: Date;
  /** The time the agency scheduled it for, when known. */
  due?: Date;
  /** Who gave it or wrote down the refusal, in words. */
  by?: string;
  /** The refusal as the aide wrote it. */
  note?: string;
  /** The note the refusal was read from. */
  noteId?: string;
}

/** A refusal is matched to the time it was due on the same day when it was written this close to it. */
const MATCH_MS = 6 * 3_600_000;

const str = (v: unknown) => (typeof v === 'string' || typeof v === 'number' ? String(v).trim() : '');
const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

interface Refusal {
  id: string;
  key: string;
  at: Date;
  by: string;
  note: string;
  /** Refused, or (an agency's `med_missed`) reported as not given. */
  state: 'refused' | 'not recorded';
  used?: boolean;
}

/** Doses an agency reported as refused (`med_refused`) or missed (`med_missed`): each fills the time it was due. */
function reportedNotGiven(events: CareEventRecord[], aide: AideNamer): Refusal[] {
  return events.flatMap((e): Refusal[] => {
    if (e.eventType !== 'med_refused' && e.eventType !== 'med_missed') return [];
    const p = e.payload;
    const due = typeof p.scheduled_at === 'string' ? new Date(p.scheduled_at) : null;
    const refused = e.eventType === 'med_refused';
    const reason = str(p.reason);
    return [
      {
        id: e._id,
        key: (str(p.medication_name) || 'Unnamed medication').toLowerCase(),
        at: due && !Number.isNaN(due.getTime()) ? due : e.occurredAt,
        by: aide(e),
        note: reason || (refused ? 'Refused' : 'Reported as not given'),
        state: refused ? 'refused' : 'not recorded',
      },
    ];
  });
}

/** Notes that say a medication the loved one takes was refused ("Refused her evening Metformin"). */
function refusalsIn(notes: CareEventRecord[], names: Map<string, string>, aide: AideNamer): Refusal[] {
  const out: Refusal[] = [];
  for (const e of notes) {
    const text = str(e.payload.note_text);
    if (!flaggedReasons(text).includes('refusal')) continue;
    for (const key of names.keys())
      if (new RegExp(`\\b${escape(key)}\\b`, 'i').test(text))
        out.push({ id: e._id, key, at: e.occurredAt, by: aide(e), note: text.replace(/\s+/g, ' ').slice(0, 300), state: 'refused' });
  }
  return out;
}

/**
 * The doses of the period from `since` to the end of `now`'s day, newest first: each dose given
 * (`doses` may also hold the agency's `med_refused` and `med_missed` reports); for each daily time,
 * a day without a dose scheduled at it is refused (when a report or a note of that day says so),
 * not recorded (reported missed, or an hour after it fell due) or due (later today).
 */
export function doseRows(doses: CareEventRecord[], notes: CareEventRecord[], clock: Clock, since: Date, now: Date, aide: AideNamer): DoseRow[] {
  const names = new Map<string, string>();
  const amounts = new Map<string, string>();
  const rows: DoseRow[] = [];
  const scheduled: { key: string; scheduled: Date }[] = [];
  for (const e of [...doses].sort((a, b) => a.occurredAt.getTime() - b.occurredAt.getTime())) {
    const p = e.payload;
    if (e.eventType === 'med_refused' || e.eventType === 'med_missed') {
      if (str(p.medication_name)) names.set(str(p.medication_name).toLowerCase(), str(p.medication_name));
      continue;
    }
    const medication = str(p.medication_name) || 'Unnamed medication';
    const key = medication.toLowerCase();
    const amount = [str(p.dose_amount), str(p.dose_unit)].filter(Boolean).join(' ');
    names.set(key, medication);
    amounts.set(key, amount);
    const due = typeof p.scheduled_at === 'string' ? new Date(p.scheduled_at) : null;
    const hasDue = due !== null && !Number.isNaN(due.getTime());
    if (hasDue) scheduled.push({ key, scheduled: due });
    if (e.occurredAt >= since) rows.push({ medication, amount, state: 'given', at: e.occurredAt, ...(hasDue ? { due } : {}), by: aide(e) });
  }
  const refusals = [...reportedNotGiven(doses, aide), ...refusalsIn(notes, names, aide)];
  for (const slot of dailySlots(scheduled, clock)) {
    for (const { day, due } of dueTimes(slot, clock, since, now)) {
      if (slot.days.has(day)) continue;
      const base = { medication: names.get(slot.key)!, amount: amounts.get(slot.key) ?? '', due, at: due };
      const refusal = refusals
        .filter((r) => !r.used && r.key === slot.key && clock.isoDay(r.at) === day && Math.abs(r.at.getTime() - due.getTime()) <= MATCH_MS)
        .sort((a, b) => Math.abs(a.at.getTime() - due.getTime()) - Math.abs(b.at.getTime() - due.getTime()))[0];
      if (refusal) {
        refusal.used = true;
        rows.push({ ...base, state: refusal.state, by: refusal.by, note: refusal.note, noteId: refusal.id });
      } else if (due.getTime() <= now.getTime() - GRACE_MS) rows.push({ ...base, state: 'not recorded' });
      else rows.push({ ...base, state: 'due' });
    }
  }
  // A refusal of a dose with no daily time (or one already matched) still belongs on the list.
  for (const r of refusals)
    if (!r.used && r.at >= since)
      rows.push({ medication: names.get(r.key) ?? r.key, amount: amounts.get(r.key) ?? '', state: r.state, at: r.at, by: r.by, note: r.note, noteId: r.id });
  return rows.sort((a, b) => b.at.getTime() - a.at.getTime() || a.medication.localeCompare(b.medication));
}

/** A row's time on a list by time of day: when it was due, else when it happened. */
export const rowTime = (r: DoseRow): Date => r.due ?? r.at;

/** Today's doses by time, earliest first. */
export function todaysDoses(rows: DoseRow[], clock: Clock, now: Date): DoseRow[] {
  const today = clock.isoDay(now);
  return rows
    .filter((r) => clock.isoDay(rowTime(r)) === today || clock.isoDay(r.at) === today)
    .sort((a, b) => rowTime(a).getTime() - rowTime(b).getTime() || a.medication.localeCompare(b.medication));
}

/** Today's doses of a medication list as rows. */
const asDoseRows = (doses: readonly ListDose[]): DoseRow[] =>
  doses.map((d) => ({
    medication: d.medication,
    amount: d.amount,
    state: d.state,
    at: d.at ?? d.due,
    due: d.due,
    ...(d.by ? { by: d.by } : {}),
    ...(d.note ? { note: d.note } : {}),
  }));

/** Who recorded a dose, in words: the aide as the agency names them, or the family member's own words. */
const recorderOf =
  (aide: AideNamer) =>
  (e: CareEventRecord): string => {
    // A member's own entry names its author ("Sam Lopez, in the app"), as the timeline does.
    if (e.institutionId || e.source === 'family') return aide(e);
    const p = e.payload;
    const name = [p.recorded_by_name, p.author_name, p.by].find((x): x is string => typeof x === 'string' && x.trim() !== '');
    return name?.trim() ?? 'the family';
  };

/**
 * Today's doses from a loved one's medication list, matched to the dose records in `events`, with
 * the doses of `guessed` (today's rows from the agency's own times) of medications not on the list,
 * so a dose the agency gave of something the family has not listed still shows.
 */
export function listDoseRows(
  meds: readonly Medication[],
  events: readonly CareEventRecord[],
  now: Date,
  aide: AideNamer,
  guessed: readonly DoseRow[] = [],
): DoseRow[] {
  const listed = new Set(meds.map((m) => m.current.name.toLowerCase()));
  const rows = asDoseRows(
    todaysListDoses(
      meds.map((m) => scheduledOf(m.current)),
      events,
      now,
      recorderOf(aide),
    ),
  );
  return [...rows, ...guessed.filter((r) => !listed.has(r.medication.toLowerCase()))].sort(
    (a, b) => rowTime(a).getTime() - rowTime(b).getTime() || a.medication.localeCompare(b.medication),
  );
}
