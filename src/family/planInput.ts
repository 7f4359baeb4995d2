// What an appointment or a task may say, checked the same way for the app's forms and the MCP tools:
// each fault names its field, and a time outside sensible bounds names the bound.
import { knownZone } from './changes.js';
import { wallTimeToInstant } from './instant.js';
import type { AppointmentFields, TaskFields } from './plans.js';

const DAY_MS = 86_400_000;
/** An appointment may be recorded up to a month after it happened, and up to two years ahead. */
export const APPOINTMENT_PAST_DAYS = 30;
export const APPOINTMENT_FUTURE_DAYS = 2 * 365;
/** An appointment lasts at most a day. */
export const APPOINTMENT_MAX_HOURS = 24;
/** A task may be due from yesterday to a year ahead. */
export const TASK_PAST_DAYS = 1;
export const TASK_FUTURE_DAYS = 365;

export const TEXT_LIMITS = { title: 120, withWhom: 120, place: 200, notes: 2000 } as const;

/** A fault in one field: `field` is the form's and the tool's name for it. */
export interface FieldFault {
  field: string;
  message: string;
}

export type Checked<T> = { ok: true; value: T } | { ok: false; faults: FieldFault[] };

/** The instant a wall-clock time in a zone names; null when the zone skips it (clocks going
 *  forward): a person typed it and can pick another, where moving it silently would put the
 *  appointment at a time nobody chose. A repeated time is the first of the two. */
export function wallToInstant(zone: string, day: string, time: string): Date | null {
  return wallTimeToInstant(zone, day, time, 'refuse');
}

/** "YYYY-MM-DD" and "HH:MM" of an instant in a zone, for a form's inputs. */
export function instantToWall(zone: string, at: Date): { day: string; time: string } {
  const day = new Intl.DateTimeFormat('en-CA', { timeZone: zone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(at);
  const time = new Intl.DateTimeFormat('en-GB', { timeZone: zone, hourCycle: 'h23', hour: '2-digit', minute: '2-digit' }).format(at);
  return { day, time };
}

const str = (v: unknown): string => (typeof v === 'string' ? v.trim() : '');

function text(faults: FieldFault[], raw: Record<string, unknown>, field: keyof typeof TEXT_LIMITS, label: string, required: boolean): string | undefined {
  const value = str(raw[field]);
  if (!value) {
    if (required) faults.push({ field, message: `Please enter ${label}.` });
    return undefined;
  }
  if (value.length > TEXT_LIMITS[field])
    faults.push({ field, message: `${label[0]!.toUpperCase()}${label.slice(1)} can be at most ${TEXT_LIMITS[field]} characters.` });
  return value;
}

function zoneOf(faults: FieldFault[], raw: Record<string, unknown>): string {
  const zone = knownZone(str(raw.timeZone));
  if (!zone) faults.push({ field: 'timeZone', message: 'Please give the time zone as a place name such as America/New_York.' });
  return zone ?? 'UTC';
}

const dayWords = (ms: number, zone: string) =>
  new Intl.DateTimeFormat('en-US', { timeZone: zone, month: 'short', day: 'numeric', year: 'numeric' }).format(new Date(ms));

/** An instant within [now - past days, now + future days], or a fault naming the bound. */
function bounded(faults: FieldFault[], field: string, at: Date, now: number, past: number, future: number, zone: string, what: string): void {
  const earliest = now - past * DAY_MS;
  const latest = now + future * DAY_MS;
  if (at.getTime() < earliest)
    faults.push({ field, message: `${what} can be at most ${past} day${past === 1 ? '' : 's'} ago (not before ${dayWords(earliest, zone)}).` });
  else if (at.getTime() > latest)
    faults.push({
      field,
      message: `${what} can be at most ${future >= 365 ? `${future / 365} year${future === 365 ? '' : 's'}` : `${future} days`} ahead (not after ${dayWords(latest, zone)}).`,
    });
}

/** A wall-clock day and time from a form, in `zone`. */
function wallTime(faults: FieldFault[], raw: Record<string, unknown>, dayField: string, timeField: string, zone: string, label: string): Date | null {
  const day = str(raw[dayField]);
  const time = str(raw[timeField]);
  if (!/^\d{4}-\d{2}-\d{2}$/.test(day)) {
    faults.push({ field: dayField, message: `Please give the ${label} day as a date (YYYY-MM-DD).` });
    return null;
  }
  if (!/^([01]\d|2[0-3]):[0-5]\d$/.test(time)) {
    faults.push({ field: timeField, message: `Please give the ${label} time as hours and minutes (HH:MM).` });
    return null;
  }
  const at = wallToInstant(zone, day, time);
  if (!at) faults.push({ field: timeField, message: `${time} does not exist on ${day} in ${zone} (the clocks change then); pick another time.` });
  return at;
}

export interface AppointmentForm {
  title: string;
  withWhom: string;
  place: string;
  day: string;
  startTime: string;
  endTime: string;
  timeZone: string;
  takenBy: string;
  notes: string;
}

/** An appointment from the app's form (a day, start and end times in a zone). */
export function appointmentFromForm(raw: Record<string, unknown>, now: number, members: readonly string[]): Checked<AppointmentFields> {
  const faults: FieldFault[] = [];
  const title = text(faults, raw, 'title', 'what the appointment is', true);
  const withWhom = text(faults, raw, 'withWhom', 'who it is with', false);
  const place = text(faults, raw, 'place', 'where it is', false);
  const notes = text(faults, raw, 'notes', 'the notes', false);
  const timeZone = zoneOf(faults, raw);
  const start = wallTime(faults, raw, 'day', 'startTime', timeZone, 'start');
  const end = start ? wallTime(faults, raw, 'day', 'endTime', timeZone, 'end') : null;
  const takenBy = str(raw.takenBy) || undefined;
  return finishAppointment(faults, { title, withWhom, place, notes, timeZone, start, end, takenBy }, now, members, { start: 'startTime', end: 'endTime' });
}

/** An appointment from a tool's arguments (ISO 8601 instants). */
export function appointmentFromTool(
  raw: {
    title: string;
    withWhom?: string | undefined;
    place?: string | undefined;
    start: string;
    end?: string | undefined;
    timeZone: string;
    takenBy?: string | undefined;
    notes?: string | undefined;
  },
  now: number,
  members: readonly string[],
): Checked<AppointmentFields> {
  const faults: FieldFault[] = [];
  const title = text(faults, raw, 'title', 'what the appointment is', true);
  const withWhom = text(faults, raw, 'withWhom', 'who it is with', false);
  const place = text(faults, raw, 'place', 'where it is', false);
  const notes = text(faults, raw, 'notes', 'the notes', false);
  const timeZone = zoneOf(faults, raw);
  const start = new Date(raw.start);
  const end = raw.end ? new Date(raw.end) : new Date(start.getTime() + 60 * 60_000);
  return finishAppointment(faults, { title, withWhom, place, notes, timeZone, start, end, takenBy: raw.takenBy }, now, members, { start: 'start', end: 'end' });
}

function finishAppointment(
  faults: FieldFault[],
  v: {
    title?: string | undefined;
    withWhom?: string | undefined;
    place?: string | undefined;
    notes?: string | undefined;
    timeZone: string;
    start: Date | null;
    end: Date | null;
    takenBy?: string | undefined;
  },
  now: number,
  members: readonly string[],
  names: { start: string; end: string },
): Checked<AppointmentFields> {
  if (v.start) bounded(faults, names.start, v.start, now, APPOINTMENT_PAST_DAYS, APPOINTMENT_FUTURE_DAYS, v.timeZone, 'The start');
  if (v.start && v.end) {
    if (v.end.getTime() <= v.start.getTime()) faults.push({ field: names.end, message: 'The end must be after the start.' });
    else if (v.end.getTime() - v.start.getTime() > APPOINTMENT_MAX_HOURS * 3_600_000)
      faults.push({ field: names.end, message: `An appointment can last at most ${APPOINTMENT_MAX_HOURS} hours.` });
  }
  if (v.takenBy && !members.includes(v.takenBy)) faults.push({ field: 'takenBy', message: 'The person taking them must be someone in the family circle.' });
  if (faults.length || !v.title || !v.start || !v.end) return { ok: false, faults };
  return {
    ok: true,
    value: {
      title: v.title,
      start: v.start,
      end: v.end,
      timeZone: v.timeZone,
      ...(v.withWhom ? { withWhom: v.withWhom } : {}),
      ...(v.place ? { place: v.place } : {}),
      ...(v.takenBy ? { takenBy: v.takenBy } : {}),
      ...(v.notes ? { notes: v.notes } : {}),
    },
  };
}

/** A task from the app's form: what, and when it is due (a day and time in a zone). */
export function taskFromForm(raw: Record<string, unknown>, now: number): Checked<TaskFields> {
  const faults: FieldFault[] = [];
  const title = text(faults, raw, 'title', 'what needs doing', true);
  const notes = text(faults, raw, 'notes', 'the notes', false);
  const timeZone = zoneOf(faults, raw);
  const due = wallTime(faults, raw, 'dueDay', 'dueTime', timeZone, 'due');
  return finishTask(faults, { title, notes, timeZone, due }, now, 'dueTime');
}

/** A task from a tool's arguments (an ISO 8601 due instant). */
export function taskFromTool(raw: { title: string; due: string; timeZone: string; notes?: string | undefined }, now: number): Checked<TaskFields> {
  const faults: FieldFault[] = [];
  const title = text(faults, raw, 'title', 'what needs doing', true);
  const notes = text(faults, raw, 'notes', 'the notes', false);
  const timeZone = zoneOf(faults, raw);
  return finishTask(faults, { title, notes, timeZone, due: new Date(raw.due) }, now, 'due');
}

function finishTask(
  faults: FieldFault[],
  v: { title?: string | undefined; notes?: string | undefined; timeZone: string; due: Date | null },
  now: number,
  dueField: string,
): Checked<TaskFields> {
  if (v.due) bounded(faults, dueField, v.due, now, TASK_PAST_DAYS, TASK_FUTURE_DAYS, v.timeZone, 'The due time');
  if (faults.length || !v.title || !v.due) return { ok: false, faults };
  return { ok: true, value: { title: v.title, due: v.due, timeZone: v.timeZone, ...(v.notes ? { notes: v.notes } : {}) } };
}
