/**
 * The long-term-care cost figures: ./data/costs.json (CareScout Cost of Care Survey medians, each
 * with its survey year; provenance in ./data/COSTS_SOURCES.md), its schema, and `loadCostData()`,
 * which reads and validates that file once.
 */
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { STATES } from './states.js';

/** The care categories of the 2025 survey, each with a national median. */
export const SURVEY_CARE_TYPES = [
  'non_medical_caregiver',
  'private_duty_nurse',
  'adult_day',
  'assisted_living',
  'nursing_home_semi_private',
  'nursing_home_private',
] as const;

/**
 * Every care type a caller may ask for. `homemaker` and `home_health_aide` are the categories of
 * surveys before 2025 and stay accepted: the 2025 survey prices both as a non-medical caregiver.
 */
export const CARE_TYPES = [
  'non_medical_caregiver',
  'homemaker',
  'home_health_aide',
  'private_duty_nurse',
  'adult_day',
  'assisted_living',
  'nursing_home_semi_private',
  'nursing_home_private',
] as const;

export type CareType = (typeof CARE_TYPES)[number];
export type SurveyCareType = (typeof SURVEY_CARE_TYPES)[number];

export type RateUnit = 'hour' | 'day' | 'month';

/** The unit each care type is priced in; the data file must agree. */
const EXPECTED_UNIT: Record<CareType, RateUnit> = {
  non_medical_caregiver: 'hour',
  homemaker: 'hour',
  home_health_aide: 'hour',
  private_duty_nurse: 'hour',
  adult_day: 'day',
  assisted_living: 'month',
  nursing_home_semi_private: 'month',
  nursing_home_private: 'month',
};

const careTypeEnum = z.enum(CARE_TYPES);
const surveyCareTypeEnum = z.enum(SURVEY_CARE_TYPES);
const surveyYear = z.number().int().min(2004).max(2100);
const money = z.number().positive().finite();

/** One published median and the survey year it comes from. */
const figureSchema = z.strictObject({
  amount: money,
  year: surveyYear,
  /** What a reader should know about this one figure. */
  note: z.string().min(1).optional(),
});

const surveySchema = z.strictObject({
  name: z.string().min(1),
  fieldwork: z.string().min(1),
  /** Where the national medians were published. */
  national: z.url(),
  /** Where the state medians were published. */
  stateTables: z.url(),
  /** Where the state medians were transcribed from, when that differs from `stateTables`. */
  via: z.url().optional(),
});

const careTypeInfoSchema = z.strictObject({
  label: z.string().min(1),
  unit: z.enum(['hour', 'day', 'month']),
  /** The survey category this older care type is priced as. */
  reportedAs: surveyCareTypeEnum.optional(),
  /** The survey's own weekly hours for this care type, when not `inHomeDefaults.hoursPerWeek`. */
  hoursPerWeek: z.number().min(1).max(168).optional(),
});

const stateEntrySchema = z.strictObject({
  name: z.string().min(1),
  /** `null` = no figure could be found; the calculator falls back to the national median. */
  rates: z.record(surveyCareTypeEnum, figureSchema.nullable()),
  /** Median price of one private-duty nurse visit, where published. */
  privateDutyNurseVisit: figureSchema.nullable(),
});

export const costDataSchema = z
  .strictObject({
    source: z.strictObject({
      name: z.string().min(1),
      publisher: z.string().min(1),
      url: z.url(),
      note: z.string(),
    }),
    /** The surveys the figures come from, by year. */
    surveys: z.record(z.string().regex(/^\d{4}$/), surveySchema),
    careTypes: z.record(careTypeEnum, careTypeInfoSchema),
    national: z.strictObject({
      year: surveyYear,
      source: z.url(),
      rates: z.record(surveyCareTypeEnum, money),
      privateDutyNurseVisit: money,
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
    const issue = (path: (string | number)[], message: string) => ctx.addIssue({ code: 'custom', path, message });
    for (const t of CARE_TYPES) {
      const info = data.careTypes[t];
      if (info.unit !== EXPECTED_UNIT[t]) issue(['careTypes', t, 'unit'], `${t} must be priced per ${EXPECTED_UNIT[t]}`);
      const isSurveyType = (SURVEY_CARE_TYPES as readonly string[]).includes(t);
      if (isSurveyType === (info.reportedAs !== undefined))
        issue(
          ['careTypes', t, 'reportedAs'],
          isSurveyType ? 'a survey category is not reported as another' : `${t} must name the survey category it is priced as`,
        );
    }
    const year = (y: number, path: (string | number)[]) => {
      if (!data.surveys[String(y)]) issue(path, `no survey ${y} in surveys`);
    };
    year(data.national.year, ['national', 'year']);
    const known = new Set(STATES.map((s) => s.code));
    for (const s of STATES) {
      const entry = data.states[s.code];
      if (!entry) issue(['states', s.code], `missing ${s.name}`);
      else if (entry.name !== s.name) issue(['states', s.code, 'name'], `expected "${s.name}"`);
    }
    for (const [code, entry] of Object.entries(data.states)) {
      if (!known.has(code)) issue(['states', code], 'not a US state or DC');
      for (const [t, f] of Object.entries(entry.rates)) if (f) year(f.year, ['states', code, 'rates', t, 'year']);
      if (entry.privateDutyNurseVisit) year(entry.privateDutyNurseVisit.year, ['states', code, 'privateDutyNurseVisit', 'year']);
    }
  });

export type CostData = z.infer<typeof costDataSchema>;
export type CostFigure = z.infer<typeof figureSchema>;

/** Name and address of a survey's figures: the national page, or the state tables. */
export function surveySource(data: CostData, year: number, scope: 'national' | 'state'): { name: string; url: string } {
  const survey = data.surveys[String(year)];
  if (!survey) throw new Error(`no survey ${year} in the cost data`);
  return { name: survey.name, url: scope === 'national' ? survey.national : survey.stateTables };
}

let cached: CostData | undefined;

/** Reads and validates ./data/costs.json once; later calls return the same object. */
export function loadCostData(): CostData {
  if (!cached) {
    const raw = readFileSync(new URL('./data/costs.json', import.meta.url), 'utf8');
    cached = costDataSchema.parse(JSON.parse(raw));
  }
  return cached;
}
