// Vital-sign readings as the care pages chart them: series by kind and unit, oldest first, the
// agency's, the family's and the health-system portal's in one series when kind and unit agree.
import type { AideNamer } from '../family/careEventTypes.js';
import { portalReadingsOf } from '../family/portalRecords.js';
import type { CareEventRecord } from '../family/records.js';
import { readingText, unitText, VITAL_KINDS, vitalKind, type VitalKind } from '../family/vitalKinds.js';

export { readingText, vitalKind, type VitalKind };

const num = (v: unknown): number | null =>
  typeof v === 'number' && Number.isFinite(v) ? v : typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v)) ? Number(v) : null;

export interface Reading {
  at: Date;
  value: number;
  second?: number;
  /** The aide in words (never the agency's internal id), or the portal it came from. */
  by: string;
  /** The portal's name, for a reading from the loved one's health-system portal. */
  portal?: string;
}

export interface VitalSeries {
  kind: VitalKind;
  unit: string;
  readings: Reading[];
}

/** Readings grouped by kind and unit (a kind sent in two units gets two charts: nothing is
 *  converted). `vital_recorded` events by their `vital_type`; portal observations by LOINC code. */
export function seriesOf(events: CareEventRecord[], aide: AideNamer): VitalSeries[] {
  const groups = new Map<string, VitalSeries>();
  const add = (kind: VitalKind, unitSent: unknown, reading: Reading) => {
    const unit = unitText(unitSent);
    const id = `${kind.key}|${unit}`;
    const series = groups.get(id) ?? { kind, unit, readings: [] };
    groups.set(id, series);
    series.readings.push(reading);
  };
  for (const r of portalReadingsOf(events))
    add(r.kind, r.unit, { at: r.at, value: r.value, ...(r.second === undefined ? {} : { second: r.second }), by: `${r.portal}'s portal`, portal: r.portal });
  for (const e of events) {
    if (e.eventType !== 'vital_recorded') continue;
    const value = num(e.payload.value);
    if (value === null) continue;
    const second = num(e.payload.secondary_value);
    add(vitalKind(e.payload.vital_type), e.payload.unit, { at: e.occurredAt, value, ...(second === null ? {} : { second }), by: aide(e) });
  }
  const order = (s: VitalSeries) => {
    const i = VITAL_KINDS.findIndex((k) => k.key === s.kind.key);
    return i < 0 ? VITAL_KINDS.length : i;
  };
  return [...groups.values()]
    .map((s) => ({ ...s, readings: s.readings.sort((a, b) => a.at.getTime() - b.at.getTime()) }))
    .sort((a, b) => order(a) - order(b) || a.kind.label.localeCompare(b.kind.label));
}
