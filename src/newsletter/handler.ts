// The newsletter slice's worker handler: sign-up (JSON for agents, HTML for the site's form),
// double opt-in confirmation and one-click unsubscribe by signed links.
import type { Db } from 'mongodb';
import type { Config } from '../config.js';
import type { Logger } from '../log.js';
import type { Page } from '../site/doc.js';
import { PAGE_HEADERS, renderHtml } from '../site/layout.js';
import { preferredType } from '../http/negotiate.js';
import { describeIssues } from '../http/problems.js';
import type { HttpReplyEnvelope, HttpRequestEnvelope } from '../bus/envelopes.js';
import { ApiProblem, json, text } from '../http/reply.js';
import { handlers, type RouteHandlers } from '../slice/contract.js';
import { newsletterLink, verifyLinkToken, type LinkPurpose } from './links.js';
import { createMailer, type Mailer } from './mailer.js';
import { RecaptchaUnavailableError, verifyRecaptcha } from './recaptcha.js';
import { NEWSLETTER_ROUTES } from './routes.js';
import { newsletterRequest, type NewsletterResponse } from './schema.js';
import { NewsletterStore, type SubscriberRecord } from './store.js';

/** A pending sign-up gets the confirmation mail again at most this often. */
const RESEND_AFTER_MS = 10 * 60_000;

const HINT = 'Send JSON {"email": "name@example.com", "firstName": "optional", "recaptchaToken": "when required"}.';

export interface NewsletterDeps {
  config: Config;
  store: NewsletterStore;
  mailer?: Mailer;
  clock?: () => number;
}

function htmlReply(status: number, page: Page, config: Config): HttpReplyEnvelope {
  return text(status, renderHtml(page, config), 'text/html; charset=utf-8', {
    ...PAGE_HEADERS,
    'cache-control': 'no-store',
    vary: 'Accept, Accept-Encoding',
  });
}

const messagePage = (status: number, title: string, message: string, path: string): Page => ({
  status,
  title,
  description: message,
  path,
  blocks: [{ kind: 'para', content: [{ text: 'Back to the directory', href: '/' }] }],
});

function confirmationMail(config: Config, email: string, firstName: string | undefined) {
  const confirm = newsletterLink(config, 'confirm', email);
  const unsubscribe = newsletterLink(config, 'unsubscribe', email);
  return {
    to: email,
    subject: 'Confirm your carecircle newsletter subscription',
    text: [
      `Hello${firstName ? ` ${firstName}` : ''},`,
      '',
      'Someone (we hope you) asked to receive the carecircle newsletter for family caregivers at this address.',
      'To confirm, open this link:',
      '',
      confirm,
      '',
      'If this was not you, ignore this mail: nothing will be sent unless you confirm.',
      `To stop all mail from us: ${unsubscribe}`,
      '',
      'carecircle',
    ].join('\n'),
    headers: { 'List-Unsubscribe': `<${unsubscribe}>`, 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' },
  };
}

/** Form posts send empty strings for empty fields; the API treats them as absent. */
function normaliseBody(body: unknown): unknown {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return body;
  return Object.fromEntries(Object.entries(body).filter(([, v]) => v !== ''));
}

export function newsletterRoutes(deps: NewsletterDeps): RouteHandlers {
  const { config, store, mailer } = deps;
  const now = deps.clock ?? Date.now;

  async function sendConfirmation(email: string, firstName: string | undefined, log: Logger): Promise<void> {
    if (!mailer) return;
    try {
      await mailer.send(confirmationMail(config, email, firstName));
    } catch (err) {
      // The address is personal data: log the failure, never the address.
      log.error({ err: err instanceof Error ? err.message : String(err) }, 'newsletter confirmation mail failed');
      throw new ApiProblem(
        500,
        'INTERNAL',
        'We could not send the confirmation mail',
        'Try again in a few minutes; your sign-up is kept and the mail will be sent again.',
      );
    }
    await store.markMailed(email);
  }

  async function subscribe(req: HttpRequestEnvelope, log: Logger): Promise<NewsletterResponse> {
    const body = normaliseBody(req.body);
    if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new ApiProblem(400, 'BAD_REQUEST', 'the body must be a JSON object', HINT);
    const parsed = newsletterRequest.safeParse(body);
    if (!parsed.success) throw new ApiProblem(400, 'VALIDATION_FAILED', describeIssues(parsed.error), HINT);
    const email = parsed.data.email.toLowerCase();
    const firstName = parsed.data.firstName || undefined;

    if (config.recaptchaSecret) {
      if (!parsed.data.recaptchaToken)
        throw new ApiProblem(
          400,
          'VALIDATION_FAILED',
          'recaptchaToken is required on this site',
          'Complete the reCAPTCHA and send its token as recaptchaToken.',
        );
      try {
        const verdict = await verifyRecaptcha(config, parsed.data.recaptchaToken, req.clientIp);
        if (!verdict.ok)
          throw new ApiProblem(
            400,
            'VALIDATION_FAILED',
            `recaptchaToken: ${verdict.reason}`,
            'Complete a fresh reCAPTCHA and send its new token; tokens are valid once, for two minutes.',
          );
      } catch (err) {
        if (err instanceof RecaptchaUnavailableError) {
          log.warn({ err: err.message }, 'recaptcha unavailable');
          throw new ApiProblem(503, 'UNAVAILABLE', 'The reCAPTCHA check is unavailable right now', 'Try again in a minute.', { 'retry-after': '30' });
        }
        throw err;
      }
    }

    const outcome = await store.subscribe(email, firstName, mailer !== undefined);
    if (outcome.kind === 'created' || outcome.kind === 'resubscribed') {
      if (outcome.status === 'active') return { success: true, status: 'subscribed', message: 'You are subscribed to the carecircle newsletter.' };
      await sendConfirmation(email, firstName, log);
      return { success: true, status: 'confirmation_sent', message: 'Almost done: open the link in the mail we just sent to confirm your subscription.' };
    }
    return existing(outcome.record, email, log);
  }

  async function existing(record: SubscriberRecord, email: string, log: Logger): Promise<NewsletterResponse> {
    if (record.status === 'active') return { success: true, status: 'already_subscribed', message: 'This address is already subscribed; nothing changed.' };
    if (mailer && (!record.mailedAt || now() - record.mailedAt.getTime() > RESEND_AFTER_MS)) {
      await sendConfirmation(email, record.firstName, log);
      return {
        success: true,
        status: 'already_pending',
        message: 'This address is already signed up and waiting for confirmation; we sent the confirmation mail again.',
      };
    }
    return {
      success: true,
      status: 'already_pending',
      message: 'This address is already signed up and waiting for confirmation; open the link in the mail we sent.',
    };
  }

  /** Confirm and unsubscribe links: GET shows a button (mail scanners prefetch links), POST acts. */
  function signedLinkPage(purpose: LinkPurpose) {
    const path = `/newsletter/${purpose}`;
    return async (req: HttpRequestEnvelope): Promise<HttpReplyEnvelope> => {
      const email = (req.query.email ?? '').toLowerCase();
      const token = req.query.token ?? '';
      if (!email || !token || email.length > 254 || token.length > 100 || !verifyLinkToken(config.newsletterSecret, purpose, email, token))
        return htmlReply(
          400,
          messagePage(
            400,
            'This link is not valid',
            'The link is incomplete or was changed. Copy the whole link from the mail, or sign up again on the home page.',
            path,
          ),
          config,
        );
      const self = `${path}?${new URLSearchParams({ email, token }).toString()}`;
      if (req.method === 'GET') {
        const page: Page = {
          status: 200,
          title: purpose === 'confirm' ? 'Confirm your subscription' : 'Unsubscribe',
          description:
            purpose === 'confirm' ? `Confirm that ${email} should receive the carecircle newsletter.` : `Stop all carecircle newsletter mail to ${email}.`,
          path,
          blocks: [
            {
              kind: 'form',
              form: {
                action: self,
                method: 'post',
                label: purpose === 'confirm' ? 'Confirm subscription' : 'Unsubscribe',
                fields: [],
                submit: purpose === 'confirm' ? 'Confirm my subscription' : 'Unsubscribe me',
                markdown: [`POST this same URL to ${purpose}.`],
              },
            },
          ],
        };
        return htmlReply(200, page, config);
      }
      if (purpose === 'confirm') {
        const result = await store.confirm(email);
        if (result === 'unknown' || result === 'unsubscribed')
          return htmlReply(
            404,
            messagePage(404, 'No sign-up to confirm', 'This address has no pending sign-up (it may have unsubscribed). Sign up again on the home page.', path),
            config,
          );
        return htmlReply(
          200,
          messagePage(
            200,
            'Subscription confirmed',
            result === 'confirmed' ? 'Thank you: you will receive the carecircle newsletter.' : 'This address was already confirmed; nothing changed.',
            path,
          ),
          config,
        );
      }
      const result = await store.unsubscribe(email);
      const message =
        result === 'unsubscribed' ? 'You will get no more newsletter mail from carecircle.' : 'This address receives no newsletter mail; nothing changed.';
      return htmlReply(200, messagePage(200, 'Unsubscribed', message, path), config);
    };
  }

  return handlers(NEWSLETTER_ROUTES)
    .on('apiNewsletter', 'POST', async (req, _params, log) => {
      const asHtml = preferredType(req.headers.accept, ['application/json', 'text/html']) === 'text/html';
      try {
        const result = await subscribe(req, log);
        if (!asHtml) return json(200, result);
        return htmlReply(
          200,
          messagePage(200, result.status === 'confirmation_sent' ? 'Check your inbox' : 'Newsletter', result.message, '/api/newsletter'),
          config,
        );
      } catch (err) {
        if (!(err instanceof ApiProblem) || !asHtml) throw err;
        return htmlReply(err.status, messagePage(err.status, 'Sign-up not completed', err.message, '/api/newsletter'), config);
      }
    })
    .on('newsletterConfirm', 'GET', signedLinkPage('confirm'))
    .on('newsletterConfirm', 'POST', signedLinkPage('confirm'))
    .on('newsletterUnsubscribe', 'GET', signedLinkPage('unsubscribe'))
    .on('newsletterUnsubscribe', 'POST', signedLinkPage('unsubscribe'))
    .done();
}

export function newsletterHandlers(config: Config, db: Db, mailer: Mailer | undefined = createMailer(config)): RouteHandlers {
  return newsletterRoutes({ config, store: new NewsletterStore(db), ...(mailer ? { mailer } : {}) });
}
