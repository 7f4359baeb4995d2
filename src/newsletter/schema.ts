// The newsletter's wire shapes: what a subscriber sends and what the API answers.
import { z } from 'zod';

export const FIRST_NAME_MAX = 80;

export const newsletterRequest = z
  .object({
    email: z
      .email({ error: 'email must be an email address such as name@example.com' })
      .max(254, 'email must be at most 254 characters')
      .describe('The address to subscribe.'),
    firstName: z
      .string({ error: 'firstName must be a string' })
      .trim()
      .max(FIRST_NAME_MAX, `firstName must be at most ${FIRST_NAME_MAX} characters`)
      .optional()
      .describe('How to greet the subscriber (optional).'),
    recaptchaToken: z
      .string({ error: 'recaptchaToken must be a string' })
      .max(4000, 'recaptchaToken must be at most 4000 characters')
      .optional()
      .describe('A reCAPTCHA response token; required when the site has reCAPTCHA configured.'),
  })
  .strict();
export type NewsletterRequest = z.infer<typeof newsletterRequest>;

export const NEWSLETTER_STATUSES = ['subscribed', 'confirmation_sent', 'already_subscribed', 'already_pending'] as const;

export const newsletterResponse = z.object({
  success: z.boolean(),
  message: z.string(),
  status: z
    .enum(NEWSLETTER_STATUSES)
    .describe('subscribed: active now; confirmation_sent: a confirmation mail was sent (double opt-in); already_*: nothing changed.'),
});
export type NewsletterResponse = z.infer<typeof newsletterResponse>;
