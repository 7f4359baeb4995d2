/**
 * The long-term-care cost figures: ./data/costs.json (CareScout Cost of Care Survey medians;
 * provenance in ./data/COSTS_SOURCES.md), its schema, and `loadCostData()`, which reads and
 * validates that file once.
 */
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { STATES } from './states.js';

export const CARE_TYPES = [
  'homemaker',
  'home_health_aide',
  'adult_day',
  'assisted_living',
  'nursing_home_semi_private',
  'nursing_home_private',
] as const;

export type CareType = (typeof CARE_TYPES)[number];

export type RateUnit = 'hour' | 'day' | 'month';

/** The unit each care type is priced in; the data file must agree. */
const EXPECTED_UNIT: Record<CareType, RateUnit> = {
  homemaker: 'hour',
  home_health_aide: 'hour',
  adult_day: 'day',
  assisted_living: 'month',
  nursing_home_semi_private: 'month',
  nursing_home_private: 'month',
};

const careTypeEnum = z.enum(CARE_TYPES);
const surveyYear = z.number().int().min(2004).max(2100);
const money = z.number().positive().finite();

const careTypeInfoSchema = z.strictObject({
  label: z.string().min(1),
  unit: z.enum(['hour', 'day', 'month']),
});

const stateEntrySchema = z.strictObject({
  name: z.string().min(1),
  /** Survey year of this state's figures. */
  year: surveyYear,
  /** Where the figures were published. */
  source: z.url(),
  /** Where they were transcribed from, when that differs from `source`. */
  via: z.url().optional(),
  /** `null` = no figure could be found; the calculator falls back to the national median. */
  rates: z.record(careTypeEnum, money.nullable()),
});

export const costDataSchema = z
  .strictObject({
    source: z.strictObject({
      name: z.string().min(1),
      publisher: z.string().min(1),
      url: z.url(),
      note: z.string(),
    }),
    careTypes: z.record(careTypeEnum, careTypeInfoSchema),
    national: z.strictObject({
      year: surveyYear,
      source: z.url(),
      rates: z.record(careTypeEnum, money),
    }),
    states: z.record(z.string().regex(/^[A-Z]{2}$/), stateEntrySchema),
    growth: z.strictObject({
      defaultAnnualIncreasePct: z.number().min(0).max(15),
      basis: z.string().min(1),
      source: z.url(),
    }),
    inHomeDefaults: z.strictObject({
      hoursPerWeek: z.number().min(1).max(168),
      weeksPerYear: z.number().min(1).max(52),
    }),
    adultDayDefaults: z.strictObject({
      daysPerWeek: z.number().min(1).max(7),
    }),
  })
  .superRefine((data, ctx) => {
    for (const t of CARE_TYPES) {
      if (data.careTypes[t].unit !== EXPECTED_UNIT[t]) {
        ctx.addIssue({
          code: 'custom',
          path: ['careTypes', t, 'unit'],
          message: `${t} must be priced per ${EXPECTED_UNIT[t]}`,
        });
      }
    }
    const known = new Set(STATES.map((s) => s.code));
    for (const s of STATES) {
      const entry = data.states[s.code];
      if (!entry) {
        ctx.addIssue({ code: 'custom', path: ['states', s.code], message: `missing ${s.name}` });
      } else if (entry.name !== s.name) {
        ctx.addIssue({
          code: 'custom',
          path: ['states', s.code, 'name'],
          message: `expected "${s.name}"`,
        });
      }
    }
    for (const code of Object.keys(data.states)) {
      if (!known.has(code)) {
        ctx.addIssue({ code: 'custom', path: ['states', code], message: 'not a US state or DC' });
      }
    }
  });

export type CostData = z.infer<typeof costDataSchema>;

let cached: CostData | undefined;

/** Reads and validates ./data/costs.json once; later calls return the same object. */
export function loadCostData(): CostData {
  if (!cached) {
    const raw = readFileSync(new URL('./data/costs.json', import.meta.url), 'utf8');
    cached = costDataSchema.parse(JSON.parse(raw));
  }
  return cached;
}
