// The reviewed words that put a note at the top of a loved one's page: phrases that must and must
// not flag, and an event of a type the catalogue does not know read by its name and fields.
import { describe, expect, it } from 'vitest';
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
