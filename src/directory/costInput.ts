/** Input of the directory tool `calculate_long_term_care_cost`, with the messages its callers see. */
import { z } from 'zod';
import { CARE_TYPES } from './costData.js';
import { resolveState } from './states.js';

/** How to name a state, quoted in every message about one. */
export const STATE_HELP = 'a two-letter USPS code (e.g. "TX") or a full state name (e.g. "Texas"); the 50 states and DC are covered';

export const costInputSchema = z.strictObject({
  careType: z
    .enum(CARE_TYPES, {
      error: () => `careType must be one of: ${CARE_TYPES.join(', ')}`,
    })
    .describe(
      'Kind of care. homemaker and home_health_aide are priced as non_medical_caregiver, as the 2025 survey reports them; private_duty_nurse is skilled nursing at home, priced by the hour.',
    ),
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
    .optional()
    .describe('Hours of in-home care a week: default 44, and 1 for private_duty_nurse (the survey assumptions).'),
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
