// What puts an entry at the top of a loved one's page: the reviewed flag words (phrases that must
// and must not flag, an unknown type read by its name and fields), readings outside a family's
// ranges, and visit times with no visit started.
import { describe, expect, it } from 'vitest';
import { readingItems, visitItems, type FamilyRange } from '../src/care/attention.js';
import { clockIn } from '../src/care/time.js';
import { flaggableText, flaggedReasons } from '../src/family/careEventTypes.js';
import type { CareEventRecord } from '../src/family/records.js';

const event = (eventType: string, payload: Record<string, unknown>): CareEventRecord =>
  ({ eventType, payload, occurredAt: new Date('2026-11-23T10:15:00Z'), lovedOneId: 'lo-1' }) as unknown as CareEventRecord;

describe('care attention - the reviewed flag words', () => {
  it.each([
    ['Found her on the bathroom floor, she had slipped getting out of the shower.', 'fall'],
    ['Mrs. Lopez fell in the kitchen around 9, no visible injury.', 'fall'],
    ['Had a fall on the stairs this morning.', 'fall'],
    ['Taken to the hospital by her son after lunch.', 'hospital'],
    ['Went to the ER overnight for stomach pain.', 'hospital'],
    ['Called 911 when she could not stand.', 'emergency'],
    ['Ambulance came at 3 pm.', 'emergency'],
    ['Dressed the wound on her left shin.', 'injury'],
    ['Large bruise on her right arm.', 'injury'],
    ['Complained of chest pain during the walk.', 'breathing or chest pain'],
    ['Short of breath climbing the stairs.', 'breathing or chest pain'],
    ['She fainted in the living room.', 'sudden change'],
    ['Refused her evening Metformin, said it upsets her stomach.', 'refusal'],
    ['She would not take the 8 pm tablets.', 'refusal'],
    ['Ate little and then fell near the door.', 'fall'],
  ])('when a note says %j, then it is flagged for %s', (text, reason) => {
    expect(flaggedReasons(text)).toContain(reason);
  });

  // A word list errs towards flagging: "the hospital drama on TV" is flagged, and read in a second.
  it.each([
    'No falls this week.',
    'Denies any falls or pain.',
    'She has not fallen since the new rug.',
    'Fell asleep in her chair after lunch.',
    'We will fall back on the paper schedule if the app is down.',
    'Made her a hospital appointment reminder card.',
    'No injury, no bruising, skin intact.',
    'Ate a full breakfast and walked to the mailbox.',
    'Took all her medicines with water.',
    'Her mood declined slightly in the afternoon but she enjoyed the music.',
    'She did not refuse anything today.',
    'Emerging from a nap, she asked for tea.',
    'Her hero is Paul Erdős.',
  ])('when a note says %j, then nothing is flagged', (text) => {
    expect(flaggedReasons(text)).toEqual([]);
  });

  it('when an event of a type the catalogue does not know names a fall, then it is flagged by its name; a known routine type is not read', () => {
    expect(flaggedReasons(flaggableText(event('fall_reported', { severity: 'minor' }))!)).toEqual(['fall']);
    expect(flaggedReasons(flaggableText(event('door_alarm', { zone: 'back door' }))!)).toEqual([]);
    expect(flaggableText(event('med_administered', { medication_name: 'Emergency inhaler' }))).toBeNull();
    expect(flaggedReasons(flaggableText(event('note_added', { note_text: 'fine', structured_summary: 'Possible fall overnight' }))!)).toEqual(['fall']);
  });
});

describe('care attention - readings and visits', () => {
  const clock = clockIn('UTC', new Date('2026-11-23T12:00:00Z'));
  const aide = () => 'an aide from Evergreen Home Care';
  const at = (iso: string, eventType: string, payload: Record<string, unknown>) => ({ ...event(eventType, payload), occurredAt: new Date(iso) });

  it('when a family sets a range, then a reading outside it needs attention; with no ranges, none does', () => {
    const glucose = at('2026-11-23T07:23:00Z', 'vital_recorded', { vital_type: 'blood_sugar', value: 188, unit: 'mg/dL', recorded_by: 'cg-2210' });
    const pulse = at('2026-11-23T07:21:00Z', 'vital_recorded', { vital_type: 'pulse', value: 72, unit: '/min', recorded_by: 'cg-2210' });
    expect(readingItems([glucose, pulse], [], aide)).toEqual([]);
    const ranges: FamilyRange[] = [
      { kind: 'glucose', unit: 'mg/dL', low: 70, high: 180 },
      { kind: 'pulse', unit: '/min', low: 50, high: 100 },
    ];
    expect(readingItems([glucose, pulse], ranges, aide)).toEqual([
      { at: glucose.occurredAt, kind: 'reading', text: 'Blood glucose 188 mg/dL, above your 180', detail: 'Recorded by an aide from Evergreen Home Care' },
    ]);
    // A reading in another unit is not compared with a range it was not set in.
    expect(readingItems([{ ...glucose, payload: { ...glucose.payload, unit: 'mmol/L', value: 10.4 } }], ranges, aide)).toEqual([]);
  });

  it('when a visit time kept on other days has no visit started an hour after it, then it needs attention', () => {
    const visit = (day: string) =>
      at(`${day}T07:02:00Z`, 'visit_started', { caregiver_id: 'cg-2210', scheduled_start: `${day}T07:00:00Z`, actual_start: `${day}T07:02:00Z` });
    const past = [visit('2026-11-21'), visit('2026-11-22')];
    expect(visitItems(past, clock, new Date('2026-11-23T07:30:00Z'))).toEqual([]);
    expect(visitItems(past, clock, new Date('2026-11-23T08:30:00Z'))).toEqual([
      expect.objectContaining({ kind: 'visit', text: 'No visit started for 7:00 am', at: new Date('2026-11-23T07:00:00Z') }),
    ]);
    expect(visitItems([...past, visit('2026-11-23')], clock, new Date('2026-11-23T08:30:00Z'))).toEqual([]);
  });
});
