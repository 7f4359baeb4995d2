// What the family writes on a loved one's timeline (a note, a dose, a reading taken at home, how
// the day went): checked field by field, stored as care events with `source: 'family'` and who
// wrote them and how, corrected by superseding and withdrawn by a record that says why.
import { z } from 'zod';
import { newId } from '../store/ids.js';
import { AlreadySuperseded, type Timelines } from '../store/timeline/port.js';
import { CARE_EVENT_STREAM, type CareEventRecord, type EntryAuthor } from './careEvents.js';
import type { LovedOneRecord, MemberRecord } from './records.js';
import { canWrite } from './circle.js';
import { VITAL_KINDS } from './vitalKinds.js';

export type { EntryAuthor };

/** The kinds of entry a family member can add, with the event type each is stored as. */
export const ENTRY_KINDS = ['note', 'dose', 'reading', 'day'] as const;
export type EntryKind = (typeof ENTRY_KINDS)[number];

export const DOSE_STATUSES = { given: 'med_administered', missed: 'med_missed', refused: 'med_refused' } as const;
export type DoseStatus = keyof typeof DOSE_STATUSES;

export const MOODS = { good: 'A good day', okay: 'An okay day', difficult: 'A difficult day' } as const;
export type Mood = keyof typeof MOODS;

/** The event type of a withdrawn entry's withdrawal: it supersedes the entry and says why. */
export const WITHDRAWN = 'entry_withdrawn';
/** How the day went. */
export const DAY_NOTED = 'day_noted';

/** The readings a family takes at home, each unit with the range a real reading falls in: a value
 *  outside is a typo (72 typed as 720), refused with the range stated rather than stored. */
export const HOME_VITALS: Record<string, { units: Record<string, [number, number]>; second?: [number, number] }> = {
  blood_pressure: { units: { mmHg: [50, 260] }, second: [30, 160] },
  pulse: { units: { '/min': [25, 250] } },
  weight: { units: { kg: [1, 350], lb: [2, 770] } },
  glucose: { units: { 'mg/dL': [20, 700], 'mmol/L': [1, 40] } },
  temperature: { units: { '°C': [30, 45], '°F': [86, 113] } },
  oxygen_saturation: { units: { '%': [50, 100] } },
};

export const homeVitalLabel = (key: string): string => VITAL_KINDS.find((k) => k.key === key)?.label ?? key;

/** How far back and ahead an entry's time may be: a dose logged tonight for this morning is fine,
 *  a year typed wrong is not. */
export const ENTRY_PAST_DAYS = 30;
export const ENTRY_FUTURE_MINUTES = 10;

/** A field that is wrong, and why: the app shows it beside the field, the MCP tools name it. */
export class EntryInvalid extends Error {
  readonly code = 'invalid_entry';
  constructor(
    readonly field: string,
    readonly problem: string,
  ) {
    super(`${field}: ${problem}`);
  }
}

/** The caller may only read the care record. */
export class ReadOnlyMember extends Error {
  readonly code = 'read_only';
  constructor() {
    super('You can only read this care record: the primary caregiver decides who can add to it (Family circle page).');
  }
}

/** No such entry on this loved one's timeline, or not one the family can change (agency events stay as sent). */
export class EntryNotFound extends Error {
  readonly code = 'entry_not_found';
  constructor(readonly id: string) {
    super(`no family entry ${id} on this timeline`);
  }
}

/** The entry was corrected or withdrawn since it was read: change the newest version. */
export class EntryChanged extends Error {
  readonly code = 'entry_changed';
  constructor(
    readonly id: string,
    readonly by: string,
  ) {
    super(`entry ${id} was already corrected or withdrawn (by ${by}); change the newest version`);
  }
}

/** Only the person who wrote an entry, or the primary caregiver, corrects or withdraws it. */
export class NotYourEntry extends Error {
  readonly code = 'not_your_entry';
  constructor() {
    super('Only the person who wrote this entry, or the primary caregiver, can correct or withdraw it.');
  }
}

const text = (max: number) => z.string().trim().min(1, 'must not be empty').max(max, `must be at most ${max} characters`);
/** A number as a form sends it ("37,1" too) or as JSON does; the field's name comes with the error. */
const finite = () =>
  z.preprocess(
    (v) => (typeof v === 'string' ? (v.trim() === '' ? undefined : Number(v.trim().replace(',', '.'))) : v),
    z.number({ error: 'must be a number' }).finite('must be a number'),
  );

/** What each kind of entry takes, as the app's form fields and the MCP tools' arguments name them. */
export const ENTRY_INPUTS = {
  note: z.object({ text: text(5000) }),
  day: z.object({ text: text(5000), mood: z.enum(Object.keys(MOODS) as [Mood, ...Mood[]]).optional() }),
  dose: z.object({
    status: z.enum(Object.keys(DOSE_STATUSES) as [DoseStatus, ...DoseStatus[]]),
    medication: text(200),
    amount: finite().pipe(z.number().min(0, 'must not be negative').max(100_000, 'must be at most 100000')).optional(),
    unit: text(50).optional(),
    reason: text(500).optional(),
  }),
  reading: z.object({
    kind: z.enum(Object.keys(HOME_VITALS) as [string, ...string[]]),
    value: finite(),
    second: finite().optional(),
    unit: z.string().trim().min(1, 'must not be empty'),
  }),
} as const;

export type EntryInput<K extends EntryKind> = z.output<(typeof ENTRY_INPUTS)[K]>;

/** The arguments as the kind's schema reads them, or EntryInvalid naming the first wrong field. */
export function parseEntry<K extends EntryKind>(kind: K, raw: Record<string, unknown>): EntryInput<K> {
  const parsed = ENTRY_INPUTS[kind].safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const field = String(issue.path[0] ?? 'entry');
    throw new EntryInvalid(field, issue.code === 'invalid_type' && raw[field] === undefined ? 'is required' : issue.message);
  }
  const input = parsed.data as EntryInput<K>;
  if (kind === 'reading') checkReading(input as EntryInput<'reading'>);
  return input;
}

function checkReading(r: EntryInput<'reading'>): void {
  const spec = HOME_VITALS[r.kind]!;
  const range = spec.units[r.unit];
  if (!range) throw new EntryInvalid('unit', `must be one of ${Object.keys(spec.units).join(', ')} for ${homeVitalLabel(r.kind).toLowerCase()}`);
  const [lo, hi] = range;
  if (r.value < lo || r.value > hi) throw new EntryInvalid('value', `must be between ${lo} and ${hi} ${r.unit}; check for a typo`);
  if (spec.second) {
    if (r.second === undefined) throw new EntryInvalid('second', 'is required: the lower (diastolic) number');
    const [slo, shi] = spec.second;
    if (r.second < slo || r.second > shi) throw new EntryInvalid('second', `must be between ${slo} and ${shi} ${r.unit}; check for a typo`);
    if (r.second >= r.value) throw new EntryInvalid('second', 'must be lower than the first (systolic) number');
  } else if (r.second !== undefined) throw new EntryInvalid('second', `is only for blood pressure`);
}

/** When the entry happened: now when not given, else within the bounds, which the error states. */
export function entryTime(at: Date | undefined, now: Date): Date {
  if (!at) return now;
  if (Number.isNaN(at.getTime())) throw new EntryInvalid('at', 'must be a date and time');
  const earliest = new Date(now.getTime() - ENTRY_PAST_DAYS * 86_400_000);
  const latest = new Date(now.getTime() + ENTRY_FUTURE_MINUTES * 60_000);
  if (at < earliest) throw new EntryInvalid('at', `must be within the last ${ENTRY_PAST_DAYS} days (after ${earliest.toISOString()})`);
  if (at > latest) throw new EntryInvalid('at', `must not be in the future (before ${latest.toISOString()})`);
  return at;
}

/** The event type and payload an entry is stored as: the catalogue's types, so the medications and
 *  vital-sign pages read a family's doses and readings as they read the agency's. */
export function entryPayload(kind: EntryKind, input: EntryInput<EntryKind>): { eventType: string; payload: Record<string, unknown> } {
  switch (kind) {
    case 'note':
      return { eventType: 'note_added', payload: { note_text: (input as EntryInput<'note'>).text } };
    case 'day': {
      const d = input as EntryInput<'day'>;
      return { eventType: DAY_NOTED, payload: { text: d.text, ...(d.mood ? { mood: d.mood } : {}) } };
    }
    case 'dose': {
      const d = input as EntryInput<'dose'>;
      return {
        eventType: DOSE_STATUSES[d.status],
        payload: {
          medication_name: d.medication,
          ...(d.amount !== undefined ? { dose_amount: d.amount } : {}),
          ...(d.unit ? { dose_unit: d.unit } : {}),
          ...(d.reason ? { reason: d.reason } : {}),
        },
      };
    }
    case 'reading': {
      const r = input as EntryInput<'reading'>;
      return {
        eventType: 'vital_recorded',
        payload: { vital_type: r.kind, value: r.value, ...(r.second !== undefined ? { secondary_value: r.second } : {}), unit: r.unit },
      };
    }
  }
}

/** The kind of entry a stored family event is, for its correction form; null for a withdrawal or another type. */
export function kindOf(e: CareEventRecord): EntryKind | null {
  if (e.eventType === 'note_added') return 'note';
  if (e.eventType === DAY_NOTED) return 'day';
  if (e.eventType === 'vital_recorded') return 'reading';
  if (Object.values(DOSE_STATUSES).includes(e.eventType as never)) return 'dose';
  return null;
}

/** The form fields of a stored entry: what its correction form starts from. */
export function fieldsOf(e: CareEventRecord): Record<string, string> {
  const p = e.payload;
  const s = (v: unknown) => (v === undefined || v === null ? '' : String(v));
  switch (kindOf(e)) {
    case 'note':
      return { text: s(p.note_text) };
    case 'day':
      return { text: s(p.text), mood: s(p.mood) };
    case 'dose':
      return {
        status: Object.entries(DOSE_STATUSES).find(([, t]) => t === e.eventType)?.[0] ?? 'given',
        medication: s(p.medication_name),
        amount: s(p.dose_amount),
        unit: s(p.dose_unit),
        reason: s(p.reason),
      };
    case 'reading':
      return { kind: s(p.vital_type), value: s(p.value), second: s(p.secondary_value), unit: s(p.unit) };
    default:
      return {};
  }
}

/** Adding, correcting and withdrawing a family's entries on one loved one's timeline. The caller has
 *  found the loved one in the member's workspace; every write checks the member may write. */
export class FamilyEntries {
  constructor(
    private readonly timelines: Timelines,
    private readonly clock: () => number = Date.now,
  ) {}

  private get timeline() {
    return this.timelines.of(CARE_EVENT_STREAM);
  }

  private record(lovedOne: LovedOneRecord, author: EntryAuthor, eventType: string, payload: Record<string, unknown>, at: Date, id?: string): CareEventRecord {
    return {
      _id: id ?? newId('fe'),
      lovedOneId: lovedOne._id,
      workspaceId: lovedOne.workspaceId,
      source: 'family',
      eventType,
      occurredAt: at,
      receivedAt: new Date(this.clock()),
      payload,
      author,
    };
  }

  /** A new entry. With `id` (a form's, made when it was shown) a repeated post stores it once. */
  async add<K extends EntryKind>(
    member: MemberRecord,
    lovedOne: LovedOneRecord,
    kind: K,
    raw: Record<string, unknown>,
    author: EntryAuthor,
    opts: { at?: Date; id?: string } = {},
  ): Promise<CareEventRecord> {
    if (!canWrite(member)) throw new ReadOnlyMember();
    const input = parseEntry(kind, raw);
    const at = entryTime(opts.at, new Date(this.clock()));
    const { eventType, payload } = entryPayload(kind, input);
    const entry = this.record(lovedOne, author, eventType, payload, at, opts.id);
    const { duplicates } = await this.timeline.append([entry]);
    if (!duplicates.length) return entry;
    // Stored already: this form sent twice. An id taken on another timeline is never reused.
    const stored = await this.timeline.get(lovedOne._id, entry._id);
    if (stored) return stored;
    const fresh = { ...entry, _id: newId('fe') };
    await this.timeline.append([fresh]);
    return fresh;
  }

  /** A family entry that is still current, and that this member may change. */
  private async changeable(member: MemberRecord, lovedOne: LovedOneRecord, id: string): Promise<CareEventRecord> {
    if (!canWrite(member)) throw new ReadOnlyMember();
    const entry = await this.entry(lovedOne, id);
    if (!entry || !kindOf(entry)) throw new EntryNotFound(id);
    if (entry.supersededBy) throw new EntryChanged(id, entry.supersededBy);
    if (member.role !== 'caregiver' && entry.author?.uid !== member.uid) throw new NotYourEntry();
    return entry;
  }

  /** One family entry (any version, withdrawals included) of this loved one; null for an agency event. */
  async entry(lovedOne: LovedOneRecord, id: string): Promise<CareEventRecord | null> {
    const e = await this.timeline.get(lovedOne._id, id);
    return e && e.source === 'family' ? e : null;
  }

  /** Every version of an entry, oldest first: the corrected texts stay readable. */
  history(lovedOne: LovedOneRecord, id: string): Promise<CareEventRecord[]> {
    return this.timeline.history(lovedOne._id, id);
  }

  /** The entry as corrected: a new version superseding it, of the same kind and at the same time
   *  unless `at` is given; the earlier version stays in its history. */
  async correct(
    member: MemberRecord,
    lovedOne: LovedOneRecord,
    id: string,
    raw: Record<string, unknown>,
    author: EntryAuthor,
    opts: { at?: Date; newId?: string } = {},
  ): Promise<CareEventRecord> {
    const done = await this.repeated(lovedOne, opts.newId);
    if (done) return done;
    const entry = await this.changeable(member, lovedOne, id);
    const kind = kindOf(entry)!;
    const input = parseEntry(kind, raw);
    const at = opts.at ? entryTime(opts.at, new Date(this.clock())) : entry.occurredAt;
    const { eventType, payload } = entryPayload(kind, input);
    const newer = this.record(lovedOne, author, eventType, payload, at, opts.newId);
    await this.supersede(lovedOne, id, newer);
    return { ...newer, supersedes: id };
  }

  /** The entry withdrawn: a record superseding it that says why, listed where the entry was. */
  async withdraw(
    member: MemberRecord,
    lovedOne: LovedOneRecord,
    id: string,
    reasonRaw: unknown,
    author: EntryAuthor,
    opts: { newId?: string } = {},
  ): Promise<CareEventRecord> {
    const done = await this.repeated(lovedOne, opts.newId);
    if (done) return done;
    const entry = await this.changeable(member, lovedOne, id);
    const reason = text(500).safeParse(reasonRaw ?? '');
    if (!reason.success) throw new EntryInvalid('reason', reasonRaw === undefined ? 'is required' : reason.error.issues[0]!.message);
    const withdrawal = this.record(lovedOne, author, WITHDRAWN, { reason: reason.data, withdrawn_type: entry.eventType }, entry.occurredAt, opts.newId);
    await this.supersede(lovedOne, id, withdrawal);
    return { ...withdrawal, supersedes: id };
  }

  /** A correction or withdrawal sent again (a form posted twice): the first one's record. */
  private async repeated(lovedOne: LovedOneRecord, newId: string | undefined): Promise<CareEventRecord | null> {
    return newId ? this.entry(lovedOne, newId) : null;
  }

  private async supersede(lovedOne: LovedOneRecord, id: string, newer: CareEventRecord): Promise<void> {
    try {
      await this.timeline.supersede(lovedOne._id, id, newer);
    } catch (err) {
      if (err instanceof AlreadySuperseded) throw new EntryChanged(id, err.by);
      throw err;
    }
  }
}
