// What needs the family's attention, first on the loved one's page: notes and updates with a
// reviewed flag word (a fall, a hospital visit...), today's doses refused or not recorded, readings
// outside the family's ranges, and today's visits that did not start. Each rule is a function of
// events already read, so a rule is added without touching the others.
import { careWords, flaggableText, flaggedReasons, type AideNamer } from '../family/careEventTypes.js';
import type { CareEventRecord } from '../family/records.js';
import { readingText, vitalKind } from '../family/vitalKinds.js';
import type { DoseRow } from './doses.js';
import { dailySlots, dueTimes, GRACE_MS } from './schedule.js';
import type { Clock } from './time.js';

export interface AttentionItem {
  /** When it happened, or when it was due. */
  at: Date;
  kind: 'flagged' | 'dose' | 'reading' | 'visit';
  /** What happened, in one sentence without its time. */
  text: string;
  /** Why it is here ("fall", "hospital"), for a flagged item. */
  reasons?: string[];
  detail?: string;
}

/** How far back flagged notes stay at the top of the page. */
export const FLAGGED_WINDOW_MS = 72 * 3_600_000;

/** Notes and updates of unknown types that carry a reviewed flag word; `shown` are notes already
 *  listed another way (a refusal read as the dose it was). */
export function flaggedItems(events: readonly CareEventRecord[], clock: Clock, aide: AideNamer, shown: ReadonlySet<string> = new Set()): AttentionItem[] {
  return events.flatMap((e) => {
    const text = shown.has(e._id) ? null : flaggableText(e);
    const reasons = text ? flaggedReasons(text) : [];
    if (!reasons.length) return [];
    const words = careWords(e, clock, aide);
    const detail = words.detail ?? words.fields?.map(([k, v]) => `${k}: ${v}`).join('; ');
    return [{ at: e.occurredAt, kind: 'flagged' as const, text: words.headline ?? words.line, reasons, ...(detail ? { detail } : {}) }];
  });
}

/** Today's doses refused or not recorded. */
export function doseItems(today: readonly DoseRow[]): AttentionItem[] {
  return today.flatMap((r) => {
    const what = [r.medication, r.amount].filter(Boolean).join(' ');
    if (r.state === 'refused')
      return [{ at: r.due ?? r.at, kind: 'dose' as const, text: `${what} refused`, detail: `${r.by ?? 'The aide'} wrote: ${r.note ?? ''}` }];
    if (r.state === 'not recorded')
      return [
        {
          at: r.at,
          kind: 'dose' as const,
          text: `${what} not recorded`,
          detail: 'No dose was recorded for this time the agency scheduled on other days: check with them.',
        },
      ];
    if (r.state === 'missed')
      return [{ at: r.due ?? r.at, kind: 'dose' as const, text: `${what} missed`, detail: 'A dose on the medication list with no dose given recorded.' }];
    return [];
  });
}

/**
 * A range the family sets for one kind of reading (say glucose 70–180 mg/dL). No family has ranges
 * yet: the app draws none of its own (there is no one normal for everybody), and this rule stays
 * empty until a family sets one.
 */
export interface FamilyRange {
  /** A vital kind's key ("glucose"). */
  kind: string;
  /** The unit as the agency writes it; a reading in another unit is not compared. */
  unit: string;
  low?: number;
  high?: number;
}

/** Readings outside the family's ranges, newest first. */
export function readingItems(events: readonly CareEventRecord[], ranges: readonly FamilyRange[], aide: AideNamer): AttentionItem[] {
  if (!ranges.length) return [];
  return events.flatMap((e) => {
    if (e.eventType !== 'vital_recorded' || typeof e.payload.value !== 'number') return [];
    const kind = vitalKind(e.payload.vital_type);
    const value = e.payload.value;
    const range = ranges.find((r) => r.kind === kind.key && r.unit === e.payload.unit);
    if (!range || ((range.low === undefined || value >= range.low) && (range.high === undefined || value <= range.high))) return [];
    const side = range.high !== undefined && value > range.high ? `above your ${range.high}` : `below your ${range.low}`;
    return [
      {
        at: e.occurredAt,
        kind: 'reading' as const,
        text: `${kind.label} ${readingText(kind, value, e.payload.secondary_value, e.payload.unit)}, ${side}`,
        detail: `Recorded by ${aide(e)}`,
      },
    ];
  });
}

/** Today's daily visit times (from the visits' `scheduled_start` on other days) with no visit started an hour after. */
export function visitItems(visits: readonly CareEventRecord[], clock: Clock, now: Date): AttentionItem[] {
  const started = visits.flatMap((e) => {
    const s = e.eventType === 'visit_started' && typeof e.payload.scheduled_start === 'string' ? new Date(e.payload.scheduled_start) : null;
    return s && !Number.isNaN(s.getTime()) ? [{ key: 'visit', scheduled: s }] : [];
  });
  const today = clock.isoDay(now);
  const startOfToday = clock.startOf(today)!;
  return dailySlots(started, clock).flatMap((slot) =>
    dueTimes(slot, clock, startOfToday, now).flatMap(({ day, due }) =>
      day === today && !slot.days.has(day) && due.getTime() <= now.getTime() - GRACE_MS
        ? [
            {
              at: due,
              kind: 'visit' as const,
              text: `No visit started for ${clock.time(due)}`,
              detail: 'The agency scheduled a visit at this time on other days: check with them.',
            },
          ]
        : [],
    ),
  );
}
