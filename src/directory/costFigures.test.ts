// The 2025 survey's figures in the calculator: its new care categories, and the survey year and source each quoted figure carries.
import { describe, expect, it } from 'vitest';
import { calculateLongTermCareCost } from './cost.js';
import { CARE_TYPES, SURVEY_CARE_TYPES, costDataSchema, loadCostData } from './costData.js';
import { costInputSchema } from './costInput.js';

const data = loadCostData();
const estimate = (raw: unknown) => calculateLongTermCareCost(costInputSchema.parse(raw), data);
const STATE_TABLES_2025 = 'https://assets.carescout.com/x/8fcb50422f/282102.pdf';
const STATE_TABLES_2024 = 'https://assets.carescout.com/55da049c1f/282102.pdf';

describe('2025 survey figures in costs.json', () => {
  it('holds figures transcribed from the 2025 state tables, each labelled 2025', () => {
    // Spot checks against CareScout's 2025 "Median Cost Data Tables" (document 282102 03/02/26).
    expect(data.states.WY?.rates.non_medical_caregiver).toEqual({ amount: 46, year: 2025 });
    expect(data.states.WY?.rates.private_duty_nurse).toEqual({ amount: 207, year: 2025 });
    expect(data.states.AK?.rates.nursing_home_semi_private).toEqual({ amount: 27_831, year: 2025 });
    expect(data.states.TX?.rates.nursing_home_semi_private).toEqual({ amount: 5_627, year: 2025 });
    expect(data.states.OR?.rates.nursing_home_semi_private).toEqual({ amount: 16_760, year: 2025 });
    expect(data.states.OH?.privateDutyNurseVisit).toEqual({ amount: 85, year: 2025 });
    expect(data.surveys['2025']).toMatchObject({ stateTables: STATE_TABLES_2025, fieldwork: 'July–November 2025' });
  });

  it('keeps a 2024 figure only where the 2025 tables have none', () => {
    const older = Object.entries(data.states).flatMap(([code, s]) =>
      Object.entries(s.rates)
        .filter(([, f]) => f && f.year !== 2025)
        .map(([t, f]) => `${code}.${t}:${f?.year}`),
    );
    // The 2025 tables list no District of Columbia and have too little data for Alaska's private room.
    expect(older.sort()).toEqual([
      'AK.nursing_home_private:2024',
      'DC.assisted_living:2024',
      'DC.non_medical_caregiver:2024',
      'DC.nursing_home_private:2024',
      'DC.nursing_home_semi_private:2024',
    ]);
    // No state's older figure for care types the 2024 survey did not price.
    for (const s of Object.values(data.states)) expect(s.rates.private_duty_nurse?.year ?? 2025).toBe(2025);
  });

  it('rejects a figure whose survey year has no source, and an older care type not mapped to a 2025 category', () => {
    const unknownYear = structuredClone(data);
    unknownYear.states.OH!.rates.assisted_living = { amount: 5000, year: 2019 };
    const r1 = costDataSchema.safeParse(unknownYear);
    expect(r1.error?.issues.map((i) => i.path.join('.'))).toContain('states.OH.rates.assisted_living.year');

    const unmapped = structuredClone(data);
    delete unmapped.careTypes.homemaker.reportedAs;
    expect(costDataSchema.safeParse(unmapped).success).toBe(false);
  });
});

describe('care types of the 2025 survey', () => {
  it('prices a private-duty nurse at the survey hourly median, 1 hour a week by default as the survey assumes', () => {
    const e = estimate({ careType: 'private_duty_nurse' });
    // 90 * 1 * 52 = 4,680 a year and 390 a month: CareScout's own 2025 national annual and monthly figures
    expect(e.rate).toMatchObject({ amount: 90, unit: 'hour', surveyYear: 2025, scope: 'national' });
    expect(e.annual).toBe(4_680);
    expect(e.monthly).toBe(390);
    expect(e.assumptions.hoursPerWeek).toBe(1);
    expect(e.notes[0]).toContain("the survey's own assumption");

    const full = estimate({ careType: 'private_duty_nurse', hoursPerWeek: 10, state: 'OH' });
    // Ohio: 100 * 10 * 52 = 52,000
    expect(full.annual).toBe(52_000);
    expect(full.figures.map((f) => [f.role, f.area, f.amount, f.unit, f.surveyYear])).toEqual([
      ['rate', 'Ohio', 100, 'hour', 2025],
      ['national', 'United States', 90, 'hour', 2025],
      ['visit', 'Ohio', 85, 'visit', 2025],
    ]);
    expect(full.notes.some((n) => n.includes('$85 a visit'))).toBe(true);
  });

  it('uses the national nurse medians where a state has none', () => {
    const e = estimate({ careType: 'private_duty_nurse', state: 'AK' });
    expect(e.rate).toMatchObject({ amount: 90, scope: 'national', surveyYear: 2025 });
    expect(e.figures.find((f) => f.role === 'visit')).toMatchObject({ amount: 160, area: 'United States', surveyYear: 2025 });
    expect(e.notes.some((n) => n.startsWith('No Alaska median for private-duty nurse'))).toBe(true);
  });

  it('prices homemaker services and home health aides as the 2025 non-medical caregiver, and says so', () => {
    const [nmc, homemaker, aide] = (['non_medical_caregiver', 'homemaker', 'home_health_aide'] as const).map((careType) => estimate({ careType, state: 'NY' }));
    expect(nmc!.rate.amount).toBe(35);
    for (const e of [homemaker!, aide!]) {
      expect(e.annual).toBe(nmc!.annual);
      expect(e.surveyCategory).toEqual({ careType: 'non_medical_caregiver', label: data.careTypes.non_medical_caregiver.label });
      expect(e.notes.some((n) => n.includes('reported together as non-medical caregiver'))).toBe(true);
    }
    expect(homemaker!.careType).toBe('homemaker');
    expect(aide!.careTypeLabel).toBe('Home health aide');
    expect(nmc!.notes.some((n) => n.includes('reported together'))).toBe(false);
  });

  it('accepts every earlier care-type value and the new ones', () => {
    for (const careType of [
      'homemaker',
      'home_health_aide',
      'adult_day',
      'assisted_living',
      'nursing_home_semi_private',
      'nursing_home_private',
      'non_medical_caregiver',
      'private_duty_nurse',
    ])
      expect(costInputSchema.safeParse({ careType }).success).toBe(true);
    expect(CARE_TYPES).toEqual(expect.arrayContaining([...SURVEY_CARE_TYPES]));
  });
});

describe('survey year of each figure in the result', () => {
  it('labels a state figure and the national figure beside it with their own years and sources', () => {
    const e = estimate({ careType: 'nursing_home_private', state: 'Alaska' });
    expect(e.figures).toEqual([
      {
        role: 'rate',
        what: 'Alaska median, nursing home, private room',
        scope: 'state',
        area: 'Alaska',
        amount: 30_371,
        unit: 'month',
        surveyYear: 2024,
        source: { name: 'CareScout Cost of Care Survey 2024', url: STATE_TABLES_2024 },
      },
      {
        role: 'national',
        what: 'National median, nursing home, private room',
        scope: 'national',
        area: 'United States',
        amount: 10_798,
        unit: 'month',
        surveyYear: 2025,
        source: { name: 'CareScout Cost of Care Survey 2025', url: 'https://www.carescout.com/cost-of-care' },
      },
    ]);
    expect(e.rate).toBe(e.figures[0]);
    expect(e.dataYear).toBe(2024);
    expect(e.notes.some((n) => n.includes('Alaska has no 2025 median') && n.includes('its 2024 median'))).toBe(true);

    const current = estimate({ careType: 'nursing_home_semi_private', state: 'Alaska' });
    expect(current.figures.map((f) => f.surveyYear)).toEqual([2025, 2025]);
    expect(current.source.url).toBe(STATE_TABLES_2025);
  });

  it("carries a figure's own note, and national-only results quote one figure", () => {
    const dc = estimate({ careType: 'home_health_aide', state: 'DC' });
    expect(dc.rate).toMatchObject({ amount: 38, surveyYear: 2024, area: 'District of Columbia' });
    expect(dc.notes.some((n) => n.includes('both were $38 an hour'))).toBe(true);

    const us = estimate({ careType: 'assisted_living' });
    expect(us.figures).toHaveLength(1);
    expect(us.figures[0]).toMatchObject({ role: 'rate', scope: 'national', surveyYear: 2025 });
    expect(us.notes.at(-1)).toContain('CareScout Cost of Care Survey 2025 (fieldwork July–November 2025)');
  });
});
