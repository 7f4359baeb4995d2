// The one catalogue of care-event types: for each, the payload a partner must send (checked at
// ingest), the group it is filed and counted under, and its wording, which the app's timeline and
// the workspace's prompts and resources both read. A type not listed is kept and shown with its fields.
import { z } from 'zod';
import { parseIsoInstant } from './instant.js';
import type { CareEventRecord } from './records.js';
import { readingText, vitalKind } from './vitalKinds.js';

/** A strict ISO 8601 instant, as every time a partner sends must be. */
export const isoInstant = () =>
  z.string().refine((s) => parseIsoInstant(s) !== null, 'must be an ISO 8601 date-time with seconds and a zone, e.g. 2026-11-22T10:15:00Z');
const text = (max = 200) => z.string().trim().min(1).max(max);
const amount = z.number().finite();

/** The groups events are filtered by in the app and counted by for an assistant; `other` holds every type not listed. */
export const CARE_GROUPS = {
  visits: { label: 'Visits', counted: ['visit update', 'visit updates'] },
  medications: { label: 'Medications', counted: ['medication given', 'medications given'] },
  vitals: { label: 'Vital signs', counted: ['vital-sign reading', 'vital-sign readings'] },
  notes: { label: 'Notes', counted: ['note', 'notes'] },
  mail: { label: 'Inbox mail', counted: ['inbox message', 'inbox messages'] },
  other: { label: 'Other', counted: ['other event', 'other events'] },
} as const satisfies Record<string, { label: string; counted: readonly [string, string] }>;

export type CareGroup = keyof typeof CARE_GROUPS;

/** How times are written: in the zone the person chose (the viewer's in the app, the caller's for an assistant). */
export interface WordsClock {
  /** "8:02 am" */
  time(d: Date): string;
  /** "Mon, Nov 23, 8:02 am" */
  dayTime(d: Date): string;
  /** "2026-11-23" */
  isoDay(d: Date): string;
}

/** An event in words. */
export interface CareWords {
  /** The timeline's sentence, with its time ("Metoprolol 25 mg given by Ana at 8:02 am"). */
  summary: string;
  detail?: string;
  /** Fields shown for a type this version does not know. */
  fields?: [string, string][];
  link?: { href: string; text: string };
  /** One line for a reader who already has the event's date and time ("Metoprolol 25 mg given by Ana"). */
  line: string;
}

interface CareEventType {
  group: Exclude<CareGroup, 'other'>;
  /** How a tally counts this type, when not as its group ("dose missed", "doses missed"). */
  counted?: readonly [string, string];
  /** What a partner must send for this type (extra fields are kept); absent for types carecircle records itself. */
  payload?: z.ZodType<Record<string, unknown>>;
  words(e: CareEventRecord, clock: WordsClock): CareWords;
}

const str = (v: unknown, fallback = ''): string =>
  (typeof v === 'string' ? v.trim() : typeof v === 'number' && Number.isFinite(v) ? String(v) : '') || fallback;
const at = (v: unknown): Date | null => {
  const d = typeof v === 'string' ? new Date(v) : null;
  return d && !Number.isNaN(d.getTime()) ? d : null;
};
const who = (v: unknown) => str(v, 'someone');

/** Sentence case of a snake_case name: "fall_reported" → "Fall reported". */
export const typeLabel = (type: string): string => {
  const words = type.replace(/[_-]+/g, ' ').trim() || 'event';
  return words.charAt(0).toUpperCase() + words.slice(1);
};

/** "3 h 15 min", "45 min". */
export function duration(minutes: number): string {
  const m = Math.round(minutes);
  const h = Math.floor(m / 60);
  return h ? `${h} h${m % 60 ? ` ${m % 60} min` : ''}` : `${m} min`;
}

/** "Metoprolol 25 mg", or "A medication" when the partner named none. */
const doseOf = (p: Record<string, unknown>): string => [str(p.medication_name, 'A medication'), str(p.dose_amount), str(p.dose_unit)].filter(Boolean).join(' ');

/** A dose that was not given: missed (nobody gave it) or refused (the loved one declined it). */
const doseNotGiven =
  (how: 'missed' | 'refused') =>
  ({ payload: p, occurredAt }: CareEventRecord, clock: WordsClock): CareWords => {
    const scheduled = at(p.scheduled_at);
    const by = str(p.reported_by) || str(p.caregiver_id) || str(p.administered_by);
    const reason = str(p.reason);
    const what = `${doseOf(p)} ${how}${scheduled ? ` (scheduled for ${clock.dayTime(scheduled)})` : ''}`;
    const tail = `${by ? `, reported by ${by}` : ''}${reason ? `: ${reason}` : ''}`;
    return { summary: `${what} at ${clock.time(occurredAt)}`, ...(reason ? { detail: reason } : {}), line: `${what}${tail}` };
  };

const scheduledFor = (clock: WordsClock, v: unknown) => {
  const d = at(v);
  return d ? { detail: `Scheduled for ${clock.dayTime(d)}` } : {};
};

export const CARE_EVENT_TYPES = {
  visit_started: {
    group: 'visits',
    payload: z.looseObject({
      caregiver_id: text(),
      scheduled_start: isoInstant(),
      actual_start: isoInstant(),
      location: z.union([z.string().max(2000), z.record(z.string(), z.unknown())]).optional(),
    }),
    words: ({ payload: p, occurredAt }, clock) => {
      const what = `Visit by ${who(p.caregiver_id)} started`;
      return { summary: `${what} at ${clock.time(at(p.actual_start) ?? occurredAt)}`, ...scheduledFor(clock, p.scheduled_start), line: what };
    },
  },
  visit_ended: {
    group: 'visits',
    payload: z.looseObject({
      caregiver_id: text(),
      actual_end: isoInstant(),
      duration_minutes: amount.min(0).max(7 * 24 * 60),
    }),
    words: ({ payload: p, occurredAt }, clock) => {
      const by = `Visit by ${who(p.caregiver_id)}`;
      const ended = at(p.actual_end) ?? occurredAt;
      const minutes = typeof p.duration_minutes === 'number' && p.duration_minutes >= 0 ? p.duration_minutes : null;
      if (minutes === null) return { summary: `${by} ended at ${clock.time(ended)}`, line: `${by} ended` };
      const started = new Date(ended.getTime() - minutes * 60_000);
      const from =
        clock.isoDay(started) === clock.isoDay(ended)
          ? clock.time(started).replace(/ [ap]m$/, (m) => (clock.time(ended).endsWith(m) ? '' : m))
          : clock.dayTime(started);
      return { summary: `${by}, ${from}–${clock.time(ended)}, ${duration(minutes)}`, line: `${by} ended after ${duration(minutes)}` };
    },
  },
  note_added: {
    group: 'notes',
    payload: z.looseObject({
      caregiver_id: text(),
      note_text: z.string().trim().min(1).max(20_000),
      structured_summary: z.union([z.string().max(20_000), z.record(z.string(), z.unknown())]).optional(),
    }),
    words: ({ payload: p, occurredAt }, clock) => {
      const what = `Note from ${who(p.caregiver_id)}`;
      return {
        summary: `${what} at ${clock.time(occurredAt)}`,
        detail: str(p.note_text),
        line: `${what}: ${str(p.note_text).replace(/\s+/g, ' ').slice(0, 500)}`,
      };
    },
  },
  med_administered: {
    group: 'medications',
    payload: z.looseObject({
      medication_name: text(),
      dose_amount: amount.min(0),
      dose_unit: text(50),
      administered_by: text(),
      scheduled_at: isoInstant().optional(),
    }),
    words: ({ payload: p, occurredAt }, clock) => {
      const what = `${doseOf(p)} given by ${who(p.administered_by)}`;
      return { summary: `${what} at ${clock.time(occurredAt)}`, ...scheduledFor(clock, p.scheduled_at), line: what };
    },
  },
  /** A scheduled dose nobody gave. Partners send these beside the v1 types; any payload is kept. */
  med_missed: { group: 'medications', counted: ['dose missed', 'doses missed'], words: doseNotGiven('missed') },
  /** A dose the loved one declined. */
  med_refused: { group: 'medications', counted: ['dose refused', 'doses refused'], words: doseNotGiven('refused') },
  vital_recorded: {
    group: 'vitals',
    payload: z.looseObject({
      vital_type: text(100),
      value: amount,
      unit: text(50),
      recorded_by: text(),
      secondary_value: amount.optional(),
    }),
    words: ({ payload: p, occurredAt }, clock) => {
      const kind = vitalKind(p.vital_type);
      const what = `${kind.label} ${readingText(kind, p.value, p.secondary_value, p.unit)}`;
      return { summary: what, detail: `Recorded by ${who(p.recorded_by)} at ${clock.time(occurredAt)}`, line: `${what}, recorded by ${who(p.recorded_by)}` };
    },
  },
  /** A message to the loved one's inbox address, recorded by the inbox slice. */
  inbox_message: {
    group: 'mail',
    words: ({ payload: p, occurredAt, lovedOneId }, clock) => {
      const from = `Mail from ${str(p.from, 'an unknown sender')}`;
      const subject = str(p.subject, '(no subject)');
      return {
        summary: `${from} at ${clock.time(occurredAt)}: ${subject}`,
        detail: str(p.excerpt).slice(0, 280),
        link: { href: `/inbox/${encodeURIComponent(lovedOneId)}`, text: 'Open the inbox' },
        line: `${from}: ${subject}`,
      };
    },
  },
} as const satisfies Record<string, CareEventType>;

const known = (type: string): CareEventType | undefined =>
  Object.hasOwn(CARE_EVENT_TYPES, type) ? (CARE_EVENT_TYPES as Record<string, CareEventType>)[type] : undefined;

/** The group an event is filed under: its type's, or `other`. */
export const groupOf = (type: string): CareGroup => known(type)?.group ?? 'other';

/** How a tally counts an event of this type, singular and plural: its own words, else its group's. */
export const countedAs = (type: string): readonly [string, string] => {
  const t = known(type);
  return t?.counted ?? CARE_GROUPS[t?.group ?? 'other'].counted;
};

/** Doses that were due and not given (missed or refused): an assistant's summary names each. */
export const isDoseNotGiven = (type: string): boolean => type === 'med_missed' || type === 'med_refused';

/** The event types of each group, for the app's filter. */
export const typesIn = (group: CareGroup): string[] =>
  Object.entries(CARE_EVENT_TYPES as Record<string, CareEventType>).flatMap(([type, t]) => (t.group === group ? [type] : []));

/** A field's value for the generic view: text as sent, anything else as compact JSON. */
const fieldText = (v: unknown, max: number): string => {
  const s = (typeof v === 'string' ? v : JSON.stringify(v)) ?? '';
  return s.length > max ? `${s.slice(0, max)}…` : s;
};

/** Any event in words; a type this version does not know is shown with its fields, never dropped. */
export function careWords(e: CareEventRecord, clock: WordsClock): CareWords & { group: CareGroup } {
  const type = known(e.eventType);
  if (type) return { group: type.group, ...type.words(e, clock) };
  const entries = Object.entries(e.payload);
  const inLine = entries.slice(0, 8).map(([k, v]) => `${typeLabel(k)}: ${fieldText(v, 120)}`);
  return {
    group: 'other',
    summary: `${typeLabel(e.eventType)} at ${clock.time(e.occurredAt)}`,
    fields: entries.slice(0, 12).map(([k, v]) => [typeLabel(k), fieldText(v, 200)]),
    line: `${typeLabel(e.eventType)}${inLine.length ? ` (${inLine.join('; ')})` : ''}`,
  };
}

/** The payload schema of each type partners send. */
export const PARTNER_PAYLOADS = Object.fromEntries(Object.entries(CARE_EVENT_TYPES).flatMap(([type, t]) => ('payload' in t ? [[type, t.payload]] : []))) as {
  [K in keyof typeof CARE_EVENT_TYPES as (typeof CARE_EVENT_TYPES)[K] extends { payload: z.ZodType } ? K : never]: (typeof CARE_EVENT_TYPES)[K] extends {
    payload: infer P;
  }
    ? P
    : never;
};
