// The alert rules on records, without a server: which note texts raise an alert (the reviewed word
// list, negations and harmless phrases), which readings fall outside the family's range, which
// visits are late, and what a range or a preference refuses, naming the field.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CARE_EVENT_TYPES } from '../family/careEventTypes.js';
import { DAY_NOTED } from '../family/entries.js';
import type { CareEventRecord } from '../family/records.js';
import { defaultPreferences, parsePreferences, PreferenceInvalid, quietUntil } from './preferences.js';
import { parseRange, RangeInvalid } from './ranges.js';
import { mayRaiseAlert } from '../family/alerting.js';
import { recordRules } from './rules.js';

const at = new Date('2026-11-27T10:00:00Z');
const event = (eventType: string, payload: Record<string, unknown>, source: CareEventRecord['source'] = 'partner'): CareEventRecord => ({
  _id: `ev-${Math.random().toString(36).slice(2)}`,
  lovedOneId: 'lo-1',
  workspaceId: 'ws-1',
  source,
  eventType,
  occurredAt: at,
  receivedAt: at,
  payload,
});
const kindsOf = (e: CareEventRecord, ranges = [] as Parameters<typeof recordRules>[1]) => recordRules(e, ranges).map((c) => `${c.kind}: ${c.what}`);
const note = (text: string) => event('note_added', { caregiver_id: 'cg-1', note_text: text });

describe('alert rules - note texts', () => {
  it.each([
    ['She fell in the bathroom this morning.', 'a note mentions a fall'],
    ['Found on the floor by the bed at 7.', 'a note mentions a fall'],
    ['Taken to the hospital by her son.', 'a note mentions a hospital visit'],
    ['We called 911 and the ambulance came.', 'a note mentions an emergency'],
    ['Dressed the wound on her left shin.', 'a note mentions a wound or injury'],
    ['Slipped and went to the ER.', 'a note mentions a fall and a hospital visit'],
  ])('when a note says "%s", then it alerts: %s', (text, what) => {
    expect(kindsOf(note(text))).toEqual([`flagged_note: ${what}`]);
  });

  it.each([
    'She fell asleep after lunch.',
    'No falls this week.',
    'Has not fallen since the rails went in.',
    'The hospital bed was delivered.',
    'Lovely walk in the fall weather.',
    'Refused her Metformin, said it upsets her stomach.',
  ])('when a note says "%s", then it raises no alert', (text) => {
    expect(kindsOf(note(text))).toEqual([]);
  });

  it('when a family member writes how the day went, then its text is read too; a correction is not news of its own', () => {
    expect(kindsOf(event('day_noted', { text: 'A difficult day: she fell in the garden.' }, 'family'))).toEqual(['flagged_note: a note mentions a fall']);
    expect(recordRules({ ...note('She fell again.'), supersedes: 'ev-0' }, [])).toEqual([]);
  });
});

describe('alert rules - readings, visits and mail', () => {
  const pulse = (value: number, unit = '/min') => event('vital_recorded', { vital_type: 'heart_rate', value, unit, recorded_by: 'cg-1' });
  const ranges = [{ vital: 'pulse', unit: '/min', low: 50, high: 110 }];

  it('when a reading falls outside the range the family set, then it alerts; inside, in another unit, or with no range, it does not', () => {
    expect(kindsOf(pulse(120), ranges)).toEqual(['out_of_range: a pulse reading of 120 /min is outside the range the family set']);
    expect(kindsOf(pulse(45), ranges)).toHaveLength(1);
    expect(kindsOf(pulse(80), ranges)).toEqual([]);
    expect(kindsOf(pulse(120, 'bpm'), ranges)).toEqual([]);
    expect(kindsOf(pulse(200))).toEqual([]);
  });

  it('when a visit starts 30 minutes or more after its scheduled start, then it alerts; a little late does not', () => {
    const visit = (late: number) =>
      event('visit_started', {
        caregiver_id: 'cg-1',
        scheduled_start: '2026-11-27T09:00:00Z',
        actual_start: new Date(Date.parse('2026-11-27T09:00:00Z') + late * 60_000).toISOString(),
      });
    expect(kindsOf(visit(45))).toEqual(['late_visit: a visit started 45 minutes late']);
    expect(kindsOf(visit(20))).toEqual([]);
  });

  it('when mail arrives in the inbox, then the inbox rule decides it once per message', () => {
    const mail = event('inbox_message', { from: 'clinic@example.com', subject: 'Results' }, 'inbox');
    expect(recordRules(mail, []).map((c) => c.key)).toEqual([`inbox_mail:${mail._id}`]);
  });
});

describe('alert settings - refusals name the field', () => {
  const problem = (f: () => unknown, type: typeof RangeInvalid | typeof PreferenceInvalid) => {
    try {
      f();
    } catch (err) {
      expect(err).toBeInstanceOf(type);
      return (err as Error).message;
    }
    throw new Error('not refused');
  };

  it('when a range is upside down, implausible, or of an unknown kind or unit, then it is refused naming the field', () => {
    expect(problem(() => parseRange('pulse', '/min', 100, 60), RangeInvalid)).toBe('low: must be below the high value (60)');
    expect(problem(() => parseRange('pulse', '/min', 10, 60), RangeInvalid)).toMatch(/^low: must be between 25 and 250/);
    expect(problem(() => parseRange('glucose', 'mg/dL', 70, 5000), RangeInvalid)).toMatch(/^high: must be between 20 and 700/);
    expect(problem(() => parseRange('mood', '/min', 1, 2), RangeInvalid)).toMatch(/^vital: must be one of/);
    expect(problem(() => parseRange('weight', 'stone', 1, 2), RangeInvalid)).toBe('unit: must be one of kg, lb for Weight');
    expect(problem(() => parseRange('pulse', '/min', undefined, undefined), RangeInvalid)).toMatch(/^low: give a low or a high/);
    expect(parseRange('pulse', '/min', undefined, 110)).toEqual({ vital: 'pulse', unit: '/min', high: 110 });
  });

  it('when quiet hours, the zone, a mode or the digest hour make no sense, then preferences are refused naming each field', () => {
    const ok = defaultPreferences('Europe/Lisbon');
    expect(problem(() => parsePreferences({ ...ok, quiet: { start: '22:00', end: '22:00' } }), PreferenceInvalid)).toMatch(/^quiet\.end: must differ/);
    expect(problem(() => parsePreferences({ ...ok, quiet: { start: '25:00', end: '07:00' } }), PreferenceInvalid)).toMatch(/^quiet\.start: must be a time/);
    expect(problem(() => parsePreferences({ ...ok, zone: 'Atlantis/Capital' }), PreferenceInvalid)).toMatch(/^zone: is not a time zone/);
    expect(problem(() => parsePreferences({ ...ok, modes: { ...ok.modes, missed_dose: 'hourly' } }), PreferenceInvalid)).toMatch(/^modes\.missed_dose:/);
    expect(problem(() => parsePreferences({ ...ok, digestHour: 24 }), PreferenceInvalid)).toMatch(/^digestHour: must be an hour/);
  });

  it('when an alert falls in quiet hours that cross midnight, then it waits until they end in the member zone', () => {
    const p = { ...defaultPreferences('America/New_York'), quiet: { start: '22:00', end: '07:00' } };
    // 03:30 UTC is 22:30 in New York (EST): held until 07:00 there, 12:00 UTC.
    expect(quietUntil(p, new Date('2026-11-27T03:30:00Z'))?.toISOString()).toBe('2026-11-27T12:00:00.000Z');
    expect(quietUntil(p, new Date('2026-11-27T15:00:00Z'))).toBeNull();
  });

  it('when a member never chose, then missed doses and falls come right away and the rest weekly, on Sunday at 18:00', () => {
    expect(defaultPreferences()).toMatchObject({
      modes: { missed_dose: 'now', flagged_note: 'now', out_of_range: 'weekly', appointment_tomorrow: 'weekly', task_unclaimed: 'weekly', inbox_mail: 'never' },
      digestDay: 'sun',
      digestHour: 18,
      quiet: null,
    });
  });
});

describe('alert rules - what may raise an alert, known from the record alone', () => {
  const words = ['She fell', 'found on the floor', 'hospital', 'called 911', 'wound', 'did not fall', 'lunch eaten', 'walked', 'fine', 'ER visit', ''];
  const text = fc.array(fc.constantFrom(...words), { maxLength: 4 }).map((w) => w.join('. '));
  const vital = fc.constantFrom('pulse', 'blood_pressure', 'weight', 'temperature', 'glucose', 'spo2');
  const unit = fc.constantFrom('/min', 'mmHg', 'kg', '°C', 'mg/dL', '%');
  const instant = fc.integer({ min: -3 * 3_600_000, max: 3 * 3_600_000 }).map((d) => new Date(at.getTime() + d).toISOString());
  const payload = fc.record(
    {
      note_text: text,
      text,
      caregiver_id: fc.constant('cg-1'),
      vital_type: vital,
      value: fc.double({ min: -10, max: 300, noNaN: true }),
      unit,
      scheduled_start: instant,
      actual_start: instant,
      comment: text,
    },
    { requiredKeys: [] },
  );
  const record = fc
    .tuple(
      fc.constantFrom(...Object.keys(CARE_EVENT_TYPES), DAY_NOTED, 'inbox_message', 'fall_reported', 'x.custom'),
      payload,
      fc.constantFrom<CareEventRecord['source']>('partner', 'family', 'inbox', 'portal'),
    )
    .map(([type, p, source]) => event(type, p, source));
  const ranges = fc.array(
    fc.record({ vital, unit, low: fc.double({ min: -10, max: 300, noNaN: true }), high: fc.double({ min: -10, max: 300, noNaN: true }) }),
    {
      maxLength: 4,
    },
  );

  it('when any rule raises an alert on a record, for any ranges a family set, then the record was said to be one that may', () => {
    fc.assert(
      fc.property(record, ranges, (e, r) => {
        if (recordRules(e, r).length) expect(mayRaiseAlert(e)).toBe(true);
      }),
      { numRuns: 3000 },
    );
  });

  it('when a record is routine (an on-time visit, a dose given, a calm note), then it is not one that may', () => {
    expect(mayRaiseAlert(event('visit_started', { caregiver_id: 'cg-1', scheduled_start: at.toISOString(), actual_start: at.toISOString() }))).toBe(false);
    expect(mayRaiseAlert(event('med_administered', { medication_name: 'Metoprolol', dose_amount: 25, dose_unit: 'mg', administered_by: 'cg-1' }))).toBe(false);
    expect(mayRaiseAlert(note('Lunch eaten, a short walk in the garden.'))).toBe(false);
    expect(mayRaiseAlert(note('She fell in the garden.'))).toBe(true);
    expect(mayRaiseAlert(event('vital_recorded', { vital_type: 'pulse', value: 72, unit: '/min', recorded_by: 'cg-1' }))).toBe(true);
  });
});
