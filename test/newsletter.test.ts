// Newsletter sign-up end to end: the error matrix, idempotency, the per-address limit, signed
// unsubscribe links, and double opt-in through a real local SMTP server and a reCAPTCHA double.
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import { randomBytes } from 'node:crypto';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newsletterLink } from '../src/newsletter/links.js';
import { NEWSLETTER_COLLECTION } from '../src/newsletter/store.js';
import { startTestService, type TestService } from './harness/service.js';

let ipCounter = 0;
/** Each test signs up from its own address (TRUST_PROXY is on), so the 5-an-hour limit is its own. */
const freshIp = () => `198.51.100.${++ipCounter}`;

async function subscribe(svc: TestService, body: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${svc.urls.site}/api/newsletter`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-forwarded-for': freshIp(), ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  return {
    status: res.status,
    headers: res.headers,
    text,
    json: res.headers.get('content-type')?.startsWith('application/json') ? (JSON.parse(text) as any) : undefined,
  };
}

function expectApiError(body: any, code: string) {
  expect(body).toMatchObject({ code, message: expect.any(String), hint: expect.any(String), error: { code, message: body.message, hint: body.hint } });
}

const subscriber = (svc: TestService, email: string) => svc.store.db.collection(NEWSLETTER_COLLECTION).findOne({ _id: email as any });

describe('newsletter without mail or reCAPTCHA', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService({ env: { TRUST_PROXY: 'true' } });
  });
  afterAll(async () => svc?.stop());

  it('when an address subscribes twice, then both are 200 and the second says nothing changed', async () => {
    const first = await subscribe(svc, { email: 'Ana@Example.com', firstName: 'Ana' });
    expect(first.status).toBe(200);
    expect(first.json).toEqual({ success: true, status: 'subscribed', message: expect.stringMatching(/subscribed/) });
    const again = await subscribe(svc, { email: 'ana@example.com' });
    expect(again.status).toBe(200);
    expect(again.json).toMatchObject({ success: true, status: 'already_subscribed', message: expect.stringMatching(/already subscribed/) });
    expect(await subscriber(svc, 'ana@example.com')).toMatchObject({ status: 'active', firstName: 'Ana' });
  });

  it('when two sign-ups for one address race, then one subscriber exists and both answers are 200', async () => {
    const results = await Promise.all([1, 2, 3, 4].map(() => subscribe(svc, { email: 'race@example.com' })));
    expect(results.map((r) => r.status)).toEqual([200, 200, 200, 200]);
    expect(results.filter((r) => r.json.status === 'subscribed')).toHaveLength(1);
    expect(await svc.store.db.collection(NEWSLETTER_COLLECTION).countDocuments({ _id: 'race@example.com' as any })).toBe(1);
  });

  it('when the body is wrong, then 400 naming the field and what is allowed', async () => {
    const cases: [unknown, string, RegExp][] = [
      [{}, 'VALIDATION_FAILED', /email/],
      [{ email: 'not-an-address' }, 'VALIDATION_FAILED', /email must be an email address/],
      [{ email: `${'a'.repeat(250)}@example.com` }, 'VALIDATION_FAILED', /email must be at most 254/],
      [{ email: 'a@example.com', firstName: 'x'.repeat(81) }, 'VALIDATION_FAILED', /firstName must be at most 80 characters/],
      [{ email: 'a@example.com', firstName: 42 }, 'VALIDATION_FAILED', /firstName must be a string/],
      [{ email: 'a@example.com', favouriteColour: 'blue' }, 'VALIDATION_FAILED', /unknown field "favouriteColour"/],
      [['a@example.com'], 'BAD_REQUEST', /JSON object/],
      ['{"email": ', 'BAD_REQUEST', /not valid JSON/],
    ];
    for (const [body, code, message] of cases) {
      const res = await subscribe(svc, body);
      expect(res.status, JSON.stringify(body).slice(0, 60)).toBe(400);
      expectApiError(res.json, code);
      expect(res.json.message, JSON.stringify(body).slice(0, 60)).toMatch(message);
      expect(res.json.hint).toBeTruthy();
    }
    const wrongType = await subscribe(svc, 'email=a@example.com', { 'content-type': 'text/plain' });
    expect(wrongType.status).toBe(415);
    expectApiError(wrongType.json, 'UNSUPPORTED_MEDIA_TYPE');
    const tooLarge = await subscribe(svc, { email: 'a@example.com', firstName: 'x'.repeat(10_000) });
    expect(tooLarge.status).toBe(413);
  });

  it('when another method is used, then 405 with Allow: POST as ApiError', async () => {
    for (const method of ['GET', 'PUT', 'DELETE', 'PATCH']) {
      const res = await fetch(`${svc.urls.site}/api/newsletter`, { method });
      expect(res.status, method).toBe(405);
      expect(res.headers.get('allow'), method).toBe('POST');
      expectApiError(await res.json(), 'METHOD_NOT_ALLOWED');
    }
  });

  it('when one address signs up more than 5 times in an hour, then 429 with Retry-After; another address is unaffected', async () => {
    const ip = '203.0.113.77';
    for (let i = 0; i < 5; i++) expect((await subscribe(svc, { email: `burst${i}@example.com` }, { 'x-forwarded-for': ip })).status).toBe(200);
    const limited = await subscribe(svc, { email: 'burst5@example.com' }, { 'x-forwarded-for': ip });
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expectApiError(limited.json, 'RATE_LIMITED');
    expect((await subscribe(svc, { email: 'burst5@example.com' })).status).toBe(200);
  });

  it('when the site form posts, then the answer is a page for the person', async () => {
    const res = await subscribe(svc, new URLSearchParams({ email: 'form@example.com', firstName: '' }).toString(), {
      'content-type': 'application/x-www-form-urlencoded',
      accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8',
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    expect(res.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(res.text).toContain('You are subscribed');
    const bad = await subscribe(svc, 'email=nope', { 'content-type': 'application/x-www-form-urlencoded', accept: 'text/html' });
    expect(bad.status).toBe(400);
    expect(bad.text).toContain('email must be an email address');
  });

  it('when the signed unsubscribe link is used, then GET asks and POST unsubscribes; a changed link is refused', async () => {
    await subscribe(svc, { email: 'leaving@example.com' });
    const link = newsletterLink(svc.config, 'unsubscribe', 'leaving@example.com').replace(svc.config.siteUrl, svc.urls.site!);
    const ask = await fetch(link);
    expect(ask.status).toBe(200);
    expect(await ask.text()).toMatch(/<form[^>]+method="post"/);
    expect((await subscriber(svc, 'leaving@example.com'))?.status).toBe('active');

    // RFC 8058 one-click: the mail client POSTs List-Unsubscribe=One-Click to the same URL.
    const done = await fetch(link, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'List-Unsubscribe=One-Click' });
    expect(done.status).toBe(200);
    expect(await done.text()).toContain('no more newsletter mail');
    expect((await subscriber(svc, 'leaving@example.com'))?.status).toBe('unsubscribed');
    expect((await fetch(link, { method: 'POST' })).status).toBe(200);

    const forged = new URL(link);
    forged.searchParams.set('email', 'someone-else@example.com');
    expect((await fetch(forged, { method: 'POST' })).status).toBe(400);
    const confirmAsUnsubscribe = newsletterLink(svc.config, 'confirm', 'ana@example.com')
      .replace('/newsletter/confirm', '/newsletter/unsubscribe')
      .replace(svc.config.siteUrl, svc.urls.site!);
    expect((await fetch(confirmAsUnsubscribe, { method: 'POST' })).status).toBe(400);
    expect((await subscriber(svc, 'ana@example.com'))?.status).toBe('active');

    const back = await subscribe(svc, { email: 'leaving@example.com' });
    expect(back.json.status).toBe('subscribed');
  });
});

interface ReceivedMail {
  to: string[];
  raw: string;
}

/** Quoted-printable bodies and folded headers, read back as plain text. */
function readable(raw: string): string {
  return raw
    .replace(/=\r?\n/g, '')
    .replace(/=([0-9A-F]{2})/g, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16)))
    .replace(/\r?\n[ \t]+/g, ' ');
}

describe('newsletter with double opt-in and reCAPTCHA', () => {
  let svc: TestService;
  let smtp: SMTPServer;
  let recaptcha: Server;
  const mails: ReceivedMail[] = [];
  const verifyCalls: URLSearchParams[] = [];
  const secret = `secret-${randomBytes(4).toString('hex')}`;

  beforeAll(async () => {
    smtp = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS', 'AUTH'],
      logger: false,
      onRcptTo(address, _session, callback) {
        if (address.address.startsWith('bounce')) return callback(new Error('550 no such mailbox'));
        callback();
      },
      onData(stream, session, callback) {
        const chunks: Buffer[] = [];
        stream.on('data', (c: Buffer) => chunks.push(c));
        stream.on('end', () => {
          mails.push({ to: session.envelope.rcptTo.map((r) => r.address), raw: Buffer.concat(chunks).toString('utf8') });
          callback();
        });
      },
    });
    smtp.listen(0, '127.0.0.1');
    await once(smtp.server, 'listening');
    const smtpPort = (smtp.server.address() as { port: number }).port;

    recaptcha = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const form = new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
        verifyCalls.push(form);
        const token = form.get('response');
        if (token === 'explode') return void res.writeHead(500).end();
        const reply =
          form.get('secret') !== secret
            ? { success: false, 'error-codes': ['invalid-input-secret'] }
            : token === 'good'
              ? { success: true, score: 0.9, action: 'newsletter' }
              : token === 'bot'
                ? { success: true, score: 0.1, action: 'newsletter' }
                : { success: false, 'error-codes': ['invalid-input-response'] };
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(reply));
      });
    });
    recaptcha.listen(0, '127.0.0.1');
    await once(recaptcha, 'listening');
    const recaptchaPort = (recaptcha.address() as { port: number }).port;

    svc = await startTestService({
      env: {
        TRUST_PROXY: 'true',
        SMTP_URL: `smtp://127.0.0.1:${smtpPort}`,
        MAIL_FROM: 'carecircle <newsletter@carecircle.test>',
        RECAPTCHA_SECRET: secret,
        RECAPTCHA_VERIFY_URL: `http://127.0.0.1:${recaptchaPort}/siteverify`,
        NEWSLETTER_SECRET: 'a-test-signing-key',
      },
    });
  });
  afterAll(async () => {
    await svc?.stop();
    await new Promise<void>((resolve) => smtp.close(() => resolve()));
    recaptcha?.closeAllConnections();
    await new Promise<void>((resolve) => recaptcha.close(() => resolve()));
  });

  it('when reCAPTCHA is configured, then a missing, failed or low-score token is 400 naming recaptchaToken', async () => {
    for (const [token, message] of [
      [undefined, /recaptchaToken is required/],
      ['forged', /recaptchaToken: the reCAPTCHA check failed \(invalid-input-response\)/],
      ['bot', /recaptchaToken: the reCAPTCHA score is too low/],
    ] as const) {
      const res = await subscribe(svc, { email: 'robot@example.com', ...(token ? { recaptchaToken: token } : {}) });
      expect(res.status, String(token)).toBe(400);
      expectApiError(res.json, 'VALIDATION_FAILED');
      expect(res.json.message).toMatch(message);
    }
    expect(await subscriber(svc, 'robot@example.com')).toBeNull();
  });

  it('when the verify endpoint fails, then 503 with Retry-After, and nothing is stored', async () => {
    const res = await subscribe(svc, { email: 'later@example.com', recaptchaToken: 'explode' });
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBeTruthy();
    expectApiError(res.json, 'UNAVAILABLE');
    expect(await subscriber(svc, 'later@example.com')).toBeNull();
  });

  it('when a person signs up, then a confirmation mail with signed links arrives and confirming activates the subscription', async () => {
    const ip = '192.0.2.10';
    const res = await subscribe(svc, { email: 'Bea@Example.com', firstName: 'Bea', recaptchaToken: 'good' }, { 'x-forwarded-for': ip });
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ success: true, status: 'confirmation_sent' });
    expect(verifyCalls.at(-1)?.get('remoteip')).toBe(ip);
    expect(await subscriber(svc, 'bea@example.com')).toMatchObject({ status: 'pending' });

    const mail = mails.find((m) => m.to.includes('bea@example.com'));
    expect(mail).toBeDefined();
    const text = readable(mail!.raw);
    expect(text).toMatch(/^From: carecircle <newsletter@carecircle\.test>/m);
    expect(text).toContain('Hello Bea,');
    const confirm = newsletterLink(svc.config, 'confirm', 'bea@example.com');
    const unsubscribe = newsletterLink(svc.config, 'unsubscribe', 'bea@example.com');
    expect(text).toContain(confirm);
    expect(text).toMatch(new RegExp(`^List-Unsubscribe: <${unsubscribe.replace(/[.?*+^$[\]\\(){}|-]/g, '\\$&')}>`, 'm'));
    expect(text).toMatch(/^List-Unsubscribe-Post: List-Unsubscribe=One-Click/m);

    const local = confirm.replace(svc.config.siteUrl, svc.urls.site!);
    const page = await fetch(local);
    expect(page.status).toBe(200);
    expect(await subscriber(svc, 'bea@example.com')).toMatchObject({ status: 'pending' });
    const confirmed = await fetch(local, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: '' });
    expect(confirmed.status).toBe(200);
    expect(await confirmed.text()).toContain('Subscription confirmed');
    expect(await subscriber(svc, 'bea@example.com')).toMatchObject({ status: 'active', confirmedAt: expect.any(Date) });

    const again = await subscribe(svc, { email: 'bea@example.com', recaptchaToken: 'good' });
    expect(again.json.status).toBe('already_subscribed');
  });

  it('when a pending address signs up again at once, then 200 already_pending and no second mail', async () => {
    await subscribe(svc, { email: 'twice@example.com', recaptchaToken: 'good' });
    const count = () => mails.filter((m) => m.to.includes('twice@example.com')).length;
    expect(count()).toBe(1);
    const again = await subscribe(svc, { email: 'twice@example.com', recaptchaToken: 'good' });
    expect(again.status).toBe(200);
    expect(again.json).toMatchObject({ success: true, status: 'already_pending' });
    expect(count()).toBe(1);
  });

  it('when the mail server refuses the address, then 500 as ApiError and a later sign-up sends the mail', async () => {
    const res = await subscribe(svc, { email: 'bounce@example.com', recaptchaToken: 'good' });
    expect(res.status).toBe(500);
    expectApiError(res.json, 'INTERNAL');
    expect(await subscriber(svc, 'bounce@example.com')).toMatchObject({ status: 'pending' });
    expect((await subscriber(svc, 'bounce@example.com'))?.mailedAt).toBeUndefined();
  });
});

describe('newsletter when the store fails', () => {
  let gateway: TestService;
  let worker: TestService;
  beforeAll(async () => {
    const ns = `t${randomBytes(4).toString('hex')}`;
    worker = await startTestService({ role: 'worker', nats: true, env: { BUS_NAMESPACE: ns } });
    gateway = await startTestService({ role: 'gateway', nats: true, mongoUrl: worker.mongoUrl, env: { BUS_NAMESPACE: ns } });
  });
  afterAll(async () => {
    await gateway?.stop();
    await worker?.stop();
  });

  it('when the worker cannot reach MongoDB, then 503 as ApiError with Retry-After: a transient failure, never a 500', async () => {
    expect((await subscribe(gateway, { email: 'before@example.com' })).status).toBe(200);
    await worker.store.client.close();
    const res = await subscribe(gateway, { email: 'after@example.com' });
    expect(res.status).toBe(503);
    expectApiError(res.json, 'UNAVAILABLE');
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
  });
});
