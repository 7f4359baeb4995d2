import { describe, expect, it } from 'vitest';
import { calculateLongTermCareCost } from './cost.js';
import { SURVEY_CARE_TYPES, costDataSchema, loadCostData, type CostData } from './costData.js';
import { costInputSchema } from './costInput.js';
import { STATES } from './states.js';

const data = loadCostData();

/** Parses like the tool endpoint does, then calculates. */
function estimate(raw: unknown, d: CostData = data) {
  return calculateLongTermCareCost(costInputSchema.parse(raw), d);
}

/** The field names of the issues a rejected input produced. */
function rejectedFields(raw: unknown): string[] {
  const result = costInputSchema.safeParse(raw);
  expect(result.success).toBe(false);
  return result.success ? [] : result.error.issues.map((i) => i.path.join('.'));
}

describe('costs.json', () => {
  it('parses with the schema and covers the 50 states and DC exactly', () => {
    const codes = Object.keys(data.states).sort();
    expect(codes).toHaveLength(51);
    expect(codes).toEqual(STATES.map((s) => s.code).sort());
    expect(data.states.DC?.name).toBe('District of Columbia');
    for (const entry of Object.values(data.states)) {
      expect(Object.keys(entry.rates).sort()).toEqual([...SURVEY_CARE_TYPES].sort());
      for (const f of Object.values(entry.rates)) if (f) expect(data.surveys[String(f.year)]?.stateTables).toMatch(/^https:\/\//);
    }
  });

  it('holds the six cited 2025 national medians', () => {
    expect(data.national.year).toBe(2025);
    expect(data.national.rates).toEqual({
      non_medical_caregiver: 35,
      private_duty_nurse: 90,
      adult_day: 95,
      assisted_living: 6200,
      nursing_home_semi_private: 9581,
      nursing_home_private: 10798,
    });
    expect(data.national.privateDutyNurseVisit).toBe(160);
    expect(data.inHomeDefaults).toEqual({ hoursPerWeek: 44, weeksPerYear: 52 });
    expect(data.adultDayDefaults).toEqual({ daysPerWeek: 5 });
    expect(data.growth.defaultAnnualIncreasePct).toBe(3);
    expect(data.growth.source).toMatch(/^https:\/\//);
  });

  it('is rejected when a jurisdiction is missing or a unit is wrong', () => {
    const missing = structuredClone(data) as { states: Record<string, unknown> };
    delete missing.states.WY;
    const r1 = costDataSchema.safeParse(missing);
    expect(r1.success).toBe(false);
    expect(r1.error?.issues.map((i) => i.path.join('.'))).toContain('states.WY');

    const wrongUnit = structuredClone(data);
    wrongUnit.careTypes.assisted_living.unit = 'day';
    expect(costDataSchema.safeParse(wrongUnit).success).toBe(false);
  });

  it('loads once and returns the same object', () => {
    expect(loadCostData()).toBe(data);
  });
});

describe('calculateLongTermCareCost arithmetic', () => {
  it('prices hourly care at rate x 44 h x 52 weeks by default', () => {
    const e = estimate({ careType: 'homemaker' });
    // 35 * 44 * 52 = 80,080 a year (CareScout's own 2025 annual figure); / 12 = 6,673.33 -> 6,673 a month
    expect(e.rate).toMatchObject({ amount: 35, unit: 'hour', surveyYear: 2025 });
    expect(e.annual).toBe(80_080);
    expect(e.monthly).toBe(6_673);
    expect(e.total).toBe(80_080);
    expect(e.perYear).toEqual([{ year: 1, annual: 80_080 }]);
    expect(e.assumptions).toEqual({ hoursPerWeek: 44, annualIncreasePct: 3, years: 1 });
    expect(e.location).toEqual({ scope: 'national', name: 'United States' });
    expect(e.dataYear).toBe(2025);
    expect(e.source.url).toBe('https://www.carescout.com/cost-of-care');
  });

  it('uses the requested hours a week for hourly care', () => {
    const e = estimate({ careType: 'home_health_aide', hoursPerWeek: 20 });
    // 35 * 20 * 52 = 36,400 a year; / 12 = 3,033.33 -> 3,033
    expect(e.annual).toBe(36_400);
    expect(e.monthly).toBe(3_033);
    expect(e.assumptions.hoursPerWeek).toBe(20);
  });

  it('prices daily care at rate x days a week x 52 weeks', () => {
    const e = estimate({ careType: 'adult_day' });
    // 95 * 5 * 52 = 24,700 a year; / 12 = 2,058.33 -> 2,058
    expect(e.rate).toMatchObject({ amount: 95, unit: 'day' });
    expect(e.annual).toBe(24_700);
    expect(e.monthly).toBe(2_058);
    expect(e.assumptions).toEqual({ daysPerWeek: 5, annualIncreasePct: 3, years: 1 });

    const three = estimate({ careType: 'adult_day', daysPerWeek: 3 });
    // 95 * 3 * 52 = 14,820; / 12 = 1,235
    expect(three.annual).toBe(14_820);
    expect(three.monthly).toBe(1_235);
  });

  it('prices monthly care at rate x 12', () => {
    const e = estimate({ careType: 'assisted_living' });
    // 6,200 * 12 = 74,400
    expect(e.rate).toMatchObject({ amount: 6_200, unit: 'month' });
    expect(e.annual).toBe(74_400);
    expect(e.monthly).toBe(6_200);
    expect(e.assumptions).toEqual({ annualIncreasePct: 3, years: 1 });
    expect(e.assumptions.hoursPerWeek).toBeUndefined();
  });

  it('ignores hoursPerWeek for a monthly care type and says so', () => {
    const e = estimate({ careType: 'nursing_home_private', hoursPerWeek: 10 });
    expect(e.annual).toBe(10_798 * 12);
    expect(e.assumptions.hoursPerWeek).toBeUndefined();
    expect(e.notes.some((n) => n.includes('hoursPerWeek') && n.includes('ignored'))).toBe(true);
  });

  it('compounds the annual increase over 4 years and sums in full precision', () => {
    const e = estimate({ careType: 'nursing_home_private', years: 4 });
    // year 1: 10,798 * 12          = 129,576
    // year 2: 129,576 * 1.03       = 133,463.28     -> 133,463
    // year 3: 129,576 * 1.03^2     = 137,467.1784   -> 137,467
    // year 4: 129,576 * 1.03^3     = 141,591.193752 -> 141,591
    // total : 542,097.652152       -> 542,098 (not the 542,097 the rounded years add to)
    expect(e.perYear).toEqual([
      { year: 1, annual: 129_576 },
      { year: 2, annual: 133_463 },
      { year: 3, annual: 137_467 },
      { year: 4, annual: 141_591 },
    ]);
    expect(e.total).toBe(542_098);
    expect(e.assumptions).toEqual({ annualIncreasePct: 3, years: 4 });
    expect(e.notes.some((n) => n.includes('3% more'))).toBe(true);
  });

  it('honours an explicit annualIncreasePct, including zero', () => {
    const e = estimate({ careType: 'assisted_living', years: 2, annualIncreasePct: 10 });
    // 74,400 then 81,840
    expect(e.perYear).toEqual([
      { year: 1, annual: 74_400 },
      { year: 2, annual: 81_840 },
    ]);
    expect(e.total).toBe(156_240);

    const flat = estimate({ careType: 'assisted_living', years: 4, annualIncreasePct: 0 });
    expect(flat.total).toBe(74_400 * 4);
    expect(flat.assumptions.annualIncreasePct).toBe(0);
  });
});

describe('state resolution', () => {
  it('finds a state by USPS code, case-insensitively', () => {
    const e = estimate({ careType: 'home_health_aide', state: 'tx' });
    expect(e.location).toEqual({ scope: 'state', code: 'TX', name: 'Texas' });
    expect(e.rate.amount).toBe(data.states.TX?.rates.non_medical_caregiver?.amount);
    // 30 * 44 * 52 = 68,640
    expect(e.annual).toBe(68_640);
    expect(e.source.url).toBe(data.surveys['2025']?.stateTables);
  });

  it('finds a state by full name, case-insensitively and trimmed', () => {
    const e = estimate({ careType: 'assisted_living', state: '  arizona ' });
    expect(e.location).toEqual({ scope: 'state', code: 'AZ', name: 'Arizona' });
    // 6,250 * 12 = 75,000
    expect(e.rate.amount).toBe(6_250);
    expect(e.annual).toBe(75_000);

    const dc = estimate({ careType: 'nursing_home_private', state: 'District of Columbia' });
    expect(dc.location.code).toBe('DC');
  });

  it('falls back to the national median with a note when the state figure is null', () => {
    expect(data.states.VT?.rates.adult_day).toBeNull();
    const e = estimate({ careType: 'adult_day', state: 'Vermont' });
    expect(e.location).toEqual({ scope: 'state', code: 'VT', name: 'Vermont' });
    expect(e.rate).toMatchObject({ amount: 95, unit: 'day', scope: 'national', surveyYear: 2025 });
    expect(e.annual).toBe(24_700);
    expect(e.source.url).toBe(data.national.source);
    expect(e.notes.some((n) => n.includes('Vermont') && n.includes('national'))).toBe(true);
  });

  it('notes an older survey year when a state only has older figures', () => {
    const e = estimate({ careType: 'assisted_living', state: 'DC' });
    // The 2025 tables list no District of Columbia figures: its 2024 median, 9,640 * 12 = 115,680
    expect(e.dataYear).toBe(2024);
    expect(e.annual).toBe(115_680);
    expect(e.source).toEqual({ name: 'CareScout Cost of Care Survey 2024', url: data.surveys['2024']?.stateTables });
    expect(e.notes.some((n) => n.includes('2024') && n.includes('newest found'))).toBe(true);

    const current = estimate({ careType: 'assisted_living', state: 'AL' });
    expect(current.dataYear).toBe(2025);
    expect(current.notes.some((n) => n.includes('newest found'))).toBe(false);
  });
});

describe('costInputSchema rejects bad input and names the field', () => {
  it('rejects an unknown careType', () => {
    expect(rejectedFields({ careType: 'spa_day' })).toEqual(['careType']);
    expect(rejectedFields({})).toEqual(['careType']);
  });

  it('rejects an unknown state and says what is allowed', () => {
    const result = costInputSchema.safeParse({ careType: 'homemaker', state: 'Narnia' });
    expect(result.success).toBe(false);
    const issue = result.error?.issues[0];
    expect(issue?.path).toEqual(['state']);
    expect(issue?.message).toContain('USPS code');
    expect(issue?.message).toContain('full state name');
    expect(rejectedFields({ careType: 'homemaker', state: 'PR' })).toEqual(['state']);
  });

  it('rejects years outside 1-30 or not whole', () => {
    expect(rejectedFields({ careType: 'homemaker', years: 0 })).toEqual(['years']);
    expect(rejectedFields({ careType: 'homemaker', years: 31 })).toEqual(['years']);
    expect(rejectedFields({ careType: 'homemaker', years: 2.5 })).toEqual(['years']);
    expect(rejectedFields({ careType: 'homemaker', years: '3' })).toEqual(['years']);
  });

  it('rejects hoursPerWeek outside 1-168', () => {
    expect(rejectedFields({ careType: 'homemaker', hoursPerWeek: 0 })).toEqual(['hoursPerWeek']);
    expect(rejectedFields({ careType: 'homemaker', hoursPerWeek: 169 })).toEqual(['hoursPerWeek']);
  });

  it('rejects daysPerWeek and annualIncreasePct out of range, and unknown keys', () => {
    expect(rejectedFields({ careType: 'adult_day', daysPerWeek: 8 })).toEqual(['daysPerWeek']);
    expect(rejectedFields({ careType: 'adult_day', annualIncreasePct: 16 })).toEqual(['annualIncreasePct']);
    expect(rejectedFields({ careType: 'adult_day', annualIncreasePct: -1 })).toEqual(['annualIncreasePct']);
    const strict = costInputSchema.safeParse({ careType: 'homemaker', zip: '10001' });
    expect(strict.success).toBe(false);
    expect(strict.error?.issues[0]?.code).toBe('unrecognized_keys');
  });

  it('applies years = 1 when omitted and accepts a full valid input', () => {
    expect(costInputSchema.parse({ careType: 'homemaker' }).years).toBe(1);
    const ok = costInputSchema.safeParse({
      careType: 'home_health_aide',
      state: 'NY',
      hoursPerWeek: 30,
      years: 5,
      annualIncreasePct: 4,
    });
    expect(ok.success).toBe(true);
  });
});
