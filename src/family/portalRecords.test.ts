// The clinicians' list beside the family's: how names match and which differences are said.
import { describe, expect, it } from 'vitest';
import { compareMedications, medicationKey, type PortalMedication } from './portalRecords.js';

const portal = (name: string, status: string): PortalMedication => ({
  name,
  status,
  resource: 'MedicationRequest',
  portal: 'Northside Health',
  recordId: name,
});

describe('portal records - the clinicians list beside the family schedule', () => {
  it('portal records - names match on the first word, in any case and without accents', () => {
    expect(medicationKey('Metoprolol tartrate 25 mg tablet')).toBe('metoprolol');
    expect(medicationKey('  METOPROLOL')).toBe('metoprolol');
    expect(medicationKey('Ácido fólico 1 mg')).toBe('acido');
  });

  it('portal records - a medication restarted on the portal counts as active; on hold is said as such; stopped on both sides is no difference', () => {
    const rows = compareMedications(
      [{ name: 'Warfarin' }, { name: 'Lisinopril', amount: '10 mg' }],
      [portal('Warfarin 2 mg', 'stopped'), portal('Warfarin 3 mg', 'active'), portal('Lisinopril 10 mg', 'on-hold'), portal('Aspirin', 'stopped')],
    );
    expect(rows.map((r) => [r.key, r.difference?.words ?? null])).toEqual([
      ['lisinopril', "The doctor's list says Lisinopril is on hold; the family still schedules it"],
      ['warfarin', null],
    ]);
    expect(rows[1]!.portal!.name).toBe('Warfarin 3 mg');
  });
});
