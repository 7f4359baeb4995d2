/**
 * Long-term-care cost calculator behind the directory tool
 * `calculate_long_term_care_cost`. `calculateLongTermCareCost()` is pure and does no I/O; the
 * figures come from `loadCostData()` (./costData.ts).
 */
import type { CareType, CostData, RateUnit } from './costData.js';
import { STATE_HELP, type CostInput } from './costInput.js';
import { resolveState } from './states.js';

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
