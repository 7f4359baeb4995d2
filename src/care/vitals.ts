// Vital-sign readings as the care pages chart them: series by kind and unit, oldest first.
import type { AideNamer } from '../family/careEventTypes.js';
import type { CareEventRecord } from '../family/records.js';
import { readingText, unitText, VITAL_KINDS, vitalKind, type VitalKind } from '../family/vitalKinds.js';

export { readingText, vitalKind, type VitalKind };

const num = (v: unknown): number | null =>
  typeof v === 'number' && Number.isFinite(v) ? v : typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v)) ? Number(v) : null;

export interface Reading {
  at: Date;
  value: number;
  second?: number;
  /** The aide in words (never the agency's internal id). */
  by: string;
}

export interface VitalSeries {
  kind: VitalKind;
  unit: string;
  readings: Reading[];
}

/** Readings grouped by kind and unit (a kind sent in two units gets two charts: nothing is converted). */
export function seriesOf(events: CareEventRecord[], aide: AideNamer): VitalSeries[] {
  const groups = new Map<string, VitalSeries>();
  for (const e of events) {
    const value = num(e.payload.value);
    if (value === null) continue;
    const kind = vitalKind(e.payload.vital_type);
    const unit = unitText(e.payload.unit);
    const id = `${kind.key}|${unit}`;
    const series = groups.get(id) ?? { kind, unit, readings: [] };
    groups.set(id, series);
    const second = num(e.payload.secondary_value);
    series.readings.push({ at: e.occurredAt, value, ...(second === null ? {} : { second }), by: aide(e) });
  }
  const order = (s: VitalSeries) => {
    const i = VITAL_KINDS.findIndex((k) => k.key === s.kind.key);
    return i < 0 ? VITAL_KINDS.length : i;
  };
  return [...groups.values()]
    .map((s) => ({ ...s, readings: s.readings.sort((a, b) => a.at.getTime() - b.at.getTime()) }))
    .sort((a, b) => order(a) - order(b) || a.kind.label.localeCompare(b.kind.label));
}
