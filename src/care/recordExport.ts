// A loved one's whole record as the primary caregiver takes it away: every care event (the
// agency's, the family's, the inbox's and the portal's), the medication list with its history,
// appointments and tasks, as plain JSON and as a FHIR R4 Bundle of type `collection`.
import { createHash } from 'node:crypto';
import type { Db } from 'mongodb';
import { careWords, type AideNamer, type WordsClock } from '../family/careEventTypes.js';
import { MedicationList, amountOf, changedByWords, type Medication, type MedicationVersion } from '../family/medications.js';
import { PlansStore, type AppointmentRecord, type TaskRecord } from '../family/plans.js';
import type { CareEventRecord, LovedOneRecord, WorkspaceStore } from '../family/records.js';
import { portalProvenance } from '../family/careEvents.js';
import { vitalKind } from '../family/vitalKinds.js';
import { clockIn } from './time.js';

/** Care events read for one export at most: past this the file says it stopped (`truncated`). */
export const MAX_EXPORT_EVENTS = 20_000;
const PAGE = 500;
const FAR_PAST = new Date(0);
const FAR_FUTURE = new Date('9999-12-31T00:00:00Z');

export interface CareRecord {
  exportedAt: Date;
  lovedOne: LovedOneRecord;
  events: CareEventRecord[];
  /** More events matched than `MAX_EXPORT_EVENTS`: the newest are in the file. */
  truncated: boolean;
  medications: Medication[];
  appointments: AppointmentRecord[];
  tasks: TaskRecord[];
}

/** Everything carecircle holds of a loved one. The caller checks that the reader may take it. */
export async function readCareRecord(store: WorkspaceStore, db: Db, lovedOne: LovedOneRecord, now: Date): Promise<CareRecord> {
  const events: CareEventRecord[] = [];
  let cursor: string | undefined;
  do {
    const page = await store.listCareEvents(lovedOne._id, { limit: PAGE, ...(cursor ? { cursor } : {}) });
    events.push(...page.events);
    cursor = page.nextCursor;
  } while (cursor && events.length < MAX_EXPORT_EVENTS);
  const plans = new PlansStore(db);
  const [medications, appointments, open, done] = await Promise.all([
    new MedicationList(db).list(lovedOne._id),
    plans.between(lovedOne._id, FAR_PAST, FAR_FUTURE, 5000),
    plans.openTasks(lovedOne._id, 5000),
    plans.doneSince(lovedOne._id, FAR_PAST, 5000),
  ]);
  return {
    exportedAt: now,
    lovedOne,
    events: events.slice(0, MAX_EXPORT_EVENTS),
    truncated: Boolean(cursor),
    medications,
    appointments,
    tasks: [...open, ...done],
  };
}

/** Events in words, times in UTC (the file is read anywhere). */
const UTC: WordsClock = clockIn('UTC');
const lineOf = (e: CareEventRecord, by: AideNamer) => careWords(e, UTC, by).line.slice(0, 2000);

// ---- Plain JSON ------------------------------------------------------------------------------

const plainEvent = (e: CareEventRecord, by: AideNamer) => ({
  id: e._id,
  source: e.source,
  eventType: e.eventType,
  occurredAt: e.occurredAt.toISOString(),
  receivedAt: e.receivedAt.toISOString(),
  summary: lineOf(e, by),
  ...(e.institutionId ? { institutionId: e.institutionId } : {}),
  ...(e.author ? { author: { name: e.author.name, via: e.author.via, ...(e.author.client ? { client: e.author.client } : {}) } } : {}),
  ...(e.provenance ? { provenance: e.provenance } : {}),
  ...(e.supersedes ? { supersedes: e.supersedes } : {}),
  payload: e.payload,
});

const plainMedication = (v: MedicationVersion) => {
  const { _id, workspaceId, lovedOneId, by, ...rest } = v;
  void _id;
  void workspaceId;
  void lovedOneId;
  return { ...rest, changedBy: changedByWords(by) };
};

/** The record as plain JSON: every field carecircle keeps that the family may read, times in ISO 8601 (UTC). */
export function recordAsJson(r: CareRecord, by: AideNamer): Record<string, unknown> {
  const omitIds = <T extends { workspaceId: string; lovedOneId: string }>(x: T) => {
    const { workspaceId, lovedOneId, ...rest } = x;
    void workspaceId;
    void lovedOneId;
    return rest;
  };
  return JSON.parse(
    JSON.stringify({
      format: 'carecircle-record',
      version: 1,
      exportedAt: r.exportedAt,
      lovedOne: { id: r.lovedOne._id, name: r.lovedOne.displayName, firstName: r.lovedOne.firstName, lastName: r.lovedOne.lastName },
      ...(r.truncated ? { truncated: `Only the newest ${MAX_EXPORT_EVENTS} care events are in this file.` } : {}),
      careEvents: r.events.map((e) => plainEvent(e, by)),
      medications: r.medications.map((m) => ({ ...plainMedication(m.current), history: m.history.map(plainMedication) })),
      appointments: r.appointments.map(omitIds),
      tasks: r.tasks.map(omitIds),
    }),
  ) as Record<string, unknown>;
}

// ---- FHIR R4 ---------------------------------------------------------------------------------

type Fhir = Record<string, unknown> & { resourceType: string };

const LOINC = 'http://loinc.org';
const ID_SYSTEM = 'urn:carecircle';
const OBSERVATION_CATEGORY = 'http://terminology.hl7.org/CodeSystem/observation-category';
const FHIR_ID = /^[A-Za-z0-9\-.]{1,64}$/;

/** A stable `urn:uuid:` for one of carecircle's records (the Bundle's entries refer to each other by it). */
function uuidOf(kind: string, id: string): string {
  const h = createHash('sha256').update(`${kind}|${id}`).digest('hex');
  return `urn:uuid:${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-${((parseInt(h[16]!, 16) & 0x3) | 0x8).toString(16)}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/** A FHIR id (letters, digits, `-` and `.`, at most 64) from one of carecircle's ids. */
const fhirId = (id: string) => id.replace(/[^A-Za-z0-9\-.]/g, '-').slice(0, 64);

const str = (v: unknown): string | undefined => (typeof v === 'string' && v.trim() ? v.trim() : undefined);
const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
const oneOf = <T extends string>(v: unknown, allowed: readonly T[], fallback: T): T => (allowed.includes(v as T) ? (v as T) : fallback);
const quantity = (value: number, unit: unknown) => ({ value, ...(str(unit) ? { unit: str(unit) } : {}) });
const loincConcept = (code: string | undefined, text: string) => ({ ...(code ? { coding: [{ system: LOINC, code, display: text }] } : {}), text });
const category = (code: string) => [{ coding: [{ system: OBSERVATION_CATEGORY, code }] }];

function observationStatus(v: unknown) {
  return oneOf(v, ['registered', 'preliminary', 'final', 'amended', 'corrected', 'cancelled', 'entered-in-error', 'unknown'] as const, 'unknown');
}

/** Blood pressure's two components, systolic and diastolic. */
const bpComponents = (systolic: number, diastolic: number | undefined, unit: unknown) => [
  { code: loincConcept('8480-6', 'Systolic blood pressure'), valueQuantity: quantity(systolic, unit) },
  ...(diastolic !== undefined ? [{ code: loincConcept('8462-4', 'Diastolic blood pressure'), valueQuantity: quantity(diastolic, unit) }] : []),
];

/** What every resource made from a care event carries: its id, where it came from, the loved one. */
function fromEvent(e: CareEventRecord): { id: string; identifier: { system: string; value: string }[]; meta?: Record<string, unknown> } {
  const identifier = [{ system: `${ID_SYSTEM}:care-event`, value: e._id }];
  const p = portalProvenance(e);
  if (!p) return { id: fhirId(e._id), identifier };
  // A portal record keeps the portal's own id and version beside carecircle's.
  return {
    id: fhirId(e._id),
    identifier: [...identifier, { system: p.portal, value: `${p.resourceType}/${p.id}` }],
    meta: { source: p.portal, ...(FHIR_ID.test(p.versionId) ? { versionId: p.versionId } : {}) },
  };
}

function eventResource(e: CareEventRecord, patient: { reference: string }, aide: AideNamer): Fhir {
  const p = e.payload;
  const by = aide(e);
  const note = [{ text: lineOf(e, aide) }];
  const base = fromEvent(e);
  const at = e.occurredAt.toISOString();
  switch (e.eventType) {
    case 'vital_recorded': {
      const kind = vitalKind(p.vital_type);
      const value = num(p.value);
      const second = num(p.secondary_value);
      return {
        resourceType: 'Observation',
        ...base,
        status: 'final',
        category: category('vital-signs'),
        code: loincConcept(kind.loinc, kind.label),
        subject: patient,
        effectiveDateTime: at,
        performer: [{ display: by }],
        ...(value === undefined ? { note } : kind.pair ? { component: bpComponents(value, second, p.unit) } : { valueQuantity: quantity(value, p.unit) }),
      };
    }
    case 'med_administered':
    case 'med_refused':
    case 'med_missed': {
      const amount = num(p.dose_amount);
      return {
        resourceType: 'MedicationAdministration',
        ...base,
        status: e.eventType === 'med_administered' ? 'completed' : 'not-done',
        ...(e.eventType === 'med_administered' ? {} : { statusReason: [{ text: e.eventType === 'med_refused' ? 'Refused' : 'Missed' }] }),
        medicationCodeableConcept: { text: str(p.medication_name) ?? str(p.medication) ?? 'A medication' },
        subject: patient,
        effectiveDateTime: at,
        performer: [{ actor: { display: by } }],
        ...(amount !== undefined ? { dosage: { dose: quantity(amount, p.dose_unit) } } : {}),
        note,
      };
    }
    case 'note_added':
    case 'day_noted':
    case 'inbox_message':
      return {
        resourceType: 'Communication',
        ...base,
        status: 'completed',
        category: [{ text: e.eventType === 'inbox_message' ? 'Mail to the family inbox' : 'Care note' }],
        subject: patient,
        sent: at,
        sender: { display: e.eventType === 'inbox_message' ? (str(p.from) ?? 'an unknown sender') : by },
        payload: [
          {
            contentString:
              e.eventType === 'inbox_message'
                ? [str(p.subject) ?? '(no subject)', str(p.excerpt)].filter(Boolean).join('\n\n')
                : (str(p.note_text) ?? str(p.text) ?? lineOf(e, aide)),
          },
        ],
      };
    case 'visit_started':
    case 'visit_ended':
      return {
        resourceType: 'Encounter',
        ...base,
        status: e.eventType === 'visit_started' ? 'in-progress' : 'finished',
        class: { system: 'http://terminology.hl7.org/CodeSystem/v3-ActCode', code: 'HH', display: 'home health' },
        subject: patient,
        participant: [{ individual: { display: by } }],
        period: e.eventType === 'visit_started' ? { start: at } : { end: at },
      };
    case 'portal_vital':
    case 'portal_result': {
      const amount = num(p.amount);
      const components = Array.isArray(p.components) ? (p.components as { loinc?: unknown; amount?: unknown; unit?: unknown }[]) : [];
      const systolic = num(components.find((c) => c?.loinc === '8480-6')?.amount);
      return {
        resourceType: 'Observation',
        ...base,
        status: observationStatus(p.status),
        category: category(str(p.category) ?? (e.eventType === 'portal_vital' ? 'vital-signs' : 'laboratory')),
        code: loincConcept(str(p.loinc), str(p.name) ?? 'An observation'),
        subject: patient,
        effectiveDateTime: at,
        ...(systolic !== undefined
          ? { component: bpComponents(systolic, num(components.find((c) => c?.loinc === '8462-4')?.amount), components[0]?.unit ?? p.unit) }
          : amount !== undefined
            ? { valueQuantity: quantity(amount, p.unit) }
            : str(p.value)
              ? { valueString: str(p.value) }
              : {}),
      };
    }
    case 'portal_medication': {
      const medication = { text: str(p.medication) ?? 'A medication' };
      const dosage = str(p.dosage) ? [{ text: str(p.dosage) }] : undefined;
      if (p.resource === 'MedicationStatement')
        return {
          resourceType: 'MedicationStatement',
          ...base,
          status: oneOf(p.status, ['active', 'completed', 'entered-in-error', 'intended', 'stopped', 'on-hold', 'unknown', 'not-taken'] as const, 'unknown'),
          medicationCodeableConcept: medication,
          subject: patient,
          effectiveDateTime: at,
          ...(dosage ? { dosage } : {}),
        };
      return {
        resourceType: 'MedicationRequest',
        ...base,
        status: oneOf(p.status, ['active', 'on-hold', 'cancelled', 'completed', 'entered-in-error', 'stopped', 'draft', 'unknown'] as const, 'unknown'),
        intent: 'order',
        medicationCodeableConcept: medication,
        subject: patient,
        authoredOn: at,
        ...(dosage ? { dosageInstruction: dosage } : {}),
      };
    }
    case 'portal_condition': {
      const status = str(p.clinical_status);
      const onset = str(p.onset);
      return {
        resourceType: 'Condition',
        ...base,
        ...(status && ['active', 'recurrence', 'relapse', 'inactive', 'remission', 'resolved'].includes(status)
          ? { clinicalStatus: { coding: [{ system: 'http://terminology.hl7.org/CodeSystem/condition-clinical', code: status }] } }
          : {}),
        code: { text: str(p.name) ?? 'A condition' },
        subject: patient,
        ...(onset ? (/^\d{4}(-\d{2}(-\d{2})?)?$/.test(onset) ? { onsetDateTime: onset } : { onsetString: onset }) : {}),
        recordedDate: at,
      };
    }
    case 'portal_allergy': {
      const status = str(p.clinical_status);
      const reaction = str(p.reaction);
      return {
        resourceType: 'AllergyIntolerance',
        ...base,
        ...(status && ['active', 'inactive', 'resolved'].includes(status)
          ? { clinicalStatus: { coding: [{ system: 'http://terminology.hl7.org/CodeSystem/allergyintolerance-clinical', code: status }] } }
          : {}),
        ...(['low', 'high', 'unable-to-assess'].includes(str(p.criticality) ?? '') ? { criticality: str(p.criticality) } : {}),
        code: { text: str(p.substance) ?? 'A substance' },
        patient,
        recordedDate: at,
        ...(reaction ? { reaction: [{ manifestation: [{ text: reaction }] }] } : {}),
      };
    }
    default:
      // Anything else (a visit's withdrawal, a portal encounter, a type this version does not know)
      // goes as a document: its words, and the payload as sent.
      return {
        resourceType: 'DocumentReference',
        ...base,
        status: 'current',
        type: { text: e.eventType },
        subject: patient,
        date: at,
        description: lineOf(e, aide),
        content: [{ attachment: { contentType: 'application/json', data: Buffer.from(JSON.stringify(e.payload)).toString('base64'), title: e.eventType } }],
      };
  }
}

function medicationStatement(m: Medication, patient: { reference: string }): Fhir {
  const v = m.current;
  const s = v.schedule;
  const when = s.asNeeded ? 'as needed' : `at ${s.times.join(', ')}${s.days.length ? ` on ${s.days.join(', ')}` : ' every day'} (${s.timeZone})`;
  const dose = [amountOf(v), v.form, v.route].filter(Boolean).join(', ');
  return {
    resourceType: 'MedicationStatement',
    id: fhirId(v.medicationId),
    identifier: [{ system: `${ID_SYSTEM}:medication`, value: v.medicationId }],
    status: v.status === 'active' ? 'active' : 'stopped',
    medicationCodeableConcept: { text: v.name },
    subject: patient,
    ...(v.startDate || v.stopDate ? { effectivePeriod: { ...(v.startDate ? { start: v.startDate } : {}), ...(v.stopDate ? { end: v.stopDate } : {}) } } : {}),
    dateAsserted: v.at.toISOString(),
    informationSource: { display: changedByWords(v.by) },
    dosage: [{ text: `${dose ? `${dose}, ` : ''}${when}`, ...(s.asNeeded ? { asNeededBoolean: true } : {}), ...(v.route ? { route: { text: v.route } } : {}) }],
    ...(v.note || v.stopReason || v.prescriber
      ? {
          note: [
            ...(v.prescriber ? [{ text: `Prescribed by ${v.prescriber}` }] : []),
            ...(v.note ? [{ text: v.note }] : []),
            ...(v.stopReason ? [{ text: `Stopped: ${v.stopReason}` }] : []),
          ],
        }
      : {}),
  };
}

function appointmentResource(a: AppointmentRecord, patient: { reference: string }): Fhir {
  return {
    resourceType: 'Appointment',
    id: fhirId(a._id),
    identifier: [{ system: `${ID_SYSTEM}:appointment`, value: a._id }],
    status: a.status === 'cancelled' ? 'cancelled' : 'booked',
    ...(a.cancelReason ? { cancelationReason: { text: a.cancelReason } } : {}),
    description: a.title,
    start: a.start.toISOString(),
    end: a.end.toISOString(),
    created: a.createdAt.toISOString(),
    ...(a.notes || a.place ? { comment: [a.place ? `At ${a.place}` : '', a.notes ?? ''].filter(Boolean).join('. ') } : {}),
    participant: [{ actor: patient, status: 'accepted' }, ...(a.withWhom ? [{ actor: { display: a.withWhom }, status: 'accepted' }] : [])],
  };
}

function taskResource(t: TaskRecord, patient: { reference: string }): Fhir {
  return {
    resourceType: 'Task',
    id: fhirId(t._id),
    identifier: [{ system: `${ID_SYSTEM}:task`, value: t._id }],
    status: t.state === 'done' ? 'completed' : t.state === 'taken' ? 'in-progress' : 'requested',
    intent: 'order',
    description: t.title,
    for: patient,
    authoredOn: t.createdAt.toISOString(),
    lastModified: t.updatedAt.toISOString(),
    restriction: { period: { end: t.due.toISOString() } },
    ...(t.notes ? { note: [{ text: t.notes }] } : {}),
  };
}

/**
 * The record as a FHIR R4 Bundle of type `collection`: the loved one as a Patient; vital signs as
 * Observations (LOINC-coded), doses as MedicationAdministrations, notes and inbox mail as
 * Communications, visits as Encounters, the family's medication list as MedicationStatements,
 * appointments and tasks as themselves; portal records as the resource they came from (rebuilt
 * from what the sync keeps, with the portal's id in `identifier` and `meta.source`).
 */
export function recordAsFhir(r: CareRecord, by: AideNamer): Fhir {
  const patientUrl = uuidOf('loved-one', r.lovedOne._id);
  const patient = { reference: patientUrl };
  const entry = (kind: string, id: string, resource: Fhir) => ({ fullUrl: kind === 'loved-one' ? patientUrl : uuidOf(kind, id), resource });
  return {
    resourceType: 'Bundle',
    type: 'collection',
    timestamp: r.exportedAt.toISOString(),
    entry: [
      entry('loved-one', r.lovedOne._id, {
        resourceType: 'Patient',
        id: fhirId(r.lovedOne._id),
        identifier: [{ system: `${ID_SYSTEM}:loved-one`, value: r.lovedOne._id }],
        name: [{ text: r.lovedOne.displayName, given: [r.lovedOne.firstName], family: r.lovedOne.lastName }],
      }),
      ...r.events.map((e) => entry('care-event', e._id, eventResource(e, patient, by))),
      ...r.medications.map((m) => entry('medication', m.current.medicationId, medicationStatement(m, patient))),
      ...r.appointments.map((a) => entry('appointment', a._id, appointmentResource(a, patient))),
      ...r.tasks.map((t) => entry('task', t._id, taskResource(t, patient))),
    ],
  };
}
