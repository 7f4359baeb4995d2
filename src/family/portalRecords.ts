// What a loved one's health-system portal records say now, read from the care timeline: the
// conditions, allergies and medication list of the clinicians, vital signs by LOINC code, and the
// clinicians' medication list set beside the family's schedule, the differences in words.
import { portalProvenance, type CareEventRecord } from './careEvents.js';
import { VITAL_KINDS, type VitalKind } from './vitalKinds.js';

/** The portal event types the health summary and the loved one's page read. */
export const PORTAL_HEALTH_TYPES = ['portal_condition', 'portal_allergy', 'portal_medication'] as const;
/** The portal event types that may carry a vital sign (glucose often comes filed as a laboratory result). */
export const PORTAL_READING_TYPES = ['portal_vital', 'portal_result'] as const;

const str = (v: unknown): string | undefined => (typeof v === 'string' && v.trim() ? v.trim() : undefined);
const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

/** The portal's name as the family gave it ("Northside Health"). */
export const portalName = (e: CareEventRecord): string => str(e.payload.portal_name) ?? 'a health system';

/** "from Northside Health's portal" */
export const fromPortal = (e: CareEventRecord): string => `from ${portalName(e)}'s portal`;

/** One record per portal resource, the first listed (listings are newest first, corrected versions left out). */
function latest(events: readonly CareEventRecord[], type: string): CareEventRecord[] {
  const seen = new Set<string>();
  return events.filter((e) => {
    if (e.eventType !== type) return false;
    const p = portalProvenance(e);
    const key = p ? `${p.portal}|${p.resourceType}/${p.id}` : e._id;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

export interface PortalCondition {
  name: string;
  clinicalStatus: string;
  onset?: string;
  code?: string;
  portal: string;
  recordId: string;
}

export interface PortalAllergy {
  substance: string;
  clinicalStatus: string;
  criticality?: string;
  reaction?: string;
  portal: string;
  recordId: string;
}

export interface PortalMedication {
  name: string;
  status: string;
  dosage?: string;
  resource: string;
  portal: string;
  recordId: string;
}

/** Statuses that still hold: active ones are listed first. */
const STILL = new Set(['active', 'recurrence', 'relapse', 'unknown', '']);
const byStatus = <T extends { clinicalStatus: string }>(a: T, b: T) => Number(!STILL.has(a.clinicalStatus)) - Number(!STILL.has(b.clinicalStatus));

/** The portal's conditions, active ones first; entered-in-error ones left out. */
export function conditionsOf(events: readonly CareEventRecord[]): PortalCondition[] {
  return latest(events, 'portal_condition')
    .map((e) => ({
      name: str(e.payload.name) ?? 'A condition',
      clinicalStatus: str(e.payload.clinical_status) ?? 'unknown',
      ...(str(e.payload.onset) ? { onset: str(e.payload.onset)! } : {}),
      ...(str(e.payload.code) ? { code: str(e.payload.code)! } : {}),
      portal: portalName(e),
      recordId: e._id,
    }))
    .filter((c) => c.clinicalStatus !== 'entered-in-error')
    .sort(byStatus);
}

/** The portal's allergies and intolerances, active ones first; entered-in-error ones left out. */
export function allergiesOf(events: readonly CareEventRecord[]): PortalAllergy[] {
  return latest(events, 'portal_allergy')
    .map((e) => ({
      substance: str(e.payload.substance) ?? 'A substance',
      clinicalStatus: str(e.payload.clinical_status) ?? 'unknown',
      ...(str(e.payload.criticality) ? { criticality: str(e.payload.criticality)! } : {}),
      ...(str(e.payload.reaction) ? { reaction: str(e.payload.reaction)! } : {}),
      portal: portalName(e),
      recordId: e._id,
    }))
    .filter((a) => a.clinicalStatus !== 'entered-in-error')
    .sort(byStatus);
}

/** Every medication on the clinicians' list, whatever its status; entered-in-error ones left out. */
export function portalMedicationsOf(events: readonly CareEventRecord[]): PortalMedication[] {
  return latest(events, 'portal_medication')
    .map((e) => ({
      name: str(e.payload.medication) ?? 'A medication',
      status: str(e.payload.status) ?? 'unknown',
      ...(str(e.payload.dosage) ? { dosage: str(e.payload.dosage)! } : {}),
      resource: str(e.payload.resource) ?? portalProvenance(e)?.resourceType ?? 'MedicationRequest',
      portal: portalName(e),
      recordId: e._id,
    }))
    .filter((m) => m.status !== 'entered-in-error');
}

// ---- Vital signs by LOINC code -------------------------------------------------------------

const kind = (key: string): VitalKind => VITAL_KINDS.find((k) => k.key === key)!;

/** LOINC codes of the vital signs the charts draw: blood pressure's panel and its two components. */
const BY_LOINC: Record<string, { key: string; part?: 'systolic' | 'diastolic' }> = {
  '85354-9': { key: 'blood_pressure' },
  '8480-6': { key: 'blood_pressure', part: 'systolic' },
  '8462-4': { key: 'blood_pressure', part: 'diastolic' },
  '8867-4': { key: 'pulse' },
  '29463-7': { key: 'weight' },
  '8310-5': { key: 'temperature' },
  '2708-6': { key: 'oxygen_saturation' },
  '59408-5': { key: 'oxygen_saturation' },
  '2339-0': { key: 'glucose' },
  '15074-8': { key: 'glucose' },
  '9279-1': { key: 'respiratory_rate' },
};

/** The vital kind of a LOINC code the charts know, or undefined. */
export const vitalKindOfLoinc = (code: unknown): VitalKind | undefined => {
  const hit = typeof code === 'string' ? BY_LOINC[code.trim()] : undefined;
  return hit ? kind(hit.key) : undefined;
};

export interface PortalReading {
  kind: VitalKind;
  at: Date;
  value: number;
  /** Diastolic, for blood pressure. */
  second?: number;
  /** As the portal sent it: nothing is converted. */
  unit: string;
  portal: string;
  recordIds: string[];
}

interface Component {
  loinc?: unknown;
  amount?: unknown;
  unit?: unknown;
}

/**
 * Portal observations the charts can draw, by LOINC code. Blood pressure comes as its panel with
 * systolic and diastolic components (payload `components: [{ loinc, amount, unit }]`), or as two
 * observations, systolic and diastolic, at the same time: those are paired into one reading. A
 * panel with neither a value nor components is left out (nothing to draw).
 */
export function portalReadingsOf(events: readonly CareEventRecord[]): PortalReading[] {
  const readings: PortalReading[] = [];
  const halves = new Map<string, { systolic?: CareEventRecord; diastolic?: CareEventRecord }>();
  for (const type of PORTAL_READING_TYPES)
    for (const e of latest(events, type)) {
      const hit = typeof e.payload.loinc === 'string' ? BY_LOINC[e.payload.loinc.trim()] : undefined;
      if (!hit) continue;
      const base = { kind: kind(hit.key), at: e.occurredAt, unit: str(e.payload.unit) ?? '', portal: portalName(e), recordIds: [e._id] };
      if (hit.part) {
        const key = `${portalName(e)}|${e.occurredAt.getTime()}`;
        halves.set(key, { ...halves.get(key), [hit.part]: e });
        continue;
      }
      const components = Array.isArray(e.payload.components) ? (e.payload.components as Component[]) : [];
      const part = (code: string) => components.find((c) => typeof c === 'object' && c !== null && c.loinc === code);
      const systolic = num(part('8480-6')?.amount);
      const diastolic = num(part('8462-4')?.amount);
      if (systolic !== undefined) {
        readings.push({ ...base, value: systolic, ...(diastolic !== undefined ? { second: diastolic } : {}), unit: str(part('8480-6')?.unit) ?? base.unit });
        continue;
      }
      const value = num(e.payload.amount);
      if (value !== undefined) readings.push({ ...base, value });
    }
  for (const { systolic, diastolic } of halves.values()) {
    const value = num(systolic?.payload.amount);
    if (!systolic || value === undefined) continue;
    const second = num(diastolic?.payload.amount);
    readings.push({
      kind: kind('blood_pressure'),
      at: systolic.occurredAt,
      value,
      ...(second !== undefined ? { second } : {}),
      unit: str(systolic.payload.unit) ?? '',
      portal: portalName(systolic),
      recordIds: [systolic._id, ...(diastolic ? [diastolic._id] : [])],
    });
  }
  return readings;
}

// ---- The clinicians' list beside the family's ------------------------------------------------

/**
 * How two medication names are matched: the first word of each (its ingredient, as lists usually
 * start), in any case and without accents, so "metoprolol" matches "Metoprolol tartrate 25 mg
 * tablet". Two salts of one ingredient therefore match; two ingredients never do.
 */
export const medicationKey = (name: string): string =>
  name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .match(/[a-z0-9]+/)?.[0] ?? '';

const STOPPED = new Set(['stopped', 'cancelled', 'completed', 'not-taken']);

export type MedicationDifferenceKind = 'stopped_on_portal' | 'on_hold_on_portal' | 'portal_only' | 'family_only';

export interface MedicationComparison {
  key: string;
  /** The family's active medication of that name, if any. */
  family?: { name: string; amount?: string };
  /** The clinicians' record of that name that counts: an active one if there is one. */
  portal?: PortalMedication;
  difference?: { kind: MedicationDifferenceKind; words: string };
}

const sentence = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

/**
 * The family's active medications and the clinicians' list, one row per medication (matched by
 * `medicationKey`), each difference in words. Stopped medications on both sides agree and are left
 * out; a medication on the clinicians' list in another status (draft, unknown) is shown, never
 * called a difference.
 */
export function compareMedications(family: readonly { name: string; amount?: string }[], portal: readonly PortalMedication[]): MedicationComparison[] {
  const rows = new Map<string, MedicationComparison>();
  const row = (name: string) => {
    const key = medicationKey(name) || name.toLowerCase();
    const r = rows.get(key) ?? { key };
    rows.set(key, r);
    return r;
  };
  for (const f of family) row(f.name).family ??= { name: f.name, ...(f.amount ? { amount: f.amount } : {}) };
  for (const p of portal) {
    const r = row(p.name);
    // An active record counts over a stopped one (a medication stopped and later started again).
    if (!r.portal || (r.portal.status !== 'active' && p.status === 'active')) r.portal = p;
  }
  const out: MedicationComparison[] = [];
  for (const r of rows.values()) {
    const p = r.portal;
    const f = r.family;
    if (p && f) {
      const name = sentence(f.name);
      if (STOPPED.has(p.status))
        r.difference = { kind: 'stopped_on_portal', words: `The doctor's list says ${name} was stopped; the family still schedules it` };
      else if (p.status === 'on-hold')
        r.difference = { kind: 'on_hold_on_portal', words: `The doctor's list says ${name} is on hold; the family still schedules it` };
    } else if (p) {
      if (STOPPED.has(p.status) || p.status === 'on-hold') continue;
      if (p.status === 'active') r.difference = { kind: 'portal_only', words: `${sentence(p.name)}: on the doctor's list, not in the family's schedule` };
    } else if (f) {
      r.difference = { kind: 'family_only', words: `${sentence(f.name)}: in the family's schedule, not on the doctor's list` };
    }
    out.push(r);
  }
  return out.sort((a, b) => Number(!a.difference) - Number(!b.difference) || a.key.localeCompare(b.key));
}
