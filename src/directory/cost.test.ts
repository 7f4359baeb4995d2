import { describe, expect, it } from 'vitest';
import { calculateLongTermCareCost } from './cost.js';
import { CARE_TYPES, costDataSchema, loadCostData, type CostData } from './costData.js';
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
      expect(entry.year).toBeGreaterThanOrEqual(2004);
      expect(entry.source).toMatch(/^https:\/\//);
      expect(Object.keys(entry.rates).sort()).toEqual([...CARE_TYPES].sort());
    }
  });

  it('holds the six cited 2024 national medians', () => {
    expect(data.national.year).toBe(2024);
    expect(data.national.rates).toEqual({
      homemaker: 33,
      home_health_aide: 34,
      adult_day: 100,
      assisted_living: 5900,
      nursing_home_semi_private: 9277,
      nursing_home_private: 10646,
    });
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
    // 33 * 44 * 52 = 75,504 a year; / 12 = 6,292 a month
    expect(e.rate).toEqual({ amount: 33, unit: 'hour' });
    expect(e.annual).toBe(75_504);
    expect(e.monthly).toBe(6_292);
    expect(e.total).toBe(75_504);
    expect(e.perYear).toEqual([{ year: 1, annual: 75_504 }]);
    expect(e.assumptions).toEqual({ hoursPerWeek: 44, annualIncreasePct: 3, years: 1 });
    expect(e.location).toEqual({ scope: 'national', name: 'United States' });
    expect(e.dataYear).toBe(2024);
    expect(e.source.url).toBe('https://www.carescout.com/cost-of-care');
  });

  it('uses the requested hours a week for hourly care', () => {
    const e = estimate({ careType: 'home_health_aide', hoursPerWeek: 20 });
    // 34 * 20 * 52 = 35,360 a year; / 12 = 2,946.67 -> 2,947
    expect(e.annual).toBe(35_360);
    expect(e.monthly).toBe(2_947);
    expect(e.assumptions.hoursPerWeek).toBe(20);
  });

  it('prices daily care at rate x days a week x 52 weeks', () => {
    const e = estimate({ careType: 'adult_day' });
    // 100 * 5 * 52 = 26,000 a year; / 12 = 2,166.67 -> 2,167
    expect(e.rate).toEqual({ amount: 100, unit: 'day' });
    expect(e.annual).toBe(26_000);
    expect(e.monthly).toBe(2_167);
    expect(e.assumptions).toEqual({ daysPerWeek: 5, annualIncreasePct: 3, years: 1 });

    const three = estimate({ careType: 'adult_day', daysPerWeek: 3 });
    // 100 * 3 * 52 = 15,600; / 12 = 1,300
    expect(three.annual).toBe(15_600);
    expect(three.monthly).toBe(1_300);
  });

  it('prices monthly care at rate x 12', () => {
    const e = estimate({ careType: 'assisted_living' });
    // 5,900 * 12 = 70,800
    expect(e.rate).toEqual({ amount: 5_900, unit: 'month' });
    expect(e.annual).toBe(70_800);
    expect(e.monthly).toBe(5_900);
    expect(e.assumptions).toEqual({ annualIncreasePct: 3, years: 1 });
    expect(e.assumptions.hoursPerWeek).toBeUndefined();
  });

  it('ignores hoursPerWeek for a monthly care type and says so', () => {
    const e = estimate({ careType: 'nursing_home_private', hoursPerWeek: 10 });
    expect(e.annual).toBe(10_646 * 12);
    expect(e.assumptions.hoursPerWeek).toBeUndefined();
    expect(e.notes.some((n) => n.includes('hoursPerWeek') && n.includes('ignored'))).toBe(true);
  });

  it('compounds the annual increase over 3 years and sums in full precision', () => {
    const e = estimate({ careType: 'nursing_home_semi_private', years: 3 });
    // year 1: 9,277 * 12           = 111,324
    // year 2: 111,324 * 1.03       = 114,663.72    -> 114,664
    // year 3: 111,324 * 1.03^2     = 118,103.6316  -> 118,104
    // total : 344,091.3516         -> 344,091 (not the 344,092 the rounded years add to)
    expect(e.perYear).toEqual([
      { year: 1, annual: 111_324 },
      { year: 2, annual: 114_664 },
      { year: 3, annual: 118_104 },
    ]);
    expect(e.total).toBe(344_091);
    expect(e.assumptions).toEqual({ annualIncreasePct: 3, years: 3 });
    expect(e.notes.some((n) => n.includes('3% more'))).toBe(true);
  });

  it('honours an explicit annualIncreasePct, including zero', () => {
    const e = estimate({ careType: 'assisted_living', years: 2, annualIncreasePct: 10 });
    // 70,800 then 77,880
    expect(e.perYear).toEqual([
      { year: 1, annual: 70_800 },
      { year: 2, annual: 77_880 },
    ]);
    expect(e.total).toBe(148_680);

    const flat = estimate({ careType: 'assisted_living', years: 4, annualIncreasePct: 0 });
    expect(flat.total).toBe(70_800 * 4);
    expect(flat.assumptions.annualIncreasePct).toBe(0);
  });
});

describe('state resolution', () => {
  it('finds a state by USPS code, case-insensitively', () => {
    const e = estimate({ careType: 'home_health_aide', state: 'tx' });
    expect(e.location).toEqual({ scope: 'state', code: 'TX', name: 'Texas' });
    expect(e.rate.amount).toBe(data.states.TX?.rates.home_health_aide);
    // 30 * 44 * 52 = 68,640
    expect(e.annual).toBe(68_640);
    expect(e.source.url).toBe(data.states.TX?.source);
  });

  it('finds a state by full name, case-insensitively and trimmed', () => {
    const e = estimate({ careType: 'assisted_living', state: '  arizona ' });
    expect(e.location).toEqual({ scope: 'state', code: 'AZ', name: 'Arizona' });
    // 6,370 * 12 = 76,440
    expect(e.rate.amount).toBe(6_370);
    expect(e.annual).toBe(76_440);

    const dc = estimate({ careType: 'nursing_home_private', state: 'District of Columbia' });
    expect(dc.location.code).toBe('DC');
  });

  it('falls back to the national median with a note when the state figure is null', () => {
    expect(data.states.OH?.rates.adult_day).toBeNull();
    const e = estimate({ careType: 'adult_day', state: 'Ohio' });
    expect(e.location).toEqual({ scope: 'state', code: 'OH', name: 'Ohio' });
    expect(e.rate).toEqual({ amount: 100, unit: 'day' });
    expect(e.annual).toBe(26_000);
    expect(e.source.url).toBe(data.national.source);
    expect(e.notes.some((n) => n.includes('Ohio') && n.includes('national'))).toBe(true);
  });

  it('notes an older survey year when a state only has older figures', () => {
    const older = structuredClone(data);
    const al = older.states.AL;
    if (!al) throw new Error('AL missing');
    al.year = 2021;
    const e = estimate({ careType: 'assisted_living', state: 'AL' }, older);
    expect(e.dataYear).toBe(2021);
    expect(e.notes.some((n) => n.includes('2021'))).toBe(true);

    const current = estimate({ careType: 'assisted_living', state: 'AL' });
    expect(current.dataYear).toBe(2024);
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
