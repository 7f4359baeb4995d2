// What carecircle reads from a portal and how each resource becomes a care event: one read per
// resource type (Observation twice, by category), each resource version one record with its provenance.
import { createHash } from 'node:crypto';
import type { PortalProvenance } from '../family/careEvents.js';
import type { CareEventRecord } from '../family/records.js';

/** A care event a portal's resource became: its provenance always says which. */
export type PortalEvent = CareEventRecord & { provenance: PortalProvenance };

/** The resource types read (Patient at connect, the rest at each sync), each with the scope that grants it. */
export const PORTAL_RESOURCES = [
  'Patient',
  'Observation',
  'MedicationRequest',
  'MedicationStatement',
  'Condition',
  'AllergyIntolerance',
  'Encounter',
  'Appointment',
  'Immunization',
] as const;
export type PortalResourceType = (typeof PORTAL_RESOURCES)[number];

/** One search a sync makes: `key` names its cursor, `what` is the family's word for what it reads. */
export interface PortalRead {
  key: string;
  type: Exclude<PortalResourceType, 'Patient'>;
  /** Search parameters beside the patient. */
  params?: string;
  /** Observation's category, which decides vital sign or test result. */
  category?: string;
  what: string;
}

export const PORTAL_READS: readonly PortalRead[] = [
  { key: 'vital-signs', type: 'Observation', params: 'category=vital-signs', category: 'vital-signs', what: 'vital signs' },
  { key: 'laboratory', type: 'Observation', params: 'category=laboratory', category: 'laboratory', what: 'test results' },
  { key: 'MedicationRequest', type: 'MedicationRequest', what: 'the medication list' },
  { key: 'MedicationStatement', type: 'MedicationStatement', what: 'the medications they report taking' },
  { key: 'Condition', type: 'Condition', what: 'conditions' },
  { key: 'AllergyIntolerance', type: 'AllergyIntolerance', what: 'allergies' },
  { key: 'Encounter', type: 'Encounter', what: 'past visits' },
  { key: 'Appointment', type: 'Appointment', what: 'appointments' },
  { key: 'Immunization', type: 'Immunization', what: 'immunizations' },
];

/** A resource as the sync keeps it: its type, id and version, the rest as the portal sent it. */
export type FhirResource = {
  resourceType: string;
  id: string;
  meta?: { versionId?: string | undefined; lastUpdated?: string | undefined } | undefined;
} & Record<string, unknown>;

const cap = (s: string, max = 200) => (s.length > max ? `${s.slice(0, max - 1)}…` : s);
const str = (v: unknown): string | undefined => (typeof v === 'string' && v.trim() ? cap(v.trim()) : undefined);
const text = (cc: unknown): string | undefined => {
  const c = cc as { text?: unknown; coding?: { display?: unknown; code?: unknown }[] } | undefined;
  return str(c?.text) ?? str(c?.coding?.find((x) => str(x.display))?.display) ?? str(c?.coding?.[0]?.code);
};
const code = (cc: unknown, system?: string): string | undefined =>
  str((cc as { coding?: { system?: unknown; code?: unknown }[] } | undefined)?.coding?.find((x) => (system ? x.system === system : str(x.code)))?.code);
const when = (...vs: unknown[]): Date | undefined => {
  for (const v of vs) {
    const d = typeof v === 'string' ? new Date(v) : undefined;
    if (d && !Number.isNaN(d.getTime())) return d;
  }
  return undefined;
};
const isoDay = (...vs: unknown[]) =>
  when(...vs)
    ?.toISOString()
    .slice(0, 10);
const start = (period: unknown) => (period as { start?: unknown } | undefined)?.start;
const first = (v: unknown): unknown => (Array.isArray(v) ? v[0] : undefined);
const display = (ref: unknown): string | undefined => str((ref as { display?: unknown } | undefined)?.display);
const opt = <K extends string>(key: K, v: string | undefined) => (v ? ({ [key]: v } as Record<K, string>) : {});

/** One measured part of a panel (blood pressure's systolic and diastolic), as the charts read it. */
interface Component {
  loinc?: string;
  amount: number;
  unit: string;
}

/** "76 /min", "142/88 mmHg" (a panel's components, kept each with its code), "Positive". */
function observationValue(r: FhirResource): { value?: string; amount?: number; unit?: string; components?: Component[] } {
  const q = r.valueQuantity as { value?: number; unit?: string; code?: string } | undefined;
  if (typeof q?.value === 'number') {
    const unit = q.unit ?? q.code ?? '';
    return { value: cap(`${q.value}${unit ? ` ${unit}` : ''}`), amount: q.value, unit };
  }
  const parts = (Array.isArray(r.component) ? r.component : []) as { code?: unknown; valueQuantity?: { value?: number; unit?: string; code?: string } }[];
  const components = parts.slice(0, 10).flatMap((p): Component[] => {
    const v = p.valueQuantity;
    if (typeof v?.value !== 'number') return [];
    const loinc = code(p.code, 'http://loinc.org');
    return [{ ...(loinc ? { loinc } : {}), amount: v.value, unit: cap(v.unit ?? v.code ?? '') }];
  });
  if (components.length) {
    const unit = components[0]!.unit;
    return { value: cap(`${components.map((c) => c.amount).join('/')}${unit ? ` ${unit}` : ''}`), components };
  }
  const v = text(r.valueCodeableConcept) ?? str(r.valueString);
  return v ? { value: v } : {};
}

const ENCOUNTER_CLASSES: Record<string, string> = {
  AMB: 'Office visit',
  EMER: 'Emergency visit',
  IMP: 'Hospital stay',
  ACUTE: 'Hospital stay',
  OBSENC: 'Observation stay',
  HH: 'Home visit',
  VR: 'Virtual visit',
};

/** The event type, payload and time of one resource; null for one that cannot be placed on a timeline. */
function eventOf(
  portalName: string,
  r: FhirResource,
  category: string | undefined,
): { eventType: string; occurredAt: Date | undefined; payload: Record<string, unknown> } | null {
  const status = str(r.status) ?? 'unknown';
  switch (r.resourceType) {
    case 'MedicationRequest':
    case 'MedicationStatement': {
      const dosage = str((first(r.dosageInstruction ?? r.dosage) as { text?: unknown } | undefined)?.text);
      return {
        eventType: 'portal_medication',
        occurredAt: when(r.authoredOn, r.effectiveDateTime, start(r.effectivePeriod), r.dateAsserted),
        payload: {
          portal_name: portalName,
          medication: text(r.medicationCodeableConcept) ?? display(r.medicationReference) ?? 'A medication',
          status,
          ...opt('dosage', dosage),
          resource: r.resourceType,
        },
      };
    }
    case 'Condition':
      return {
        eventType: 'portal_condition',
        occurredAt: when(r.recordedDate, r.onsetDateTime, start(r.onsetPeriod)),
        payload: {
          portal_name: portalName,
          name: text(r.code) ?? 'A condition',
          clinical_status: code(r.clinicalStatus) ?? code(r.verificationStatus) ?? 'unknown',
          ...opt('onset', isoDay(r.onsetDateTime, start(r.onsetPeriod))),
          ...opt('code', code(r.code)),
        },
      };
    case 'AllergyIntolerance': {
      const reaction = first(r.reaction) as { substance?: unknown; manifestation?: unknown[] } | undefined;
      const manifestations = (Array.isArray(reaction?.manifestation) ? reaction.manifestation : []).map(text).filter(Boolean);
      return {
        eventType: 'portal_allergy',
        occurredAt: when(r.recordedDate, r.onsetDateTime),
        payload: {
          portal_name: portalName,
          substance: text(r.code) ?? text(reaction?.substance) ?? 'A substance',
          clinical_status: code(r.clinicalStatus) ?? code(r.verificationStatus) ?? 'unknown',
          ...opt('criticality', str(r.criticality)),
          ...opt('reaction', manifestations.length ? cap(manifestations.join(', ')) : undefined),
        },
      };
    }
    case 'Encounter': {
      const cls = r.class as { code?: unknown; display?: unknown } | undefined;
      const place = display((first(r.location) as { location?: unknown } | undefined)?.location) ?? display(r.serviceProvider);
      return {
        eventType: 'portal_encounter',
        occurredAt: when(start(r.period)),
        payload: {
          portal_name: portalName,
          kind: text(first(r.type)) ?? str(cls?.display) ?? ENCOUNTER_CLASSES[String(cls?.code)] ?? 'Visit',
          status,
          ...opt('reason', text(first(r.reasonCode))),
          ...opt('place', place),
        },
      };
    }
    case 'Appointment': {
      const begins = when(r.start);
      // A proposed appointment without a time has no place on a timeline.
      if (!begins) return null;
      const place = (Array.isArray(r.participant) ? (r.participant as { actor?: { reference?: unknown; display?: unknown } }[]) : []).find((p) =>
        String(p.actor?.reference ?? '').startsWith('Location/'),
      )?.actor;
      return {
        eventType: 'portal_appointment',
        occurredAt: begins,
        payload: {
          portal_name: portalName,
          description: str(r.description) ?? text(first(r.serviceType)) ?? text(r.appointmentType) ?? 'An appointment',
          status,
          start: begins.toISOString(),
          ...opt('end', when(r.end)?.toISOString()),
          ...opt('place', display(place)),
        },
      };
    }
    case 'Immunization':
      return {
        eventType: 'portal_immunization',
        occurredAt: when(r.occurrenceDateTime, r.recorded),
        payload: { portal_name: portalName, vaccine: text(r.vaccineCode) ?? 'A vaccine', status },
      };
    case 'Observation': {
      const loinc = code(r.code, 'http://loinc.org');
      const { value, amount, unit, components } = observationValue(r);
      return {
        eventType: category === 'vital-signs' ? 'portal_vital' : 'portal_result',
        occurredAt: when(r.effectiveDateTime, start(r.effectivePeriod), r.issued),
        payload: {
          portal_name: portalName,
          category: category ?? 'observation',
          name: text(r.code) ?? 'A result',
          ...opt('loinc', loinc),
          ...opt('value', value),
          ...(amount !== undefined ? { amount, unit: unit ?? '' } : {}),
          ...(components ? { components } : {}),
          status,
        },
      };
    }
    default:
      return null;
  }
}

/** The connection a resource came through: the portal (its name and base URL) and the loved one. */
export interface PortalSource {
  name: string;
  base: string;
  lovedOneId: string;
  workspaceId: string;
}

/** One resource as a care event: its own payload, its provenance, and an id from the (portal, resource, version) triple. */
export function toCareEvent(c: PortalSource, r: FhirResource, category: string | undefined, now: Date): PortalEvent | null {
  const event = eventOf(c.name, r, category);
  if (!event) return null;
  const versionId = r.meta?.versionId ?? r.meta?.lastUpdated ?? '1';
  const provenance = { portal: c.base, resourceType: r.resourceType, id: r.id, versionId };
  const _id = `portal_${createHash('sha256')
    .update(JSON.stringify([c.lovedOneId, c.base, r.resourceType, r.id, versionId]))
    .digest('base64url')
    .slice(0, 32)}`;
  return {
    _id,
    lovedOneId: c.lovedOneId,
    workspaceId: c.workspaceId,
    source: 'portal',
    receivedAt: now,
    provenance,
    eventType: event.eventType,
    occurredAt: event.occurredAt ?? when(r.meta?.lastUpdated) ?? now,
    payload: event.payload,
  };
}
