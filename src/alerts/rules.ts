// The alert rules: what a new care record says that a member may want to hear of (a fall, a
// reading outside the family's range, a late visit, new mail), and what did not happen on time (a
// scheduled dose not given within its grace, a task due today nobody took, an appointment
// tomorrow). Pure: the records come in, candidate alerts go out, each with the key that makes its
// decision happen once.
import { alertingReasons, isInboxMail, isReading, minutesLate } from '../family/alerting.js';
import { dayIn, todaysListDoses, type Scheduled } from '../family/medSchedule.js';
import type { AppointmentRecord, TaskRecord } from '../family/plans.js';
import type { CareEventRecord, LovedOneRecord } from '../family/records.js';
import { readingText, vitalKind } from '../family/vitalKinds.js';
import { wordsIn } from '../workspace/careReader.js';
import type { AlertKind } from './kinds.js';
import { outsideRange, type ReadingRange } from './ranges.js';

/** An alert the rules found; `key` is the same every time the same record meets the same rule. */
export interface Candidate {
  key: string;
  kind: AlertKind;
  lovedOneId: string;
  workspaceId: string;
  /** What happened, short, without the loved one's name: "a dose of Metoprolol was missed". */
  what: string;
  /** The app path that shows it. */
  path: string;
  at: Date;
  /** A missed dose nobody recorded at all (one recorded missed or refused is counted from its record). */
  unrecorded?: true;
}

const REASON_WORDS: Record<string, string> = { fall: 'a fall', hospital: 'a hospital visit', emergency: 'an emergency', injury: 'a wound or injury' };

const pathOf = (e: CareEventRecord) =>
  e.source === 'family' ? `/care/${encodeURIComponent(e.lovedOneId)}/entries/${encodeURIComponent(e._id)}` : `/care/${encodeURIComponent(e.lovedOneId)}`;

/** The alerts one new care record raises. */
export function recordRules(e: CareEventRecord, ranges: readonly ReadingRange[]): Candidate[] {
  const base = { lovedOneId: e.lovedOneId, workspaceId: e.workspaceId, path: pathOf(e), at: e.occurredAt };
  // A correction or a withdrawal is not news of its own.
  if (e.supersedes) return [];
  const out: Candidate[] = [];
  const reasons = alertingReasons(e);
  if (reasons.length)
    out.push({
      ...base,
      key: `flagged_note:${e._id}`,
      kind: 'flagged_note',
      what: `a note mentions ${reasons.map((r) => REASON_WORDS[r] ?? r).join(' and ')}`,
    });
  if (isReading(e)) {
    const range = outsideRange(ranges, e.payload);
    if (range) {
      const kind = vitalKind(e.payload.vital_type);
      out.push({
        ...base,
        key: `out_of_range:${e._id}`,
        kind: 'out_of_range',
        what: `a ${kind.label.toLowerCase()} reading of ${readingText(kind, e.payload.value, e.payload.secondary_value, e.payload.unit)} is outside the range the family set`,
      });
    }
  }
  const late = minutesLate(e);
  if (late !== null) out.push({ ...base, key: `late_visit:${e._id}`, kind: 'late_visit', what: `a visit started ${late} minutes late` });
  if (isInboxMail(e))
    out.push({
      ...base,
      key: `inbox_mail:${e._id}`,
      kind: 'inbox_mail',
      what: 'new mail arrived in the inbox',
      path: `/inbox/${encodeURIComponent(e.lovedOneId)}`,
    });
  return out;
}

/** Doses due yesterday or today (in each medication's zone) with nothing recorded past their grace, or recorded missed. */
export function missedDoses(lovedOne: LovedOneRecord, meds: readonly Scheduled[], events: readonly CareEventRecord[], now: Date): Candidate[] {
  const graceOf = new Map(meds.map((m) => [m.medicationId, (m.graceMinutes ?? 60) * 60_000]));
  const doses = [...todaysListDoses(meds, events, new Date(now.getTime() - 86_400_000), () => ''), ...todaysListDoses(meds, events, now, () => '')];
  const seen = new Set<string>();
  return doses.flatMap((d) => {
    const key = `missed_dose:${d.medicationId}:${d.due.toISOString()}`;
    if (seen.has(key)) return [];
    seen.add(key);
    const missed = d.state === 'missed' || (d.state === 'due' && now.getTime() > d.due.getTime() + graceOf.get(d.medicationId)!);
    if (!missed || d.due > now) return [];
    const words = wordsIn(meds.find((m) => m.medicationId === d.medicationId)?.schedule.timeZone);
    return [
      {
        key,
        kind: 'missed_dose' as const,
        lovedOneId: lovedOne._id,
        workspaceId: lovedOne.workspaceId,
        what: `the ${words.time(d.due)} dose of ${d.medication} was not recorded as given`,
        path: `/care/${encodeURIComponent(lovedOne._id)}/medications`,
        at: d.due,
        ...(d.eventId ? {} : { unrecorded: true as const }),
      },
    ];
  });
}

/** Appointments starting tomorrow in the loved one's family zone (not cancelled). */
export function appointmentsTomorrow(lovedOne: LovedOneRecord, appointments: readonly AppointmentRecord[], zone: string, now: Date): Candidate[] {
  const tomorrow = dayIn(zone, new Date(now.getTime() + 86_400_000));
  const words = wordsIn(zone);
  return appointments
    .filter((a) => a.status !== 'cancelled' && dayIn(zone, a.start) === tomorrow)
    .map((a) => ({
      key: `appointment_tomorrow:${a._id}:${a.start.toISOString()}`,
      kind: 'appointment_tomorrow' as const,
      lovedOneId: lovedOne._id,
      workspaceId: lovedOne.workspaceId,
      what: `an appointment tomorrow at ${words.time(a.start)}: ${a.title}`,
      path: `/care/${encodeURIComponent(lovedOne._id)}/appointments`,
      at: a.start,
    }));
}

/** Tasks due today in their zone that are still open (nobody took them). */
export function unclaimedTasks(lovedOne: LovedOneRecord, tasks: readonly TaskRecord[], now: Date): Candidate[] {
  return tasks
    .filter((t) => t.state === 'open' && dayIn(t.timeZone, t.due) === dayIn(t.timeZone, now))
    .map((t) => ({
      key: `task_unclaimed:${t._id}:${t.round}:${dayIn(t.timeZone, now)}`,
      kind: 'task_unclaimed' as const,
      lovedOneId: lovedOne._id,
      workspaceId: lovedOne.workspaceId,
      what: `a task due today nobody has taken: ${t.title}`,
      path: `/care/${encodeURIComponent(lovedOne._id)}/tasks`,
      at: t.due,
    }));
}
