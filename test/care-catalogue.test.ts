// The catalogue of care-event types is the one source of ingest's payload checks, the app's
// timeline groups and wording, and the workspace's lines and tallies: the three say the same.
import { describe as group, expect, it } from 'vitest';
import { describe, EVENT_GROUPS } from '../src/care/describe.js';
import { clockIn } from '../src/care/time.js';
import { CARE_EVENT_TYPES } from '../src/family/careEventTypes.js';
import type { CareEventRecord } from '../src/family/records.js';
import { KNOWN_EVENT_TYPES, parseEvent } from '../src/ingest/envelope.js';
import { eventLine, tally, wordsIn } from '../src/workspace/careReader.js';

const occurredAt = new Date('2026-11-23T10:15:00Z');
const event = (eventType: string, payload: Record<string, unknown>): CareEventRecord =>
  ({ eventType, payload, occurredAt, lovedOneId: 'lo-1' }) as unknown as CareEventRecord;
const utc = clockIn('UTC', occurredAt);

group('care catalogue - one declaration of each care-event type', () => {
  it('when ingest checks a payload, then the types and schemas are the catalogue’s partner types', () => {
    expect(KNOWN_EVENT_TYPES.sort()).toEqual(
      Object.entries(CARE_EVENT_TYPES)
        .flatMap(([t, d]) => ('payload' in d ? [t] : []))
        .sort(),
    );
    const bad = parseEvent({
      institution_id: 'i',
      subject_ref: 's',
      event_type: 'vital_recorded',
      occurred_at: '2026-11-23T10:15:00Z',
      payload: { vital_type: 'pulse', unit: 'bpm', recorded_by: 'Ana' },
    });
    expect(bad).toEqual({ ok: false, message: expect.stringContaining('payload.value') });
  });

  it('when an event type is named like a property every object has, then ingest keeps it as an unknown type', () => {
    expect(parseEvent({ institution_id: 'i', subject_ref: 's', event_type: 'constructor', occurred_at: '2026-11-23T10:15:00Z', payload: {} }).ok).toBe(true);
  });

  it('when the app filters by group, then each group holds the catalogue’s types of that group', () => {
    expect(EVENT_GROUPS).toEqual({
      visits: { label: 'Visits', types: ['visit_started', 'visit_ended', 'portal_encounter', 'portal_appointment'] },
      medications: { label: 'Medications', types: ['med_administered', 'med_missed', 'med_refused', 'portal_medication'] },
      vitals: { label: 'Vital signs', types: ['vital_recorded', 'portal_vital'] },
      notes: { label: 'Notes', types: ['note_added', 'day_noted', 'entry_withdrawn'] },
      mail: { label: 'Inbox mail', types: ['inbox_message'] },
      results: { label: 'Test results', types: ['portal_result'] },
      plans: { label: 'Appointments and tasks', types: ['appointment', 'task_done'] },
      record: { label: 'Health record', types: ['portal_condition', 'portal_allergy', 'portal_immunization'] },
    });
  });

  it('when the app and the workspace word a vital sign, then both name its kind and unit alike', () => {
    const e = event('vital_recorded', { vital_type: 'heart_rate', value: 72, unit: '/min', recorded_by: 'Ana' });
    expect(describe(e, utc).summary).toBe('Pulse 72 /min');
    expect(eventLine(e)).toBe('- Mon, Nov 23, 2026, 10:15 am: Pulse 72 /min, recorded by Ana');
  });

  it('when the app and the workspace word a finished visit, then both give its length in hours and minutes', () => {
    const e = event('visit_ended', { caregiver_id: 'Ana', actual_end: '2026-11-23T10:15:00Z', duration_minutes: 195 });
    expect(describe(e, utc).summary).toBe('Visit by Ana, 7:00–10:15 am, 3 h 15 min');
    expect(eventLine(e)).toBe('- Mon, Nov 23, 2026, 10:15 am: Visit by Ana ended after 3 h 15 min');
  });

  it('when events are tallied, then they count under the catalogue’s groups, unknown types as other', () => {
    const events = [event('med_administered', {}), event('med_administered', {}), event('fall_reported', { severity: 'minor' }), event('inbox_message', {})];
    expect(tally(events)).toBe('2 medications given, 1 other event, 1 inbox message');
    expect(eventLine(events[2]!)).toBe('- Mon, Nov 23, 2026, 10:15 am: Fall reported (Severity: minor)');
  });

  it('when a dose was missed or refused, then the app and the workspace word it so, and the tally counts it apart from doses given', async () => {
    const missed = event('med_missed', {
      medication_name: 'Metoprolol',
      dose_amount: 25,
      dose_unit: 'mg',
      scheduled_at: '2026-11-23T09:00:00Z',
      reported_by: 'Ana',
    });
    const refused = event('med_refused', { medication_name: 'Lisinopril', dose_amount: 10, dose_unit: 'mg', reported_by: 'Ben', reason: 'felt sick' });
    expect(describe(missed, utc).summary).toBe('Metoprolol 25 mg missed (scheduled for Mon, Nov 23, 9:00 am) at 10:15 am');
    expect(eventLine(missed)).toBe('- Mon, Nov 23, 2026, 10:15 am: Metoprolol 25 mg missed (scheduled for Mon, Nov 23, 2026, 9:00 am), reported by Ana');
    expect(eventLine(refused)).toBe('- Mon, Nov 23, 2026, 10:15 am: Lisinopril 10 mg refused, reported by Ben: felt sick');
    expect(parseEvent({ institution_id: 'i', subject_ref: 's', event_type: 'med_missed', occurred_at: '2026-11-23T10:15:00Z', payload: {} }).ok).toBe(true);
    expect(tally([event('med_administered', {}), missed, missed, refused])).toBe('1 medication given, 2 doses missed, 1 dose refused');
  });

  it('when a portal record is worded, then each type says what it is and which portal it came from, and the tally counts it by its kind', () => {
    const from = { portal_name: 'Northside Health' };
    const lines = [
      event('portal_condition', { ...from, name: 'Type 2 diabetes mellitus', clinical_status: 'active', onset: '2019-03-02', code: '44054006' }),
      event('portal_allergy', { ...from, substance: 'Penicillin', clinical_status: 'active', criticality: 'high', reaction: 'Hives' }),
      event('portal_encounter', { ...from, kind: 'Office visit', status: 'finished', reason: 'Blood pressure check', place: 'Northside Clinic' }),
      event('portal_appointment', { ...from, description: 'Cardiology follow-up', status: 'booked', start: '2026-11-23T10:15:00Z', place: 'Northside Clinic' }),
      event('portal_immunization', { ...from, vaccine: 'Influenza vaccine', status: 'completed' }),
      event('portal_medication', { ...from, medication: 'Aspirin 81 mg', status: 'active', resource: 'MedicationStatement' }),
    ];
    expect(lines.map((e) => eventLine(e))).toEqual([
      "- Mon, Nov 23, 2026, 10:15 am: Condition: Type 2 diabetes mellitus (active, since 2019-03-02), from Northside Health's portal",
      "- Mon, Nov 23, 2026, 10:15 am: Allergy to Penicillin (high risk), from Northside Health's portal",
      "- Mon, Nov 23, 2026, 10:15 am: Office visit at Northside Clinic, from Northside Health's portal",
      "- Mon, Nov 23, 2026, 10:15 am: Appointment: Cardiology follow-up at Northside Clinic (booked), from Northside Health's portal",
      "- Mon, Nov 23, 2026, 10:15 am: Immunization: Influenza vaccine, from Northside Health's portal",
      "- Mon, Nov 23, 2026, 10:15 am: Aspirin 81 mg reported as taken, from Northside Health's portal",
    ]);
    expect(describe(lines[1]!, utc).detail).toBe('Reaction: Hives');
    expect(tally(lines)).toBe("1 condition, 1 allergy, 1 clinic visit, 1 appointment, 1 immunization, 1 medication on the clinicians' list");
  });

  it('when the workspace words an event in a chosen zone, then the day and time are that zone’s', () => {
    const evening = { ...event('fall_reported', { severity: 'minor' }), occurredAt: new Date('2026-11-25T00:20:00Z') } as CareEventRecord;
    expect(wordsIn('America/Chicago').line(evening)).toBe('- Tue, Nov 24, 2026, 6:20 pm: Fall reported (Severity: minor)');
    expect(wordsIn('Not/AZone').zone).toBe('UTC');
  });
});
