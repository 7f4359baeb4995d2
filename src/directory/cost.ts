/**
 * Long-term-care cost calculator behind the directory tool
 * `calculate_long_term_care_cost`. `calculateLongTermCareCost()` is pure and does no I/O; the
 * figures come from `loadCostData()` (./costData.ts).
 */
import { surveySource, type CareType, type CostData, type RateUnit, type SurveyCareType } from './costData.js';
import { STATE_HELP, type CostInput } from './costInput.js';
import { resolveState } from './states.js';

/** One published survey median the estimate quotes, with the survey year it comes from. */
export interface SurveyFigure {
  /** `rate`: the median the costs are worked out from; `national`: the national median beside a state's; `visit`: the price of one nurse visit. */
  role: 'rate' | 'national' | 'visit';
  /** The figure in words, e.g. "Ohio median, non-medical caregiver". */
  what: string;
  scope: 'national' | 'state';
  area: string;
  amount: number;
  unit: RateUnit | 'visit';
  surveyYear: number;
  source: { name: string; url: string };
}

export interface CostEstimate {
  careType: CareType;
  careTypeLabel: string;
  /** The survey category the care is priced as (homemaker and home health aide are one since 2025). */
  surveyCategory: { careType: SurveyCareType; label: string };
  location: { scope: 'national' | 'state'; code?: string; name: string };
  /** The median every amount below is worked out from. */
  rate: SurveyFigure;
  /** Survey year of `rate`. */
  dataYear: number;
  /** Source of `rate`. */
  source: { name: string; url: string };
  /** Every published figure quoted, each with its survey year: the rate first. */
  figures: SurveyFigure[];
  assumptions: { hoursPerWeek?: number; daysPerWeek?: number; annualIncreasePct: number; years: number };
  monthly: number;
  annual: number;
  perYear: { year: number; annual: number }[];
  total: number;
  notes: string[];
}

const usd = (n: number): string => `$${n.toLocaleString('en-US', { maximumFractionDigits: 2, minimumFractionDigits: Number.isInteger(n) ? 0 : 2 })}`;

const dollars = (n: number): number => Math.round(n);

const per = (unit: SurveyFigure['unit']) => (unit === 'visit' ? 'a visit' : `per ${unit}`);

const firstSentence = (text: string): string => {
  const end = text.indexOf('; ');
  const stop = text.indexOf('. ');
  const cut = [end, stop].filter((i) => i > 0);
  return (cut.length ? text.slice(0, Math.min(...cut)) : text).replace(/\.$/, '');
};

type Location = CostEstimate['location'];

/** A state's name as it reads in a sentence ("the District of Columbia"); `start` capitalises it. */
const inText = (name: string, start = false) => (name === 'District of Columbia' ? `${start ? 'The' : 'the'} ${name}` : name);

/** The median to price `careType` with in `location`, the other figures worth quoting, and why. */
function chooseFigures(careType: CareType, location: Location, data: CostData): { rate: SurveyFigure; figures: SurveyFigure[]; notes: string[] } {
  const info = data.careTypes[careType];
  const category = info.reportedAs ?? (careType as SurveyCareType);
  const categoryLabel = data.careTypes[category].label.toLowerCase();
  const unit = data.careTypes[category].unit;
  const notes: string[] = [];
  const nationalYear = data.national.year;
  const national = (role: SurveyFigure['role'], amount: number, u: SurveyFigure['unit'], what: string): SurveyFigure => ({
    role,
    what: `National median, ${what}`,
    scope: 'national',
    area: 'United States',
    amount,
    unit: u,
    surveyYear: nationalYear,
    source: surveySource(data, nationalYear, 'national'),
  });
  const nationalRate = national('rate', data.national.rates[category], unit, categoryLabel);

  if (info.reportedAs)
    notes.push(
      `The ${nationalYear} survey no longer prices ${info.label.toLowerCase()} on its own: homemaker services and home ` +
        `health aides are reported together as non-medical caregiver, whose median is used.`,
    );

  let rate = nationalRate;
  const figures: SurveyFigure[] = [];
  const entry = location.code ? data.states[location.code] : undefined;
  if (entry) {
    const f = entry.rates[category];
    if (f) {
      rate = {
        role: 'rate',
        what: `${entry.name} median, ${categoryLabel}`,
        scope: 'state',
        area: entry.name,
        amount: f.amount,
        unit,
        surveyYear: f.year,
        source: surveySource(data, f.year, 'state'),
      };
      if (f.year < nationalYear)
        notes.push(
          `${inText(entry.name, true)} has no ${nationalYear} median for ${categoryLabel}, so its ${f.year} median, the newest found, ` +
            `is used; the national figures are from ${nationalYear}.`,
        );
      if (f.note) notes.push(f.note);
      figures.push(rate, { ...nationalRate, role: 'national' });
    } else {
      notes.push(
        `No ${inText(entry.name)} median for ${categoryLabel} was found in the survey's state tables, so the national ` +
          `${nationalYear} median (${usd(nationalRate.amount)} ${per(unit)}) is used instead.`,
      );
      figures.push(rate);
    }
  } else figures.push(rate);

  if (category === 'private_duty_nurse') {
    const stateVisit = entry?.privateDutyNurseVisit;
    const visit: SurveyFigure = stateVisit
      ? {
          role: 'visit',
          what: `${entry.name} median per visit, private-duty nurse`,
          scope: 'state',
          area: entry.name,
          amount: stateVisit.amount,
          unit: 'visit',
          surveyYear: stateVisit.year,
          source: surveySource(data, stateVisit.year, 'state'),
        }
      : national('visit', data.national.privateDutyNurseVisit, 'visit', 'private-duty nurse per visit');
    figures.push(visit);
    notes.push(
      `Brief, task-based nurse visits are usually priced per visit instead: the ${visit.scope === 'national' ? 'national' : inText(visit.area)} median is ` +
        `${usd(visit.amount)} a visit (${visit.surveyYear} survey); hourly rates are for longer or ongoing skilled care.`,
    );
  }
  return { rate, figures, notes };
}

/**
 * Estimates the private-pay cost of one kind of long-term care, now and over
 * `years` years. Money is computed in full precision and rounded to whole
 * dollars only in the result; `rate.amount` is the survey median as published.
 */
export function calculateLongTermCareCost(input: CostInput, data: CostData): CostEstimate {
  const careType = input.careType;
  const info = data.careTypes[careType];
  const category = info.reportedAs ?? (careType as SurveyCareType);
  const unit = info.unit;
  const years = input.years ?? 1;
  const pct = input.annualIncreasePct ?? data.growth.defaultAnnualIncreasePct;

  let location: Location = { scope: 'national', name: 'United States' };
  if (input.state !== undefined) {
    const resolved = resolveState(input.state);
    if (!resolved) {
      throw new Error(`state "${input.state}" is not recognised: use ${STATE_HELP}`);
    }
    location = { scope: 'state', code: resolved.code, name: resolved.name };
  }
  const { rate, figures, notes: figureNotes } = chooseFigures(careType, location, data);
  const notes: string[] = [];

  // Annual cost of the first year, in full precision.
  const assumptions: CostEstimate['assumptions'] = { annualIncreasePct: pct, years };
  const weeksPerYear = data.inHomeDefaults.weeksPerYear;
  let annual: number;
  if (unit === 'hour') {
    const surveyHours = data.careTypes[category].hoursPerWeek;
    const hours = input.hoursPerWeek ?? surveyHours ?? data.inHomeDefaults.hoursPerWeek;
    assumptions.hoursPerWeek = hours;
    annual = rate.amount * hours * weeksPerYear;
    const why = input.hoursPerWeek === undefined && surveyHours !== undefined ? " (the survey's own assumption for this care)" : '';
    notes.push(`Based on ${hours} ${hours === 1 ? 'hour' : 'hours'} a week${why} for ${weeksPerYear} weeks a year at ${usd(rate.amount)} an hour.`);
  } else if (unit === 'day') {
    const days = input.daysPerWeek ?? data.adultDayDefaults.daysPerWeek;
    assumptions.daysPerWeek = days;
    annual = rate.amount * days * weeksPerYear;
    notes.push(`Based on ${days} days a week for ${weeksPerYear} weeks a year at ${usd(rate.amount)} a day.`);
  } else {
    annual = rate.amount * 12;
  }
  if (input.hoursPerWeek !== undefined && unit !== 'hour') {
    notes.push(`hoursPerWeek applies only to hourly in-home care and was ignored for ${info.label.toLowerCase()}.`);
  }
  if (input.daysPerWeek !== undefined && unit !== 'day') {
    notes.push(`daysPerWeek applies only to adult day health care and was ignored for ${info.label.toLowerCase()}.`);
  }
  notes.push(...figureNotes);

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
  const fieldwork = data.surveys[String(rate.surveyYear)]?.fieldwork;
  notes.push(
    `Median private-pay rate from the ${rate.source.name}${fieldwork ? ` (fieldwork ${fieldwork})` : ''}; actual prices ` +
      'vary by provider, care needs and town, and Medicare, Medicaid or insurance may pay part of the cost.',
  );

  return {
    careType,
    careTypeLabel: info.label,
    surveyCategory: { careType: category, label: data.careTypes[category].label },
    location,
    rate,
    dataYear: rate.surveyYear,
    source: rate.source,
    figures,
    assumptions,
    monthly: dollars(annual / 12),
    annual: dollars(annual),
    perYear: yearly.map((v, i) => ({ year: i + 1, annual: dollars(v) })),
    total: dollars(total),
    notes,
  };
}
