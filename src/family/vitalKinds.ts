// Vital-sign kinds as partners name them: the label a family reads, the LOINC code (for a later
// FHIR mapping; docs in care-domain research) and units written for people (UCUM codes mapped).

export interface VitalKind {
  key: string;
  label: string;
  loinc?: string;
  /** Blood pressure carries systolic in `value` and diastolic in `secondary_value`. */
  pair?: [string, string];
}

export const VITAL_KINDS: readonly VitalKind[] = [
  { key: 'blood_pressure', label: 'Blood pressure', loinc: '85354-9', pair: ['Systolic', 'Diastolic'] },
  { key: 'pulse', label: 'Pulse', loinc: '8867-4' },
  { key: 'temperature', label: 'Temperature', loinc: '8310-5' },
  { key: 'oxygen_saturation', label: 'Oxygen saturation', loinc: '59408-5' },
  { key: 'weight', label: 'Weight', loinc: '29463-7' },
  { key: 'glucose', label: 'Blood glucose', loinc: '2339-0' },
  { key: 'respiratory_rate', label: 'Breathing rate', loinc: '9279-1' },
];

const ALIASES: Record<string, string> = {
  bp: 'blood_pressure',
  heart_rate: 'pulse',
  hr: 'pulse',
  body_temperature: 'temperature',
  temp: 'temperature',
  spo2: 'oxygen_saturation',
  o2_saturation: 'oxygen_saturation',
  oxygen: 'oxygen_saturation',
  body_weight: 'weight',
  blood_glucose: 'glucose',
  blood_sugar: 'glucose',
  respiration: 'respiratory_rate',
};

const UNITS: Record<string, string> = {
  'mm[Hg]': 'mmHg',
  '/min': '/min',
  Cel: '°C',
  C: '°C',
  '[degF]': '°F',
  F: '°F',
  '[lb_av]': 'lb',
  '[in_i]': 'in',
  'kg/m2': 'kg/m²',
};

const slug = (s: string) =>
  s
    .trim()
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_|_$/g, '');

/** The kind of a partner's `vital_type`; an unknown one becomes its own kind, labelled from its name. */
export function vitalKind(vitalType: unknown): VitalKind {
  const key = slug(String(vitalType ?? '')) || 'unnamed';
  const known = VITAL_KINDS.find((k) => k.key === (ALIASES[key] ?? key));
  if (known) return known;
  const label = key.replace(/_/g, ' ');
  return { key, label: label.charAt(0).toUpperCase() + label.slice(1) };
}

export const unitText = (unit: unknown): string => (typeof unit === 'string' ? (UNITS[unit.trim()] ?? unit.trim()) : '');

/** "142/88 mmHg", "72 /min", "37.1 °C". */
export function readingText(kind: VitalKind, value: unknown, second: unknown, unit: unknown): string {
  const u = unitText(unit);
  const v = `${String(value ?? '?')}${second !== undefined && second !== null && kind.pair ? `/${String(second)}` : ''}`;
  return u ? `${v} ${u}` : v;
}
