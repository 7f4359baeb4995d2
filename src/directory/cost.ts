/**
 * Long-term-care cost calculator behind the directory tool
 * `calculate_long_term_care_cost`.
 *
 * The figures live in ./data/costs.json (CareScout Cost of Care Survey medians;
 * provenance in ./data/COSTS_SOURCES.md). `loadCostData()` reads and validates
 * that file once; `calculateLongTermCareCost()` is pure and does no I/O.
 */
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { STATES, resolveState } from './states.js';

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

// ---------------------------------------------------------------------------
// Data file schema
// ---------------------------------------------------------------------------

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

// ---------------------------------------------------------------------------
// Tool input
// ---------------------------------------------------------------------------

const STATE_HELP =
  'a two-letter USPS code (e.g. "TX") or a full state name (e.g. "Texas"); the 50 states and DC are covered';

export const costInputSchema = z.strictObject({
  careType: z.enum(CARE_TYPES, {
    error: () => `careType must be one of: ${CARE_TYPES.join(', ')}`,
  }),
  state: z
    .string({ error: `state must be a string: ${STATE_HELP}` })
    .optional()
    .superRefine((value, ctx) => {
      if (value !== undefined && !resolveState(value)) {
        ctx.addIssue({
          code: 'custom',
          message: `state "${value}" is not recognised: use ${STATE_HELP}; omit state for national figures`,
        });
      }
    }),
  hoursPerWeek: z
    .number({ error: 'hoursPerWeek must be a number between 1 and 168' })
    .min(1, 'hoursPerWeek must be between 1 and 168')
    .max(168, 'hoursPerWeek must be between 1 and 168')
    .optional(),
  daysPerWeek: z
    .number({ error: 'daysPerWeek must be a number between 1 and 7' })
    .min(1, 'daysPerWeek must be between 1 and 7')
    .max(7, 'daysPerWeek must be between 1 and 7')
    .optional(),
  years: z
    .number({ error: 'years must be a whole number between 1 and 30' })
    .int('years must be a whole number between 1 and 30')
    .min(1, 'years must be between 1 and 30')
    .max(30, 'years must be between 1 and 30')
    .default(1),
  annualIncreasePct: z
    .number({ error: 'annualIncreasePct must be a number between 0 and 15' })
    .min(0, 'annualIncreasePct must be between 0 and 15')
    .max(15, 'annualIncreasePct must be between 0 and 15')
    .optional(),
});

export type CostInput = z.infer<typeof costInputSchema>;

// ---------------------------------------------------------------------------
// Calculation
// ---------------------------------------------------------------------------

export interface CostEstimate {
  careType: CareType;
  careTypeLabel: string;
  location: { scope: 'national' | 'state'; code?: string; name: string };
  rate: { amount: number; unit: RateUnit };
  dataYear: number;
  source: { name: string; url: string };
  assumptions: { hoursPerWeek?: number; daysPerWeek?: number; annualIncreasePct: number; years: number };
  monthly: number;
  annual: number;
  perYear: { year: number; annual: number }[];
  total: number;
  notes: string[];
}

const usd = (n: number): string =>
  `$${n.toLocaleString('en-US', { maximumFractionDigits: 2, minimumFractionDigits: Number.isInteger(n) ? 0 : 2 })}`;

const dollars = (n: number): number => Math.round(n);

const firstSentence = (text: string): string => {
  const end = text.indexOf('; ');
  const stop = text.indexOf('. ');
  const cut = [end, stop].filter((i) => i > 0);
  return (cut.length ? text.slice(0, Math.min(...cut)) : text).replace(/\.$/, '');
};

/**
 * Estimates the private-pay cost of one kind of long-term care, now and over
 * `years` years. Money is computed in full precision and rounded to whole
 * dollars only in the result; `rate.amount` is the survey median as published.
 */
export function calculateLongTermCareCost(input: CostInput, data: CostData): CostEstimate {
  const careType = input.careType;
  const info = data.careTypes[careType];
  const unit = info.unit;
  const years = input.years ?? 1;
  const pct = input.annualIncreasePct ?? data.growth.defaultAnnualIncreasePct;
  const notes: string[] = [];

  // Where the rate comes from.
  let location: CostEstimate['location'] = { scope: 'national', name: 'United States' };
  let rate = data.national.rates[careType];
  let dataYear = data.national.year;
  let sourceUrl = data.national.source;

  if (input.state !== undefined) {
    const resolved = resolveState(input.state);
    if (!resolved) {
      throw new Error(`state "${input.state}" is not recognised: use ${STATE_HELP}`);
    }
    location = { scope: 'state', code: resolved.code, name: resolved.name };
    const entry = data.states[resolved.code];
    const stateRate = entry?.rates[careType];
    if (entry && stateRate != null) {
      rate = stateRate;
      dataYear = entry.year;
      sourceUrl = entry.source;
      if (entry.year < data.national.year) {
        notes.push(
          `${resolved.name}'s figures are from the ${entry.year} survey, the newest found for that state; ` +
            `the national figures are from ${data.national.year}.`,
        );
      }
    } else {
      notes.push(
        `No ${resolved.name} median for ${info.label.toLowerCase()} was found, so the national ` +
          `${data.national.year} median (${usd(rate)} per ${unit}) is used instead.`,
      );
    }
  }

  // Annual cost of the first year, in full precision.
  const assumptions: CostEstimate['assumptions'] = { annualIncreasePct: pct, years };
  const weeksPerYear = data.inHomeDefaults.weeksPerYear;
  let annual: number;
  if (unit === 'hour') {
    const hours = input.hoursPerWeek ?? data.inHomeDefaults.hoursPerWeek;
    assumptions.hoursPerWeek = hours;
    annual = rate * hours * weeksPerYear;
    notes.push(`Based on ${hours} hours a week for ${weeksPerYear} weeks a year at ${usd(rate)} an hour.`);
  } else if (unit === 'day') {
    const days = input.daysPerWeek ?? data.adultDayDefaults.daysPerWeek;
    assumptions.daysPerWeek = days;
    annual = rate * days * weeksPerYear;
    notes.push(`Based on ${days} days a week for ${weeksPerYear} weeks a year at ${usd(rate)} a day.`);
  } else {
    annual = rate * 12;
  }
  if (input.hoursPerWeek !== undefined && unit !== 'hour') {
    notes.push(`hoursPerWeek applies only to hourly in-home care and was ignored for ${info.label.toLowerCase()}.`);
  }
  if (input.daysPerWeek !== undefined && unit !== 'day') {
    notes.push(`daysPerWeek applies only to adult day health care and was ignored for ${info.label.toLowerCase()}.`);
  }

  const growth = 1 + pct / 100;
  const yearly = Array.from({ length: years }, (_, i) => annual * growth ** i);
  const total = yearly.reduce((sum, v) => sum + v, 0);

  if (years > 1) {
    notes.push(
      input.annualIncreasePct === undefined
        ? `Each later year costs ${pct}% more than the one before (the default: ${firstSentence(data.growth.basis)}).`
        : `Each later year costs ${pct}% more than the one before, as requested.`,
    );
  }
  notes.push(
    `Median private-pay rate from the ${data.source.name} ${dataYear}; actual prices vary by provider, ` +
      'care needs and town, and Medicare, Medicaid or insurance may pay part of the cost.',
  );

  return {
    careType,
    careTypeLabel: info.label,
    location,
    rate: { amount: rate, unit },
    dataYear,
    source: { name: `${data.source.name} ${dataYear}`, url: sourceUrl },
    assumptions,
    monthly: dollars(annual / 12),
    annual: dollars(annual),
    perYear: yearly.map((v, i) => ({ year: i + 1, annual: dollars(v) })),
    total: dollars(total),
    notes,
  };
}
