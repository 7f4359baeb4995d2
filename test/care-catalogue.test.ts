// The catalogue of care-event types is the one source of ingest's payload checks, the app's
// timeline groups and wording, and the workspace's lines and tallies: the three say the same.
import { describe as group, expect, it } from 'vitest';
import { describe, EVENT_GROUPS } from '../src/care/describe.js';
import { clockIn } from '../src/care/time.js';
import { CARE_EVENT_TYPES } from '../src/family/careEventTypes.js';
import type { CareEventRecord } from '../src/family/records.js';
import { KNOWN_EVENT_TYPES, parseEvent } from '../src/ingest/envelope.js';
import { eventLine, tally } from '../src/workspace/careReader.js';

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
      visits: { label: 'Visits', types: ['visit_started', 'visit_ended'] },
      medications: { label: 'Medications', types: ['med_administered'] },
      vitals: { label: 'Vital signs', types: ['vital_recorded'] },
      notes: { label: 'Notes', types: ['note_added'] },
      mail: { label: 'Inbox mail', types: ['inbox_message'] },
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
});
