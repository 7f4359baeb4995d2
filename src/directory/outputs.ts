// What each directory tool returns as `structuredContent`: the tools' declared output schemas.
import { z } from 'zod';
import { channelSchema } from './data.js';

const hit = z.object({
  kind: z.enum(['resource', 'channel', 'glossary']),
  id: z.string(),
  title: z.string(),
  summary: z.string(),
  score: z.number(),
  category: z.string().optional(),
  url: z.string().optional(),
  phone: z.string().nullable().optional(),
});

export const searchOutput = z.object({ query: z.string(), count: z.number().int(), results: z.array(hit) });

export const channelOutput = channelSchema.extend({ url: z.string() });

const source = z.object({ name: z.string(), url: z.string() });
const figure = z.object({
  role: z.enum(['rate', 'national', 'visit']),
  what: z.string(),
  scope: z.enum(['national', 'state']),
  area: z.string(),
  amount: z.number(),
  unit: z.string(),
  surveyYear: z.number().int(),
  source,
});

export const costOutput = z.object({
  careType: z.string(),
  careTypeLabel: z.string(),
  surveyCategory: z.object({ careType: z.string(), label: z.string() }),
  location: z.object({ scope: z.enum(['national', 'state']), code: z.string().optional(), name: z.string() }),
  rate: figure,
  dataYear: z.number().int(),
  source,
  figures: z.array(figure),
  assumptions: z.object({ hoursPerWeek: z.number().optional(), daysPerWeek: z.number().optional(), annualIncreasePct: z.number(), years: z.number().int() }),
  monthly: z.number(),
  annual: z.number(),
  perYear: z.array(z.object({ year: z.number().int(), annual: z.number() })),
  total: z.number(),
  notes: z.array(z.string()),
});
