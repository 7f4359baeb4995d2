// A few days of an agency's care as the family trial saw them, in a zone where it is about noon
// now (so "today" has doses given, missed, refused and still due whatever time the test runs):
// daily Lisinopril, Metoprolol and Metformin, visits, readings, a note, and a fall.

/** A fixed-offset zone where the time now is between 11:30 am and 12:30 pm. */
export function noonZone(now: Date): { zone: string; offsetHours: number } {
  const off = Math.round(12 - (now.getUTCHours() + now.getUTCMinutes() / 60));
  // Etc/GMT names count the other way: Etc/GMT-9 is nine hours ahead of UTC.
  return { zone: off === 0 ? 'UTC' : `Etc/GMT${off > 0 ? '-' : '+'}${Math.abs(off)}`, offsetHours: off };
}

export interface TrialEvent {
  event_type: string;
  occurred_at: string;
  payload: Record<string, unknown>;
  source_event_id: string;
}

/** The agency's events; `at(back, hh, mm)` is the instant of hh:mm local time `back` days ago. */
export function trialEvents(now: Date): { events: TrialEvent[]; at: (back: number, hh: number, mm: number) => Date; zone: string } {
  const { zone, offsetHours } = noonZone(now);
  const local = new Date(now.getTime() + offsetHours * 3_600_000);
  const at = (back: number, hh: number, mm: number) =>
    new Date(Date.UTC(local.getUTCFullYear(), local.getUTCMonth(), local.getUTCDate() - back, hh - offsetHours, mm));
  const iso = (back: number, hh: number, mm: number) => at(back, hh, mm).toISOString();
  const ana = { caregiver_id: 'cg-2210', caregiver_name: 'Ana Souza' };
  const events: Omit<TrialEvent, 'source_event_id'>[] = [];
  const dose = (back: number, hh: number, name: string, amount: number, unit: string) =>
    events.push({
      event_type: 'med_administered',
      occurred_at: iso(back, hh, 4),
      payload: {
        medication_name: name,
        dose_amount: amount,
        dose_unit: unit,
        administered_by: 'cg-2210',
        caregiver_name: 'Ana Souza',
        scheduled_at: iso(back, hh, 0),
      },
    });
  for (const back of [3, 2, 1, 0]) {
    events.push({
      event_type: 'visit_started',
      occurred_at: iso(back, 6, 55),
      payload: { ...ana, scheduled_start: iso(back, 7, 0), actual_start: iso(back, 6, 55) },
    });
    dose(back, 7, 'Lisinopril', 10, 'mg');
    // Today's 8 am Metoprolol and the one two days ago were never recorded.
    if (back !== 0 && back !== 2) dose(back, 8, 'Metoprolol', 25, 'mg');
    // Today's 9 am Metformin was refused: the aide wrote it in a note, not as a dose.
    if (back !== 0) dose(back, 9, 'Metformin', 500, 'mg');
    if (back !== 0) dose(back, 18, 'Metformin', 500, 'mg');
    events.push(
      {
        event_type: 'vital_recorded',
        occurred_at: iso(back, 7, 20),
        payload: {
          vital_type: 'blood_pressure',
          value: 142 - back * 3,
          secondary_value: 88 - back,
          unit: 'mmHg',
          recorded_by: 'cg-2210',
          caregiver_name: 'Ana Souza',
        },
      },
      {
        event_type: 'vital_recorded',
        occurred_at: iso(back, 7, 21),
        payload: { vital_type: 'pulse', value: 72 + back, unit: '/min', recorded_by: 'cg-2210', caregiver_name: 'Ana Souza' },
      },
      {
        event_type: 'vital_recorded',
        occurred_at: iso(back, 7, 23),
        payload: { vital_type: 'glucose', value: back === 0 ? 188 : 120 + back, unit: 'mg/dL', recorded_by: 'cg-2210', caregiver_name: 'Ana Souza' },
      },
    );
    events.push({ event_type: 'visit_ended', occurred_at: iso(back, 10, 30), payload: { ...ana, actual_end: iso(back, 10, 30), duration_minutes: 215 } });
  }
  events.push(
    { event_type: 'note_added', occurred_at: iso(0, 9, 10), payload: { ...ana, note_text: 'Refused her Metformin, said it upsets her stomach.' } },
    // An aide sent without a display name: the family sees the agency's name, never the id.
    {
      event_type: 'note_added',
      occurred_at: iso(0, 10, 20),
      payload: { caregiver_id: 'cg-1043', note_text: 'Ate a full breakfast and walked to the mailbox.' },
    },
    // A type the catalogue does not know: shown as an other update, and flagged by its name.
    {
      event_type: 'fall_reported',
      occurred_at: iso(0, 10, 40),
      payload: { severity: 'minor', reported_by: 'cg-1043', description: 'Slipped getting up from her chair.' },
    },
  );
  return { events: events.map((e, i) => ({ ...e, source_event_id: `trial-${i}` })), at, zone };
}
