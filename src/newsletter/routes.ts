// The newsletter's routes: sign-up on the site API, and the pages behind the links in its mail.
import { errors, jsonContent } from '../http/openapi.js';
import { defineRoutes } from '../slice/contract.js';
import { newsletterRequest, newsletterResponse } from './schema.js';

export const NEWSLETTER_ROUTES = defineRoutes({
  apiNewsletter: {
    hosts: ['site'],
    path: '/api/newsletter',
    methods: ['POST'],
    bodyLimit: 8 * 1024,
    rate: { bucket: 'newsletter', by: 'ip', policy: (c) => ({ capacity: c.rateNewsletterPerHour, refillMs: 3_600_000 / c.rateNewsletterPerHour }) },
    forwardHeaders: ['accept'],
    openapi: (kit) => ({
      post: {
        tags: ['newsletter'],
        summary: 'Subscribe to the newsletter',
        description: `Idempotent per address: subscribing again answers 200 and says so. With mail configured, sign-up is double opt-in (a confirmation mail). ${kit.config.rateNewsletterPerHour} sign-ups an hour per client address.`,
        operationId: 'subscribe_newsletter',
        requestBody: { required: true, content: jsonContent(kit.component('NewsletterRequest', newsletterRequest, 'input')) },
        responses: {
          '200': {
            description: 'Subscribed, confirmation sent, or already subscribed.',
            content: jsonContent(kit.component('NewsletterResponse', newsletterResponse)),
          },
          ...errors('BadRequest', 'MethodNotAllowed', 'PayloadTooLarge', 'UnsupportedMediaType', 'RateLimited', 'Internal', 'Unavailable'),
        },
      },
    }),
  },
  newsletterConfirm: { hosts: ['site'], path: '/newsletter/confirm', methods: ['GET', 'POST'], bodyLimit: 1024 },
  newsletterUnsubscribe: { hosts: ['site'], path: '/newsletter/unsubscribe', methods: ['GET', 'POST'], bodyLimit: 1024 },
});
