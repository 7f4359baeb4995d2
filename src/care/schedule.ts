// Daily times an agency keeps, inferred from what it sent: a time of day that the scheduled times
// of one medication (or of visits) name on two or more days is taken as a daily slot from its first
// day on. The agency sends no schedule of its own, so this is all the family has to go on.
import type { Clock } from './time.js';

/** A scheduled time is "not recorded" only after this long: agencies often record a little late. */
export const GRACE_MS = 60 * 60_000;

export interface Slot {
  /** What the slot is for (a medication's name in lower case, or "visit"). */
  key: string;
  /** From the start of a day in the viewer's zone. */
  offset: number;
  /** "2026-11-20": the first day the slot was scheduled. */
  first: string;
  /** The days (in the viewer's zone) something was scheduled at this slot. */
  days: Set<string>;
}

/** The daily slots that scheduled times name on two or more days. */
export function dailySlots(items: { key: string; scheduled: Date }[], clock: Clock): Slot[] {
  const slots = new Map<string, Slot>();
  for (const { key, scheduled } of items) {
    const day = clock.isoDay(scheduled);
    const id = `${key}|${clock.time(scheduled)}`;
    const slot = slots.get(id) ?? { key, first: day, offset: scheduled.getTime() - clock.startOf(day)!.getTime(), days: new Set<string>() };
    slot.days.add(day);
    if (day < slot.first) slot.first = day;
    slots.set(id, slot);
  }
  return [...slots.values()].filter((s) => s.days.size >= 2);
}

/** The instants a slot fell due, from `since` (or its first day) to the end of `now`'s day, oldest first, with their day. */
export function dueTimes(slot: Slot, clock: Clock, since: Date, now: Date): { day: string; due: Date }[] {
  const out: { day: string; due: Date }[] = [];
  const last = clock.isoDay(now);
  for (let t = Date.parse(`${slot.first}T00:00:00Z`); ; t += 86_400_000) {
    const day = new Date(t).toISOString().slice(0, 10);
    if (day > last) break;
    const due = new Date(clock.startOf(day)!.getTime() + slot.offset);
    if (due >= since) out.push({ day, due });
  }
  return out;
}
