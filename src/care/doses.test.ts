// A dose the agency reports as refused or missed fills the daily time it was due, the way a
// refusal written in a note does, instead of leaving it "not recorded" with nothing said.
import { describe, expect, it } from 'vitest';
import type { CareEventRecord } from '../family/records.js';
import { doseRows, todaysDoses } from './doses.js';
import { clockIn } from './time.js';

const zone = 'America/Chicago';
const now = new Date('2026-11-20T23:00:00Z'); // 5 pm in Chicago
const clock = clockIn(zone, now);
let n = 0;
const event = (eventType: string, occurredAt: string, payload: Record<string, unknown>): CareEventRecord => ({
  _id: `evt_d${n++}`,
  lovedOneId: 'lo_d',
  workspaceId: 'ws_d',
  source: 'partner',
  institutionId: 'inst_d',
  subjectRef: 's',
  eventType,
  occurredAt: new Date(occurredAt),
  receivedAt: new Date(occurredAt),
  payload,
});
const given = (day: number) =>
  event('med_administered', `2026-11-${day}T14:05:00Z`, {
    medication_name: 'Metformin',
    dose_amount: 500,
    dose_unit: 'mg',
    administered_by: 'cg-1',
    scheduled_at: `2026-11-${day}T14:00:00Z`,
  });
const aide = () => 'an aide from Evergreen Home Care';

describe('doses reported as not given', () => {
  it('when the agency reports a dose refused and another missed, then each fills its daily time with what they said', () => {
    const history = [16, 17, 18].map(given);
    const refused = event('med_refused', '2026-11-19T14:20:00Z', {
      medication_name: 'Metformin',
      scheduled_at: '2026-11-19T14:00:00Z',
      reason: 'Said it upsets her stomach',
    });
    const missed = event('med_missed', '2026-11-20T15:30:00Z', { medication_name: 'Metformin', scheduled_at: '2026-11-20T14:00:00Z' });
    const rows = doseRows([...history, refused, missed], [], clock, new Date('2026-11-16T06:00:00Z'), now, aide);
    const at = (iso: string) => rows.filter((r) => (r.due ?? r.at).toISOString() === iso).map((r) => ({ state: r.state, note: r.note }));
    expect(at('2026-11-19T14:00:00.000Z')).toEqual([{ state: 'refused', note: 'Said it upsets her stomach' }]);
    expect(at('2026-11-20T14:00:00.000Z')).toEqual([{ state: 'not recorded', note: 'Reported as not given' }]);
    expect(todaysDoses(rows, clock, now).map((r) => r.state)).toEqual(['not recorded']);
    // Each report is listed once: in its slot, not again beside it.
    expect(rows.filter((r) => r.noteId === refused._id)).toHaveLength(1);
  });
});
