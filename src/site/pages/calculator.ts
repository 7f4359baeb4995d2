// The long-term-care cost calculator page: a GET form checked and computed by the MCP tool's own code.
import { calculateLongTermCareCost, type CostEstimate, type SurveyFigure } from '../../directory/cost.js';
import { CARE_TYPES } from '../../directory/costData.js';
import { costInputSchema } from '../../directory/costInput.js';
import { STATES, resolveState } from '../../directory/states.js';
import type { Block, FormField, Inline, Page } from '../doc.js';
import { plural, withQuery, type PagesDeps } from './common.js';
import { DIRECTORY_TOOLS } from '../../directory/tools.js';

const usd = (n: number) => `$${n.toLocaleString('en-US', { maximumFractionDigits: 2 })}`;

const FIGURE_TERMS: Record<SurveyFigure['role'], string> = { rate: 'Median rate', national: 'National median', visit: 'Nurse visit' };

/** A published median with where and which survey year it comes from, linked to its source. */
function figureValue(f: SurveyFigure): Inline[] {
  const unit = f.unit === 'visit' ? 'a visit' : `per ${f.unit}`;
  return [
    `${usd(f.amount)} ${unit}, ${f.scope === 'state' ? `${f.area} median` : 'national median'}, survey year ${f.surveyYear} (`,
    { text: f.source.name, href: f.source.url },
    ')',
  ];
}

/** The year-by-year projection as a bar chart; the table beside it is its data view. */
function projectionChart(e: CostEstimate): Block {
  const first = e.perYear[0]!;
  const last = e.perYear[e.perYear.length - 1]!;
  const pct = e.assumptions.annualIncreasePct;
  const trend =
    pct === 0
      ? `the same ${usd(first.annual)} every year`
      : `from ${usd(first.annual)} in year 1 to ${usd(last.annual)} in year ${last.year}, ${pct}% more each year`;
  return {
    kind: 'chart',
    chart: {
      id: 'cost-chart',
      title: `Cost by year: ${e.careTypeLabel.toLowerCase()} in ${e.location.name}`,
      description: `Bar chart of the yearly cost over ${plural(e.perYear.length, 'year')}, ${trend}, worked out from the ${e.dataYear} survey median. The table "Cost by year" lists every year.`,
      xLabel: 'Year of care',
      yLabel: 'Cost a year (US dollars)',
      bars: e.perYear.map((y) => ({ label: String(y.year), value: y.annual, title: `Year ${y.year}: ${usd(y.annual)}` })),
    },
  };
}

const CALCULATOR_FIELDS = ['careType', 'state', 'hoursPerWeek', 'daysPerWeek', 'years', 'annualIncreasePct'] as const;

/** Query strings to tool arguments: empty means absent, numbers are numbers when they parse. */
export function calculatorArgs(query: URLSearchParams): Record<string, unknown> {
  const args: Record<string, unknown> = {};
  for (const f of CALCULATOR_FIELDS) {
    const raw = query.get(f)?.trim();
    if (!raw) continue;
    if (f === 'careType' || f === 'state') args[f] = raw;
    else args[f] = Number.isFinite(Number(raw)) ? Number(raw) : raw;
  }
  return args;
}

export function calculatorPage(deps: PagesDeps, query: URLSearchParams): Page {
  const costs = deps.directory.costs;
  const args = calculatorArgs(query);
  const submitted = Object.keys(args).length > 0;
  const errors: Record<string, string> = {};
  let estimate: CostEstimate | undefined;
  if (submitted) {
    const parsed = costInputSchema.safeParse(args);
    if (parsed.success) estimate = calculateLongTermCareCost(parsed.data, costs);
    else
      for (const issue of parsed.error.issues) {
        const field = issue.code === 'unrecognized_keys' ? 'form' : String(issue.path[0] ?? 'form');
        errors[field] ??= field === 'careType' && args.careType === undefined ? `careType is required: one of ${CARE_TYPES.join(', ')}` : issue.message;
      }
  }
  const value = (f: string) => query.get(f)?.trim() ?? '';
  const err = (f: string) => (errors[f] ? { error: errors[f] } : {});
  const fields: FormField[] = [
    {
      name: 'careType',
      label: 'Kind of care',
      type: 'select',
      value: value('careType'),
      required: true,
      options: [{ value: '', label: 'Choose…' }, ...CARE_TYPES.map((t) => ({ value: t, label: costs.careTypes[t].label }))],
      ...err('careType'),
    },
    {
      name: 'state',
      label: 'State',
      type: 'select',
      value: resolveState(value('state'))?.code ?? value('state'),
      options: [{ value: '', label: 'United States (national median)' }, ...STATES.map((s) => ({ value: s.code, label: s.name }))],
      ...err('state'),
    },
    {
      name: 'hoursPerWeek',
      label: 'Hours a week (in-home care)',
      type: 'number',
      value: value('hoursPerWeek'),
      min: 1,
      max: 168,
      step: 'any',
      hint: `Default ${costs.inHomeDefaults.hoursPerWeek}; ${costs.careTypes.private_duty_nurse.hoursPerWeek ?? costs.inHomeDefaults.hoursPerWeek} for a private-duty nurse, as the survey assumes.`,
      ...err('hoursPerWeek'),
    },
    {
      name: 'daysPerWeek',
      label: 'Days a week (adult day care)',
      type: 'number',
      value: value('daysPerWeek'),
      min: 1,
      max: 7,
      step: 'any',
      hint: `Default ${costs.adultDayDefaults.daysPerWeek}.`,
      ...err('daysPerWeek'),
    },
    { name: 'years', label: 'Years of care', type: 'number', value: value('years'), min: 1, max: 30, step: '1', hint: 'Default 1.', ...err('years') },
    {
      name: 'annualIncreasePct',
      label: 'Yearly price increase (%)',
      type: 'number',
      value: value('annualIncreasePct'),
      min: 0,
      max: 15,
      step: 'any',
      hint: `Default ${costs.growth.defaultAnnualIncreasePct}.`,
      ...err('annualIncreasePct'),
    },
  ];
  const path = submitted ? withQuery('/calculator', Object.fromEntries(CALCULATOR_FIELDS.map((f) => [f, value(f) || undefined]))) : '/calculator';
  const form: Block = {
    kind: 'form',
    form: {
      action: '/calculator',
      method: 'get',
      label: 'Long-term-care cost calculator',
      fields,
      submit: 'Estimate the cost',
      markdown: [
        'To estimate, request ',
        { code: `${deps.config.siteUrl}/api/md?path=/calculator?careType=<${CARE_TYPES.join('|')}>&state=<USPS code>&years=<1-30>` },
        ' (also hoursPerWeek, daysPerWeek, annualIncreasePct), or call the MCP tool ',
        { code: DIRECTORY_TOOLS.cost.name },
        ' at ',
        { code: `${deps.config.siteUrl}/api/mcp` },
        ' with the same arguments.',
      ],
    },
  };
  const base = {
    title: 'Long-term-care cost calculator',
    description: `What care costs nationally or in your state, from the ${costs.source.name} medians (${costs.national.year}): monthly, yearly and over several years.`,
    path,
  };
  if (Object.keys(errors).length)
    return {
      ...base,
      status: 400,
      errors: Object.entries(errors).map(([field, message]) => ({ field, message })),
      blocks: [{ kind: 'notice', tone: 'error', content: ['Please correct the form: ', Object.values(errors).join('; '), '.'] }, form],
    };
  if (!estimate) return { ...base, status: 200, blocks: [form] };
  const e = estimate;
  const blocks: Block[] = [
    { kind: 'heading', level: 2, text: `${e.careTypeLabel} in ${e.location.name}` },
    {
      kind: 'facts',
      items: [
        ...e.figures.map((f) => ({ term: FIGURE_TERMS[f.role], value: figureValue(f) })),
        { term: 'Monthly', value: [usd(e.monthly)] },
        { term: 'First year', value: [usd(e.annual)] },
        { term: `Total over ${plural(e.assumptions.years, 'year')}`, value: [usd(e.total)] },
        { term: 'Data', value: [{ text: e.source.name, href: e.source.url }, ` (survey year ${e.dataYear})`] },
      ],
    },
  ];
  if (e.perYear.length > 1)
    blocks.push(projectionChart(e), {
      kind: 'table',
      caption: 'Cost by year',
      head: ['Year', 'Cost'],
      rows: e.perYear.map((y) => [[String(y.year)], [usd(y.annual)]]),
    });
  blocks.push(
    { kind: 'heading', level: 3, text: 'How this was worked out' },
    { kind: 'list', items: e.notes.map((n) => [n]) },
    { kind: 'heading', level: 2, text: 'Try other figures' },
    form,
  );
  return { ...base, status: 200, blocks };
}
