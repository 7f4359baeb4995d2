// A loved one's medication list and the one place that writes it: each change (added, changed,
// stopped) is a new version document, never an overwrite, so the list's history is kept and says
// who made each change and how (in the app, or which assistant).
import type { Collection, Db, IndexDescription } from 'mongodb';
import { z } from 'zod';
import { knownZone } from './changes.js';
import { isDuplicateKey } from '../store/errors.js';
import { newId } from '../store/ids.js';
import { DEFAULT_GRACE_MINUTES, WEEKDAYS, type MedicationSchedule, type Scheduled } from './medSchedule.js';

export const MEDICATIONS = 'medications';

export const MEDICATION_INDEXES: IndexDescription[] = [
  { key: { lovedOneId: 1, medicationId: 1, version: -1 }, name: 'by_loved_one_medication_version' },
  { key: { workspaceId: 1 }, name: 'by_workspace' },
];

/** Who made a change and how: "Ana, in the app"; "Ana's assistant, Claude". */
export interface ChangedBy {
  uid: string;
  name: string;
  how: 'app' | 'assistant';
  /** The assistant's name, for a change made through the workspace MCP endpoint. */
  client?: string;
}

export interface MedicationFields {
  name: string;
  /** "500 mg" */
  strength?: string;
  /** "1 tablet" */
  dose?: string;
  /** "tablet", "liquid", "patch" */
  form?: string;
  /** How it is taken: "by mouth", "on the skin". */
  route?: string;
  schedule: MedicationSchedule;
  startDate?: string;
  stopDate?: string;
  prescriber?: string;
  note?: string;
  graceMinutes?: number;
}

export interface MedicationVersion extends MedicationFields {
  _id: string; // `${medicationId}:${version}`: a second writer of the same version fails
  medicationId: string;
  workspaceId: string;
  lovedOneId: string;
  version: number;
  change: 'added' | 'changed' | 'stopped';
  status: 'active' | 'stopped';
  stoppedAt?: Date;
  stopReason?: string;
  by: ChangedBy;
  at: Date;
}

/** A medication as it stands, with its earlier versions newest first. */
export interface Medication {
  current: MedicationVersion;
  history: MedicationVersion[];
}

/** The change was made by someone else since the version the writer saw. */
export class MedicationConflict extends Error {
  constructor(readonly current: MedicationVersion) {
    super(`${current.name} was changed meanwhile (now version ${current.version})`);
    this.name = 'MedicationConflict';
  }
}

const isoDate = () =>
  z
    .string()
    .trim()
    .regex(/^\d{4}-\d{2}-\d{2}$/, 'must be a date as YYYY-MM-DD')
    .refine((d) => !Number.isNaN(Date.parse(`${d}T00:00:00Z`)) && new Date(`${d}T00:00:00Z`).toISOString().startsWith(d), 'is not a calendar date')
    .refine((d) => d >= '1990-01-01' && d <= '2100-12-31', 'must be between 1990-01-01 and 2100-12-31');

const text = (max: number) =>
  z
    .string()
    .trim()
    .max(max, `can be at most ${max} characters`)
    .transform((s) => s || undefined);

/** A medication's fields as a form or a tool gives them; every problem names its field. */
export const medicationFieldsInput = z
  .object({
    name: z.string().trim().min(1, 'is required').max(120, 'can be at most 120 characters'),
    strength: text(60).optional(),
    dose: text(60).optional(),
    form: text(40).optional(),
    route: text(40).optional(),
    asNeeded: z.boolean().default(false),
    times: z
      .array(
        z
          .string()
          .trim()
          .regex(/^([01]\d|2[0-3]):[0-5]\d$/, 'must be times of day as HH:MM, 00:00 to 23:59'),
      )
      .max(8, 'can name at most 8 times a day')
      .default([]),
    days: z.array(z.enum(WEEKDAYS, { message: `must be among ${WEEKDAYS.join(', ')}` })).default([]),
    timeZone: z
      .string()
      .trim()
      .refine((zone) => knownZone(zone) !== null, 'must be an IANA time zone, e.g. America/New_York'),
    startDate: isoDate().optional(),
    stopDate: isoDate().optional(),
    prescriber: text(120).optional(),
    note: text(1000).optional(),
    graceMinutes: z.number().int().min(5, 'must be 5 to 240 minutes').max(240, 'must be 5 to 240 minutes').optional(),
  })
  .refine((m) => m.asNeeded || m.times.length > 0, { path: ['times'], message: 'give at least one time of day, or mark it as needed' })
  .refine((m) => !m.startDate || !m.stopDate || m.startDate <= m.stopDate, { path: ['stopDate'], message: 'must be on or after the start date' });

export type MedicationInput = z.output<typeof medicationFieldsInput>;

/** The stored fields of a validated input. */
export function fieldsOf(m: MedicationInput): MedicationFields {
  const { asNeeded, times, days, timeZone, ...rest } = m;
  const fields: MedicationFields = {
    ...Object.fromEntries(Object.entries(rest).filter(([, v]) => v !== undefined)),
    name: m.name,
    schedule: { asNeeded, times: asNeeded ? [] : [...new Set(times)].sort(), days: WEEKDAYS.filter((d) => days.includes(d)), timeZone },
  };
  return fields;
}

/** A stored medication as the form and the tool take it back (to change it). */
export function inputOf(m: MedicationFields): MedicationInput {
  return {
    name: m.name,
    strength: m.strength,
    dose: m.dose,
    form: m.form,
    route: m.route,
    asNeeded: m.schedule.asNeeded,
    times: m.schedule.times,
    days: m.schedule.days,
    timeZone: m.schedule.timeZone,
    startDate: m.startDate,
    stopDate: m.stopDate,
    prescriber: m.prescriber,
    note: m.note,
    graceMinutes: m.graceMinutes,
  };
}

/** "500 mg, 1 tablet" */
export const amountOf = (m: MedicationFields): string => [m.strength, m.dose].filter(Boolean).join(', ');

/** What the schedule math needs of a version. */
export const scheduledOf = (m: MedicationVersion): Scheduled => ({
  medicationId: m.medicationId,
  name: m.name,
  amount: amountOf(m),
  schedule: m.schedule,
  ...(m.startDate ? { startDate: m.startDate } : {}),
  ...(m.stopDate ? { stopDate: m.stopDate } : {}),
  ...(m.stoppedAt ? { stoppedAt: m.stoppedAt } : {}),
  graceMinutes: m.graceMinutes ?? DEFAULT_GRACE_MINUTES,
});

/** "Ana, in the app"; "Ana's assistant, Claude" */
export const changedByWords = (by: ChangedBy): string =>
  by.how === 'app' ? `${by.name}, in the app` : `${by.name}'s assistant${by.client ? `, ${by.client}` : ''}`;

export class MedicationList {
  private readonly versions: Collection<MedicationVersion>;

  constructor(db: Db) {
    this.versions = db.collection(MEDICATIONS);
  }

  /** Every medication of a loved one (active first, then stopped, each by name), with its history. The caller checks ownership. */
  async list(lovedOneId: string): Promise<Medication[]> {
    const all = await this.versions.find({ lovedOneId }).sort({ medicationId: 1, version: -1 }).toArray();
    const byId = new Map<string, MedicationVersion[]>();
    for (const v of all) byId.set(v.medicationId, [...(byId.get(v.medicationId) ?? []), v]);
    return [...byId.values()]
      .map((vs) => {
        const sorted = vs.sort((a, b) => b.version - a.version);
        return { current: sorted[0]!, history: sorted.slice(1) };
      })
      .sort((a, b) => (a.current.status === b.current.status ? a.current.name.localeCompare(b.current.name) : a.current.status === 'active' ? -1 : 1));
  }

  /** One medication of that loved one, or null (an id of another loved one is null too). */
  async one(lovedOneId: string, medicationId: string): Promise<Medication | null> {
    const vs = await this.versions.find({ lovedOneId, medicationId }).sort({ version: -1 }).toArray();
    return vs[0] ? { current: vs[0], history: vs.slice(1) } : null;
  }

  async add(lovedOne: { _id: string; workspaceId: string }, fields: MedicationFields, by: ChangedBy, now = new Date()): Promise<MedicationVersion> {
    const medicationId = newId('med');
    const v: MedicationVersion = {
      ...fields,
      _id: `${medicationId}:1`,
      medicationId,
      workspaceId: lovedOne.workspaceId,
      lovedOneId: lovedOne._id,
      version: 1,
      change: 'added',
      status: 'active',
      by,
      at: now,
    };
    await this.versions.insertOne(v);
    return v;
  }

  /** A new version with these fields; `seen` is the version the writer changed (a later one is a conflict). */
  change(m: Medication, fields: MedicationFields, by: ChangedBy, seen = m.current.version, now = new Date()): Promise<MedicationVersion> {
    // The fields are replaced whole: one left out of a change is cleared, not carried over.
    const { medicationId, workspaceId, lovedOneId } = m.current;
    const next = { medicationId, workspaceId, lovedOneId, ...fields, change: 'changed' as const, status: 'active' as const };
    return this.append(m, next, by, seen, now);
  }

  /** A new version marking it stopped; the earlier versions stay. */
  stop(m: Medication, reason: string | undefined, by: ChangedBy, seen = m.current.version, now = new Date()): Promise<MedicationVersion> {
    const next = { ...m.current, change: 'stopped' as const, status: 'stopped' as const, stoppedAt: now, ...(reason ? { stopReason: reason } : {}) };
    return this.append(m, next, by, seen, now);
  }

  private async append(m: Medication, next: Omit<MedicationVersion, '_id' | 'version' | 'by' | 'at'>, by: ChangedBy, seen: number, now: Date) {
    if (seen !== m.current.version) throw new MedicationConflict(m.current);
    const version = m.current.version + 1;
    const v: MedicationVersion = { ...next, _id: `${m.current.medicationId}:${version}`, version, by, at: now };
    try {
      await this.versions.insertOne(v);
    } catch (err) {
      if (!isDuplicateKey(err)) throw err;
      const latest = await this.one(m.current.lovedOneId, m.current.medicationId);
      throw new MedicationConflict(latest?.current ?? m.current);
    }
    return v;
  }
}

/** Each problem of a medication's input as "<field>: <what is wrong>", the field in `label`'s words. */
export function medicationProblems(err: z.ZodError, label: (field: string) => string = (f) => f): string[] {
  return err.issues.map((i) => `${label(String(i.path[0] ?? 'medication'))}: ${i.message}`);
}
