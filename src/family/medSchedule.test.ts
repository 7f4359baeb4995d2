// A medication list's times are wall-clock times in the loved one's zone: 8 am stays 8 am across
// both daylight-saving changes, and each of today's doses is matched to what was recorded.
import { describe, expect, it } from 'vitest';
import type { CareEventRecord } from './records.js';
import { dosesOn, todaysListDoses, wallInstant, weekdayOf, type Scheduled } from './medSchedule.js';

const NY = 'America/New_York';
const med = (times: string[], extra: Partial<Scheduled> = {}): Scheduled => ({
  medicationId: 'med_1',
  name: 'Metformin',
  amount: '500 mg',
  schedule: { asNeeded: false, times, days: [], timeZone: NY },
  ...extra,
});
const iso = (d: Date[]) => d.map((x) => x.toISOString());

describe('medication schedule - daylight-saving changes in New York', () => {
  it('when the clocks spring forward on Mar 8, 2026, then 1 am is EST, 8 am and 8 pm are EDT, and the skipped 2:30 am is taken at 3:30 am', () => {
    expect(weekdayOf('2026-03-08')).toBe('sun');
    expect(iso(dosesOn(med(['01:00', '08:00', '20:00']), '2026-03-08'))).toEqual([
      '2026-03-08T06:00:00.000Z',
      '2026-03-08T12:00:00.000Z',
      '2026-03-09T00:00:00.000Z',
    ]);
    expect(wallInstant(NY, '2026-03-08', '02:30').toISOString()).toBe('2026-03-08T07:30:00.000Z');
    // The day before and after keep their own offsets.
    expect(iso(dosesOn(med(['08:00']), '2026-03-07'))).toEqual(['2026-03-07T13:00:00.000Z']);
    expect(iso(dosesOn(med(['08:00']), '2026-03-09'))).toEqual(['2026-03-09T12:00:00.000Z']);
  });

  it('when the clocks fall back on Nov 1, 2026, then 8 am is EST, the repeated 1:30 am is its first occurrence, and 11 pm is 4 am UTC', () => {
    expect(weekdayOf('2026-11-01')).toBe('sun');
    expect(iso(dosesOn(med(['08:00', '23:00']), '2026-11-01'))).toEqual(['2026-11-01T13:00:00.000Z', '2026-11-02T04:00:00.000Z']);
    expect(wallInstant(NY, '2026-11-01', '01:30').toISOString()).toBe('2026-11-01T05:30:00.000Z');
    expect(iso(dosesOn(med(['08:00']), '2026-10-31'))).toEqual(['2026-10-31T12:00:00.000Z']);
  });

  it('when a schedule names weekdays, start and stop dates or is as needed, then only those days have doses', () => {
    const weekly = med(['09:00'], { schedule: { asNeeded: false, times: ['09:00'], days: ['mon', 'thu'], timeZone: NY } });
    expect(dosesOn(weekly, '2026-11-02')).toHaveLength(1); // Monday
    expect(dosesOn(weekly, '2026-11-03')).toHaveLength(0);
    expect(dosesOn(med(['09:00'], { startDate: '2026-11-05' }), '2026-11-04')).toHaveLength(0);
    expect(dosesOn(med(['09:00'], { stopDate: '2026-11-05' }), '2026-11-06')).toHaveLength(0);
    expect(dosesOn(med(['09:00'], { stoppedAt: new Date('2026-11-05T15:00:00Z') }), '2026-11-05')).toHaveLength(1);
    expect(dosesOn(med(['09:00', '20:00'], { stoppedAt: new Date('2026-11-05T15:00:00Z') }), '2026-11-05')).toHaveLength(1);
    expect(dosesOn(med([], { schedule: { asNeeded: true, times: [], days: [], timeZone: NY } }), '2026-11-05')).toHaveLength(0);
  });
});

let n = 0;
const event = (eventType: string, occurredAt: string, payload: Record<string, unknown>, source: string = 'partner'): CareEventRecord =>
  ({
    _id: `evt_m${n++}`,
    lovedOneId: 'lo_m',
    workspaceId: 'ws_m',
    source,
    eventType,
    occurredAt: new Date(occurredAt),
    receivedAt: new Date(occurredAt),
    payload,
  }) as CareEventRecord;

describe("medication schedule - today's dose states", () => {
  const who = (e: CareEventRecord) => ((e.source as string) === 'family' ? 'Ana, in the app' : 'an aide');
  const four = med(['08:00', '12:00', '17:00', '20:00']);

  it('when the spring-forward day has an agency dose, a family refusal, a reported miss and one past its grace, then each shows its state', () => {
    const now = new Date('2026-03-08T22:30:00Z'); // 6:30 pm EDT
    const rows = todaysListDoses(
      [four],
      [
        event('med_administered', '2026-03-08T12:04:00Z', { medication_name: 'metformin', scheduled_at: '2026-03-08T12:00:00Z' }),
        event('med_refused', '2026-03-08T16:10:00Z', { medication_name: 'Metformin', scheduled_at: '2026-03-08T16:00:00Z', reason: 'Felt sick' }, 'family'),
        // Another medication's dose at the same time fills nothing here.
        event('med_administered', '2026-03-09T00:00:00Z', { medication_name: 'Lisinopril', scheduled_at: '2026-03-09T00:00:00Z' }),
      ],
      now,
      who,
    );
    expect(rows.map((r) => [r.due.toISOString(), r.state, r.by ?? null])).toEqual([
      ['2026-03-08T12:00:00.000Z', 'given', 'an aide'],
      ['2026-03-08T16:00:00.000Z', 'refused', 'Ana, in the app'],
      ['2026-03-08T21:00:00.000Z', 'missed', null],
      ['2026-03-09T00:00:00.000Z', 'due', null],
    ]);
    expect(rows[1]!.note).toBe('Felt sick');
  });

  it('when the fall-back day has a dose given without scheduled_at and one reported missed, then they match by name and nearest time', () => {
    const now = new Date('2026-11-01T21:30:00Z'); // 4:30 pm EST
    const rows = todaysListDoses(
      [four],
      [
        event('med_administered', '2026-11-01T13:20:00Z', { medication_name: 'Metformin' }, 'family'),
        event('med_missed', '2026-11-01T17:30:00Z', { medication_name: 'Metformin', scheduled_at: '2026-11-01T17:00:00Z' }),
      ],
      now,
      who,
    );
    expect(rows.map((r) => [r.due.toISOString(), r.state])).toEqual([
      ['2026-11-01T13:00:00.000Z', 'given'],
      ['2026-11-01T17:00:00.000Z', 'missed'],
      ['2026-11-01T22:00:00.000Z', 'due'],
      ['2026-11-02T01:00:00.000Z', 'due'],
    ]);
  });

  it('when a dose is 59 minutes late, then it is still due; at 61 minutes it is missed; a medication may set its own grace', () => {
    const due = new Date('2026-11-05T13:00:00Z');
    const at = (min: number, extra: Partial<Scheduled> = {}) =>
      todaysListDoses([med(['08:00'], extra)], [], new Date(due.getTime() + min * 60_000), who).map((r) => r.state);
    expect(at(59)).toEqual(['due']);
    expect(at(61)).toEqual(['missed']);
    expect(at(61, { graceMinutes: 120 })).toEqual(['due']);
  });
});
