// The one catalogue of care-event types: for each, the payload a partner must send (checked at
// ingest), the group it is filed and counted under, and its wording, which the app's timeline and
// the workspace's prompts and resources both read, and the reviewed words that flag a note for the
// family's attention. A type not listed is kept and shown with its fields.
import { z } from 'zod';
import { parseIsoInstant } from './instant.js';
import type { CareEventRecord } from './records.js';
import { readingText, vitalKind } from './vitalKinds.js';

/** A strict ISO 8601 instant, as every time a partner sends must be. */
export const isoInstant = () =>
  z.string().refine((s) => parseIsoInstant(s) !== null, 'must be an ISO 8601 date-time with seconds and a zone, e.g. 2026-11-22T10:15:00Z');
/** Text with something in it: a pattern rather than a trim, so the JSON Schema in the served OpenAPI
 *  document refuses exactly what ingest refuses (the text is stored as sent either way). */
const text = (max = 200) => z.string().max(max).regex(/\S/, 'must not be blank');
const amount = z.number().finite();

/** The groups events are filtered by in the app and counted by for an assistant; `other` holds every type not listed. */
export const CARE_GROUPS = {
  visits: { label: 'Visits', counted: ['visit update', 'visit updates'] },
  medications: { label: 'Medications', counted: ['medication given', 'medications given'] },
  vitals: { label: 'Vital signs', counted: ['vital-sign reading', 'vital-sign readings'] },
  notes: { label: 'Notes', counted: ['note', 'notes'] },
  mail: { label: 'Inbox mail', counted: ['inbox message', 'inbox messages'] },
  results: { label: 'Test results', counted: ['test result', 'test results'] },
  plans: { label: 'Appointments and tasks', counted: ['appointment or task', 'appointments and tasks'] },
  record: { label: 'Health record', counted: ['health-record entry', 'health-record entries'] },
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
  /** The line without the detail it quotes, for a page that shows the detail below it ("Note from Ana"). */
  headline?: string;
}

/** Who an aide is in words: the app's "an aide from Evergreen Home Care" when no name was sent. */
export type AideNamer = (e: CareEventRecord) => string;

interface CareEventType {
  group: Exclude<CareGroup, 'other'>;
  /** How a tally counts this type, when not as its group ("dose missed", "doses missed"). */
  counted?: readonly [string, string];
  /** What a partner must send for this type (extra fields are kept); absent for types carecircle records itself. */
  payload?: z.ZodType<Record<string, unknown>>;
  /** The payload field naming the aide by the partner's internal id, for an event an aide records. */
  aideId?: string;
  /** `by` is the aide in words, for the types that have one. */
  words(e: CareEventRecord, clock: WordsClock, by: string): CareWords;
}

const str = (v: unknown, fallback = ''): string =>
  (typeof v === 'string' ? v.trim() : typeof v === 'number' && Number.isFinite(v) ? String(v) : '') || fallback;
const at = (v: unknown): Date | null => {
  const d = typeof v === 'string' ? new Date(v) : null;
  return d && !Number.isNaN(d.getTime()) ? d : null;
};

/** The optional display name a partner may send beside its internal caregiver id: what the family
 *  reads ("Ana Souza"), where the id alone would show "an aide from <agency>". */
export const caregiverName = text().optional();

/** The aide's display name as the partner sent it, if it did. */
export const aideName = (e: CareEventRecord): string | null => str(e.payload.caregiver_name) || null;

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

/** A dose that was not given: missed (nobody gave it) or refused (the loved one declined it). The
 *  reporter is named (in words, never by id) only when the partner named someone. */
const doseNotGiven =
  (how: 'missed' | 'refused') =>
  (e: CareEventRecord, clock: WordsClock, by: string): CareWords => {
    const { payload: p, occurredAt } = e;
    const scheduled = at(p.scheduled_at);
    const named = e.source === 'family' || aideName(e) || str(p.reported_by) || str(p.caregiver_id) || str(p.administered_by);
    const reason = str(p.reason);
    const what = `${doseOf(p)} ${how}${scheduled ? ` (scheduled for ${clock.dayTime(scheduled)})` : ''}`;
    const tail = `${named ? `, reported by ${by}` : ''}${reason ? `: ${reason}` : ''}`;
    return { summary: `${what} at ${clock.time(occurredAt)}`, ...(reason ? { detail: reason } : {}), line: `${what}${tail}` };
  };

/** "Scheduled for 8:00 am", with the day when it is not the day the event happened. */
const scheduledFor = (clock: WordsClock, v: unknown, happened: Date) => {
  const d = at(v);
  return d ? { detail: `Scheduled for ${clock.isoDay(d) === clock.isoDay(happened) ? clock.time(d) : clock.dayTime(d)}` } : {};
};

const MOOD_WORDS: Record<string, string> = { good: 'a good day', okay: 'an okay day', difficult: 'a difficult day' };
const WITHDRAWN_WHAT: Record<string, string> = {
  note_added: 'A note',
  day_noted: 'A note on the day',
  med_administered: 'A dose given',
  med_missed: 'A missed dose',
  med_refused: 'A refused dose',
  vital_recorded: 'A reading',
};

/** Who wrote a family entry, in words: "Ana, in the app", "Ana's assistant, Claude". */
export function authorOf(e: CareEventRecord): string {
  const a = e.author;
  if (!a) return 'a family member';
  if (a.former) return 'a former member';
  return a.via === 'app' ? `${a.name}, in the app` : `${a.name}'s assistant, ${a.client ?? 'an assistant'}`;
}

/** A portal record's words name where it came from ("from Northside Health's portal"). */
const portalWords = (e: CareEventRecord, what: string): CareWords => {
  const from = `from ${str(e.payload.portal_name, 'a health system')}'s portal`;
  return { summary: `${what}, ${from}`, line: `${what}, ${from}`, headline: what };
};

export const CARE_EVENT_TYPES = {
  visit_started: {
    group: 'visits',
    payload: z.looseObject({
      caregiver_id: text(),
      caregiver_name: caregiverName,
      scheduled_start: isoInstant(),
      actual_start: isoInstant(),
      location: z.union([z.string().max(2000), z.record(z.string(), z.unknown())]).optional(),
    }),
    aideId: 'caregiver_id',
    words: ({ payload: p, occurredAt }, clock, by) => {
      const what = `Visit by ${by} started`;
      return { summary: `${what} at ${clock.time(at(p.actual_start) ?? occurredAt)}`, ...scheduledFor(clock, p.scheduled_start, occurredAt), line: what };
    },
  },
  visit_ended: {
    group: 'visits',
    payload: z.looseObject({
      caregiver_id: text(),
      caregiver_name: caregiverName,
      actual_end: isoInstant(),
      duration_minutes: amount.min(0).max(7 * 24 * 60),
    }),
    aideId: 'caregiver_id',
    words: ({ payload: p, occurredAt }, clock, aide) => {
      const by = `Visit by ${aide}`;
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
      caregiver_name: caregiverName,
      note_text: text(20_000),
      structured_summary: z.union([z.string().max(20_000), z.record(z.string(), z.unknown())]).optional(),
    }),
    aideId: 'caregiver_id',
    words: ({ payload: p, occurredAt }, clock, by) => {
      const what = `Note from ${by}`;
      return {
        summary: `${what} at ${clock.time(occurredAt)}`,
        detail: str(p.note_text),
        line: `${what}: ${str(p.note_text).replace(/\s+/g, ' ').slice(0, 500)}`,
        headline: what,
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
      caregiver_name: caregiverName,
      scheduled_at: isoInstant().optional(),
    }),
    aideId: 'administered_by',
    words: ({ payload: p, occurredAt }, clock, by) => {
      const what = `${doseOf(p)} given by ${by}`;
      return { summary: `${what} at ${clock.time(occurredAt)}`, ...scheduledFor(clock, p.scheduled_at, occurredAt), line: what };
    },
  },
  /** A scheduled dose nobody gave. Partners send these beside the v1 types; any payload is kept. */
  med_missed: { group: 'medications', counted: ['dose missed', 'doses missed'], aideId: 'reported_by', words: doseNotGiven('missed') },
  /** A dose the loved one declined. */
  med_refused: { group: 'medications', counted: ['dose refused', 'doses refused'], aideId: 'reported_by', words: doseNotGiven('refused') },
  vital_recorded: {
    group: 'vitals',
    payload: z.looseObject({
      vital_type: text(100),
      value: amount,
      unit: text(50),
      recorded_by: text(),
      caregiver_name: caregiverName,
      secondary_value: amount.optional(),
    }),
    aideId: 'recorded_by',
    words: ({ payload: p, occurredAt }, clock, by) => {
      const kind = vitalKind(p.vital_type);
      const what = `${kind.label} ${readingText(kind, p.value, p.secondary_value, p.unit)}`;
      return { summary: what, detail: `Recorded by ${by} at ${clock.time(occurredAt)}`, line: `${what}, recorded by ${by}`, headline: what };
    },
  },
  /** How the day went, as a family member saw it (src/family/entries.ts), with an optional mood. */
  day_noted: {
    group: 'notes',
    counted: ['note on the day', 'notes on the day'],
    words: ({ payload: p, occurredAt }, clock, by) => {
      const mood = MOOD_WORDS[str(p.mood)];
      const what = `How the day went, from ${by}${mood ? `: ${mood}` : ''}`;
      return {
        summary: `${what} at ${clock.time(occurredAt)}`,
        detail: str(p.text),
        line: `${what}: ${str(p.text).replace(/\s+/g, ' ').slice(0, 500)}`,
        headline: what,
      };
    },
  },
  /** A family entry withdrawn by a member, with their reason: it replaces the entry in listings,
   *  and the entry stays readable in its history. */
  entry_withdrawn: {
    group: 'notes',
    counted: ['entry withdrawn', 'entries withdrawn'],
    words: ({ payload: p, occurredAt }, clock, by) => {
      const what = `${WITHDRAWN_WHAT[str(p.withdrawn_type)] ?? 'An entry'} withdrawn by ${by}`;
      return { summary: `${what} (entry of ${clock.time(occurredAt)})`, detail: `Reason: ${str(p.reason)}`, line: `${what}: ${str(p.reason)}`, headline: what };
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
  /** An appointment the family keeps (src/family/plans.ts), filed at its start time; each change
   *  supersedes the version before it, a cancellation too, so the timeline shows it once, as it now is. */
  appointment: {
    group: 'plans',
    counted: ['appointment', 'appointments'],
    words: (e, clock, by) => {
      const p = e.payload;
      const what = [str(p.title, 'An appointment'), str(p.with_whom) && `with ${str(p.with_whom)}`, str(p.place) && `at ${str(p.place)}`]
        .filter(Boolean)
        .join(' ');
      const taking = str(p.taken_by_name) ? `, ${str(p.taken_by_name)} taking ${str(p.loved_one_name, 'them')}` : '';
      const cancelled = p.status === 'cancelled';
      const line = `${what}${taking}${cancelled ? ' (cancelled)' : ''}`;
      const version = e.provenance && 'plan' in e.provenance ? e.provenance.version : 0;
      const reason = str(p.cancel_reason);
      return {
        summary: `${line} at ${clock.time(e.occurredAt)}`,
        detail: cancelled ? `Cancelled by ${by}${reason ? `: ${reason}` : ''}` : `${version ? 'Changed' : 'Added'} by ${by}`,
        link: { href: `/care/${encodeURIComponent(e.lovedOneId)}/appointments`, text: 'All appointments' },
        line,
      };
    },
  },
  /** A shared task a member finished, filed when it was marked done. */
  task_done: {
    group: 'plans',
    counted: ['task done', 'tasks done'],
    words: (e, clock) => {
      const who = e.author && !e.author.former ? e.author.name : 'A former member';
      const line = `${who} did: ${str(e.payload.title, 'a task')}`;
      return { summary: `${line} at ${clock.time(e.occurredAt)}`, link: { href: `/care/${encodeURIComponent(e.lovedOneId)}/tasks`, text: 'All tasks' }, line };
    },
  },
  /** A vital sign from the loved one's health-system portal (src/portal), units as the portal sent them. */
  portal_vital: { group: 'vitals', words: (e) => portalWords(e, `${str(e.payload.name, 'A vital sign')} ${str(e.payload.value)}`.trim()) },
  /** A laboratory result from the portal. */
  portal_result: { group: 'results', words: (e) => portalWords(e, `${str(e.payload.name, 'A test result')} ${str(e.payload.value)}`.trim()) },
  /** A medication on the clinicians' list in the portal (an order, MedicationRequest) or one the
   *  loved one reports taking (MedicationStatement); a stopped one says so. */
  portal_medication: {
    group: 'medications',
    counted: ["medication on the clinicians' list", "medications on the clinicians' list"],
    words: (e) => {
      const status = str(e.payload.status);
      const list = e.payload.resource === 'MedicationStatement' ? 'reported as taken' : "on the clinicians' list";
      const shown = status && status !== 'active' && !(status === 'completed' && e.payload.resource === 'MedicationStatement');
      const what = `${str(e.payload.medication, 'A medication')}${shown ? ` (${status.replace(/-/g, ' ')})` : ''} ${list}`;
      return { ...portalWords(e, what), ...(str(e.payload.dosage) ? { detail: str(e.payload.dosage) } : {}) };
    },
  },
  /** A condition on the portal's problem list: "Condition: Type 2 diabetes (active, since 2019-03-02)". */
  portal_condition: {
    group: 'record',
    counted: ['condition', 'conditions'],
    words: (e) => {
      const status = str(e.payload.clinical_status).replace(/-/g, ' ');
      const since = str(e.payload.onset);
      const notes = [status && status !== 'unknown' ? status : '', since ? `since ${since}` : ''].filter(Boolean).join(', ');
      return portalWords(e, `Condition: ${str(e.payload.name, 'a condition')}${notes ? ` (${notes})` : ''}`);
    },
  },
  /** An allergy or intolerance: "Allergy to penicillin (high risk)", the reaction as its detail. */
  portal_allergy: {
    group: 'record',
    counted: ['allergy', 'allergies'],
    words: (e) => {
      const status = str(e.payload.clinical_status).replace(/-/g, ' ');
      const notes = [str(e.payload.criticality) === 'high' ? 'high risk' : '', status && status !== 'active' && status !== 'unknown' ? status : ''].filter(
        Boolean,
      );
      const reaction = str(e.payload.reaction);
      return {
        ...portalWords(e, `Allergy to ${str(e.payload.substance, 'a substance')}${notes.length ? ` (${notes.join(', ')})` : ''}`),
        ...(reaction ? { detail: `Reaction: ${reaction}` } : {}),
      };
    },
  },
  /** A visit the health system recorded (an Encounter): "Office visit at Northside Clinic", the reason as its detail. */
  portal_encounter: {
    group: 'visits',
    counted: ['clinic visit', 'clinic visits'],
    words: (e) => {
      const status = str(e.payload.status).replace(/-/g, ' ');
      const place = str(e.payload.place);
      const reason = str(e.payload.reason);
      const what = `${str(e.payload.kind, 'Visit')}${place ? ` at ${place}` : ''}${status && status !== 'finished' && status !== 'unknown' ? ` (${status})` : ''}`;
      return { ...portalWords(e, what), ...(reason ? { detail: `Reason: ${reason}` } : {}) };
    },
  },
  /** An appointment at the health system, at its start: "Appointment: Cardiology follow-up at Northside Clinic (booked)". */
  portal_appointment: {
    group: 'visits',
    counted: ['appointment', 'appointments'],
    words: (e, clock) => {
      const status = str(e.payload.status).replace(/-/g, ' ');
      const place = str(e.payload.place);
      const end = at(e.payload.end);
      const what = `Appointment: ${str(e.payload.description, 'an appointment')}${place ? ` at ${place}` : ''}${status ? ` (${status})` : ''}`;
      return { ...portalWords(e, what), ...(end ? { detail: `Until ${clock.time(end)}` } : {}) };
    },
  },
  /** A vaccine given: "Immunization: Influenza vaccine". */
  portal_immunization: {
    group: 'record',
    counted: ['immunization', 'immunizations'],
    words: (e) => {
      const status = str(e.payload.status).replace(/-/g, ' ');
      return portalWords(e, `Immunization: ${str(e.payload.vaccine, 'a vaccine')}${status && status !== 'completed' ? ` (${status})` : ''}`);
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

/** What the family's plans file on the timeline (an appointment, a task done): changed on their own
 *  pages, never corrected or withdrawn as an entry. */
export const isPlanEvent = (type: string): boolean => type === 'appointment' || type === 'task_done';

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

/** Any event in words; a type this version does not know is shown with its fields, never dropped.
 *  The aide is the display name the partner sent, else `unnamed`'s words (the app's "an aide from
 *  Evergreen Home Care": it never shows the internal id), else the partner's id for an assistant. */
export function careWords(e: CareEventRecord, clock: WordsClock, unnamed?: AideNamer): CareWords & { group: CareGroup } {
  const type = known(e.eventType);
  if (type) {
    if (e.source === 'family') return { group: type.group, ...type.words(e, clock, authorOf(e)) };
    const by = aideName(e) ?? (unnamed ? unnamed(e) : str(type.aideId ? e.payload[type.aideId] : undefined, 'someone'));
    return { group: type.group, ...type.words(e, clock, by) };
  }
  // For the family, a field naming a person by the partner's id ("reported_by") names them in words, and other ids are left out.
  const entries = unnamed
    ? Object.entries(e.payload).flatMap(([k, v]): [string, unknown][] =>
        /(^|_)by$/i.test(k) ? [[k, aideName(e) ?? unnamed(e)]] : /(^|_)id$/i.test(k) || k === 'caregiver_name' ? [] : [[k, v]],
      )
    : Object.entries(e.payload);
  const inLine = entries.slice(0, 8).map(([k, v]) => `${typeLabel(k)}: ${fieldText(v, 120)}`);
  return {
    group: 'other',
    summary: `${typeLabel(e.eventType)} at ${clock.time(e.occurredAt)}`,
    fields: entries.slice(0, 12).map(([k, v]) => [typeLabel(k), fieldText(v, 200)]),
    line: `${typeLabel(e.eventType)}${inLine.length ? ` (${inLine.join('; ')})` : ''}`,
    headline: typeLabel(e.eventType),
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

/**
 * The reviewed words that put a note (or an event of a type this version does not know) at the top
 * of the loved one's page. Each is matched as whole words, case aside; a match the few words before
 * it in the same clause negate ("no falls", "denies pain", "has not fallen") does not count, nor do
 * the listed harmless phrases ("fell asleep"). Change the list with its tests (test/care-attention.test.ts).
 */
export const FLAGGED_WORDS: readonly { reason: string; words: RegExp; harmless?: RegExp }[] = [
  {
    reason: 'fall',
    words: /\b(falls?|fell|fallen|falling|slipped|tripped|found on the floor)\b/i,
    harmless: /\b(fall|fell|falls|fallen|falling) (asleep|back|behind|apart|short|through)\b|\bfall (season|weather)\b|\bthis fall\b/i,
  },
  {
    reason: 'hospital',
    words: /\b(hospitali[sz]ed|hospital|emergency room|urgent care)\b|(?<![\w&])(?-i:ER|A&E)(?![\w&])/i,
    harmless: /\bhospital (bed|appointment)\b/i,
  },
  { reason: 'emergency', words: /\b(emergency|911|ambulance|paramedics?)\b/i },
  {
    reason: 'injury',
    words:
      /\b(wounds?|injur(y|ies|ed)|bleeding|bled|bruis(e|es|ed|ing)|skin tear|pressure (sore|ulcer)s?|bed ?sores?|burn(ed|t)?|fracture[ds]?|broken (hip|arm|wrist|leg|bone))\b/i,
  },
  { reason: 'breathing or chest pain', words: /\b(chest pains?|short(ness)? of breath|breathless|trouble breathing|choking|choked)\b/i },
  { reason: 'sudden change', words: /\b(unresponsive|fainted|passed out|seizures?|stroke|vomit(ed|ing)?)\b/i },
  {
    reason: 'refusal',
    words: /\b(refused|refusing|refuses|declined|would ?n[o']t take|did ?n[o']t take|spat (it )?out)\b/i,
    harmless: /\b(declined (slightly|a little|gradually))\b/i,
  },
];

/** The flag reasons that send an alert to the family (src/alerts), not only a place at the top of the
 *  page: a fall, a hospital visit, an emergency or a wound. */
export const ALERTING_REASONS: readonly string[] = ['fall', 'hospital', 'emergency', 'injury'];

const NEGATION = /\b(no|not|never|without|denies|denied|deny|didn't|did not|hasn't|has not|wasn't|was not|nor|free of|negative for)\b/i;
/** Where a clause starts: a stop, or a joining word that begins a new statement. */
const CLAUSE = /[.;:!?\n]|,|\b(but|and|then|however|although|though|so)\b/gi;

/** Why a text needs the family's attention: the reasons of the reviewed words it contains, in list order. */
export function flaggedReasons(text: string): string[] {
  const reasons: string[] = [];
  for (const { reason, words, harmless } of FLAGGED_WORDS) {
    const scrubbed = harmless ? text.replace(new RegExp(harmless.source, harmless.flags.includes('g') ? harmless.flags : `${harmless.flags}g`), ' ') : text;
    const all = new RegExp(words.source, words.flags.includes('g') ? words.flags : `${words.flags}g`);
    for (const m of scrubbed.matchAll(all)) {
      const before = scrubbed.slice(0, m.index);
      const clause = before.split(CLAUSE).at(-1) ?? '';
      const lastWords = clause.trim().split(/\s+/).slice(-4).join(' ');
      // "refused" after "not" reads the other way round ("did not refuse" is fine); a fall negated is no fall.
      if (NEGATION.test(lastWords)) continue;
      reasons.push(reason);
      break;
    }
  }
  return reasons;
}

/** The text of an event the flag words are read in: a note's text, or an unknown type's name and fields. */
export function flaggableText(e: Pick<CareEventRecord, 'eventType' | 'payload'>): string | null {
  if (e.eventType === 'note_added')
    return [str(e.payload.note_text), typeof e.payload.structured_summary === 'string' ? e.payload.structured_summary : ''].join('\n');
  if (known(e.eventType)) return null;
  return [typeLabel(e.eventType), ...Object.values(e.payload).map((v) => fieldText(v, 500))].join('\n');
}
