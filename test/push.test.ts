// Web push end to end over real HTTP: a browser's subscription posted to the app, a message sent
// through our own loopback push service (VAPID checked, aes128gcm decrypted), its answers sorted,
// and the Settings list with removal by plain forms.
import { createECDH, generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../src/log.js';
import { PushMessageError, pushSender, type PushSender } from '../src/push/send.js';
import { MAX_DEVICES, PUSH_SUBSCRIPTIONS, subscriptionInput, type PushSubscriptionRecord } from '../src/push/subscriptions.js';
import { resolveVapid, VAPID_FILE, VapidError } from '../src/push/vapid.js';
import { signIn } from './harness/identity.js';
import { startPushService, type PushService } from './harness/pushService.js';
import { startTestService, type TestService } from './harness/service.js';

const vapidKeys = (() => {
  const ecdh = createECDH('prime256v1');
  ecdh.setPrivateKey(Buffer.from(Array.from({ length: 32 }, (_, i) => 200 - i * 5)));
  return { publicKey: ecdh.getPublicKey('base64url'), privateKey: ecdh.getPrivateKey('base64url') };
})();
const CHROME_LINUX = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/142.0.0.0 Safari/537.36';

let svc: TestService;
let pushes: PushService;
let sender: PushSender;

beforeAll(async () => {
  [svc, pushes] = await Promise.all([
    startTestService({
      env: { VAPID_PUBLIC_KEY: vapidKeys.publicKey, VAPID_PRIVATE_KEY: vapidKeys.privateKey, VAPID_SUBJECT: 'mailto:ops@carecircle.example' },
    }),
    startPushService(),
  ]);
  sender = pushSender(svc.config, svc.store.db, createLogger('silent'));
});
afterAll(async () => {
  await svc?.stop();
  await pushes?.close();
});

const origin = () => new URL(svc.config.appUrl).origin;
const subscriptions = () => svc.store.db.collection<PushSubscriptionRecord>(PUSH_SUBSCRIPTIONS);

/** POST a subscription as the Settings script does: the session cookie, our Origin, the browser's User-Agent. */
async function subscribe(cookie: string, body: unknown) {
  const res = await fetch(`${svc.urls.app}/api/push/subscriptions`, {
    method: 'POST',
    headers: { cookie, origin: origin(), 'content-type': 'application/json', 'user-agent': CHROME_LINUX },
    body: JSON.stringify(body),
  });
  return { status: res.status, cookie: res.headers.get('set-cookie'), json: (await res.json()) as any };
}

/** A person signed in with one browser subscribed: their uid, cookies and the subscriber's keys. */
async function subscribedPerson(email: string) {
  const cookie = await signIn(svc, email);
  const subscriber = pushes.subscriber();
  const res = await subscribe(cookie, { endpoint: subscriber.endpoint, expirationTime: null, keys: subscriber.keys });
  expect(res.status, JSON.stringify(res.json)).toBe(201);
  const record = (await subscriptions().findOne({ _id: res.json.id }))!;
  return { cookie, deviceCookie: res.cookie!.split(';')[0]!, subscriber, id: res.json.id as string, uid: record.uid };
}

const page = async (cookie: string, p: string) => {
  const res = await fetch(`${svc.urls.app}${p}`, { headers: { cookie }, redirect: 'manual' });
  return { status: res.status, location: res.headers.get('location'), html: await res.text() };
};
const form = async (cookie: string, p: string) => {
  const res = await fetch(`${svc.urls.app}${p}`, {
    method: 'POST',
    headers: { cookie, origin: origin(), 'content-type': 'application/x-www-form-urlencoded' },
    body: '',
    redirect: 'manual',
  });
  return { status: res.status, location: res.headers.get('location'), html: await res.text() };
};

describe('push - sending', () => {
  it('when a person subscribed a browser and a message is sent, then the push service gets it signed for its origin and it decrypts to the title, body and url', async () => {
    const { uid, subscriber, id } = await subscribedPerson('push-sent@example.com');
    const outcomes = await sender.sendPush(uid, {
      title: 'Missed dose',
      body: 'Rosa’s 8:00 metformin is not marked taken.',
      url: '/care/lo1',
      tag: 'dose-lo1',
    });
    expect(outcomes).toEqual([{ subscriptionId: id, device: 'Chrome on Linux', status: 'sent', statusCode: 201 }]);
    const got = pushes.received.filter((r) => r.subscriberId === subscriber.id);
    expect(got).toHaveLength(1);
    expect(got[0]!.payload).toEqual({
      title: 'Missed dose',
      body: 'Rosa’s 8:00 metformin is not marked taken.',
      url: `${svc.config.appUrl}/care/lo1`,
      tag: 'dose-lo1',
    });
    expect(got[0]!.vapidKey).toBe(vapidKeys.publicKey);
    expect(got[0]!.claims).toMatchObject({ aud: pushes.origin, sub: 'mailto:ops@carecircle.example' });
    expect(got[0]).toMatchObject({ ttl: '86400', urgency: 'normal' });
    expect(got[0]!.topic).toMatch(/^[A-Za-z0-9_-]{32}$/);
    // A fall is urgent and stale within the hour.
    await sender.sendPush(uid, { title: 'Fall', body: 'A fall was reported.', url: '/care/lo1' }, { urgency: 'high', ttlSeconds: 3600 });
    expect(pushes.received.filter((r) => r.subscriberId === subscriber.id)[1]).toMatchObject({ ttl: '3600', urgency: 'high', topic: undefined });
    expect(pushes.refused.filter((r) => r.subscriberId === subscriber.id)).toEqual([]);
  });

  it('when the push service answers 410 or 404, then that subscription is reported gone and removed, and the next message skips it', async () => {
    const { uid, subscriber, id, cookie } = await subscribedPerson('push-gone@example.com');
    const second = pushes.subscriber();
    expect((await subscribe(cookie, { endpoint: second.endpoint, keys: second.keys })).status).toBe(201);
    pushes.answer(subscriber.id, { status: 410 });
    pushes.answer(second.id, { status: 404 });
    const outcomes = await sender.sendPush(uid, { title: 'Reading out of range', body: 'Blood pressure 182/110.', url: '/' });
    expect(outcomes.map((o) => [o.status, o.statusCode]).sort()).toEqual([
      ['gone', 404],
      ['gone', 410],
    ]);
    expect(await subscriptions().countDocuments({ uid })).toBe(0);
    expect(await subscriptions().findOne({ _id: id })).toBeNull();
    expect(await sender.sendPush(uid, { title: 'Again', body: '', url: '/' })).toEqual([]);
  });

  it('when the push service answers 429 or 503 with Retry-After, then the outcome is a retryable failure carrying the wait, and the subscription stays', async () => {
    const { uid, subscriber, id } = await subscribedPerson('push-busy@example.com');
    pushes.answer(subscriber.id, { status: 429, headers: { 'retry-after': '120' } });
    expect(await sender.sendPush(uid, { title: 'Missed dose', body: '', url: '/' })).toEqual([
      {
        subscriptionId: id,
        device: 'Chrome on Linux',
        status: 'failed',
        statusCode: 429,
        retryable: true,
        retryAfterSeconds: 120,
        reason: 'the push service asks us to slow down',
      },
    ]);
    pushes.answer(subscriber.id, { status: 503, headers: { 'retry-after': new Date(Date.now() + 90_000).toUTCString() } });
    const [outcome] = await sender.sendPush(uid, { title: 'Missed dose', body: '', url: '/' });
    expect(outcome).toMatchObject({ status: 'failed', statusCode: 503, retryable: true });
    expect((outcome as { retryAfterSeconds: number }).retryAfterSeconds).toBeGreaterThan(80);
    expect((outcome as { retryAfterSeconds: number }).retryAfterSeconds).toBeLessThanOrEqual(90);
    // A refusal that would repeat (a payload too large) is not worth retrying.
    pushes.answer(subscriber.id, { status: 413 });
    expect(await sender.sendPush(uid, { title: 'Missed dose', body: '', url: '/' })).toMatchObject([{ status: 'failed', statusCode: 413, retryable: false }]);
    expect(await subscriptions().findOne({ _id: id })).not.toBeNull();
  });

  it('when the push service cannot be reached, then the outcome is a retryable failure without a status', async () => {
    const cookie = await signIn(svc, 'push-away@example.com');
    const gone = await startPushService();
    const subscriber = gone.subscriber();
    await gone.close();
    const res = await subscribe(cookie, { endpoint: subscriber.endpoint, keys: subscriber.keys });
    const { uid } = (await subscriptions().findOne({ _id: res.json.id }))!;
    expect(await sender.sendPush(uid, { title: 'Missed dose', body: '', url: '/' })).toMatchObject([
      { status: 'failed', retryable: true, reason: 'the push service could not be reached' },
    ]);
    expect((await sender.sendPush(uid, { title: 'x', body: '', url: '/' }))[0]).not.toHaveProperty('statusCode');
  });

  it('when a message names a page on another origin or is too long, then sending refuses it naming the field', async () => {
    await expect(sender.sendPush('nobody', { title: 'Fall', body: '', url: 'https://evil.example/care' })).rejects.toThrow(PushMessageError);
    await expect(sender.sendPush('nobody', { title: 'Fall', body: '', url: '//evil.example/care' })).rejects.toThrow(/url: must be a path of the app/);
    await expect(sender.sendPush('nobody', { title: '', body: '', url: '/' })).rejects.toThrow(/title: is required/);
    await expect(sender.sendPush('nobody', { title: 'x', body: 'y'.repeat(501), url: '/' })).rejects.toThrow(/body: must be at most 500 characters/);
  });
});

describe('push - subscribing', () => {
  it('when a subscription is malformed, then it is refused with 400 naming the field, and nothing is stored', async () => {
    const cookie = await signIn(svc, 'push-bad@example.com');
    const good = pushes.subscriber();
    const offCurve = Buffer.concat([Buffer.from([4]), Buffer.alloc(64, 1)]).toString('base64url');
    const cases: [unknown, RegExp][] = [
      [{ keys: good.keys }, /^endpoint: is required/],
      [{ endpoint: 'http://push.example/abc', keys: good.keys }, /^endpoint: must be an https URL/],
      [{ endpoint: 'ftp://push.example/abc', keys: good.keys }, /^endpoint: must be an https URL/],
      [{ endpoint: `https://push.example/${'a'.repeat(2048)}`, keys: good.keys }, /^endpoint: must be at most 2048 characters/],
      [{ endpoint: 'https://user:pw@push.example/abc', keys: good.keys }, /^endpoint: must not carry a user name or password/],
      [{ endpoint: good.endpoint }, /^keys: is required/],
      [
        { endpoint: good.endpoint, keys: { ...good.keys, p256dh: good.keys.p256dh.slice(2) } },
        /^keys\.p256dh: must be the browser’s P-256 public key: 65 bytes/,
      ],
      [{ endpoint: good.endpoint, keys: { ...good.keys, p256dh: offCurve } }, /^keys\.p256dh: must be a point on P-256/],
      [{ endpoint: good.endpoint, keys: { ...good.keys, auth: 'not base64url!' } }, /^keys\.auth: must be the authentication secret: 16 bytes/],
      [
        { endpoint: good.endpoint, keys: { ...good.keys, auth: Buffer.alloc(32).toString('base64url') } },
        /^keys\.auth: must be the authentication secret: 16 bytes/,
      ],
    ];
    for (const [body, message] of cases) {
      const res = await subscribe(cookie, body);
      expect(res.status, JSON.stringify(body).slice(0, 120)).toBe(400);
      expect(res.json.code).toBe('VALIDATION_FAILED');
      expect(res.json.message).toMatch(message);
    }
    expect(await subscriptions().countDocuments({ endpoint: good.endpoint })).toBe(0);
  });

  it('when a post comes from another origin or without a session, then it is refused before anything is stored', async () => {
    const cookie = await signIn(svc, 'push-csrf@example.com');
    const s = pushes.subscriber();
    const crossSite = await fetch(`${svc.urls.app}/api/push/subscriptions`, {
      method: 'POST',
      headers: { cookie, origin: 'https://evil.example', 'content-type': 'application/json' },
      body: JSON.stringify({ endpoint: s.endpoint, keys: s.keys }),
    });
    expect(crossSite.status).toBe(403);
    const signedOut = await fetch(`${svc.urls.app}/api/push/subscriptions`, {
      method: 'POST',
      headers: { origin: origin(), 'content-type': 'application/json' },
      body: JSON.stringify({ endpoint: s.endpoint, keys: s.keys }),
    });
    expect(signedOut.status).toBe(401);
    expect(await subscriptions().countDocuments({ endpoint: s.endpoint })).toBe(0);
  });

  it('when production checks an endpoint, then only https on a public name passes; development also takes loopback http', () => {
    const keys = pushes.subscriber().keys;
    const production = subscriptionInput({ allowLoopback: false });
    const development = subscriptionInput({ allowLoopback: true });
    const problem = (schema: typeof production, endpoint: string) => {
      const r = schema.safeParse({ endpoint, keys });
      return r.success ? undefined : r.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    };
    expect(problem(production, 'https://fcm.googleapis.com/fcm/send/abc')).toBeUndefined();
    expect(problem(production, 'http://127.0.0.1:9000/push/1')).toBe('endpoint: must be an https URL');
    for (const local of [
      'https://127.0.0.1/push/1',
      'https://localhost/push/1',
      'https://10.1.2.3/push/1',
      'https://[::1]/push/1',
      'https://169.254.169.254/x',
    ])
      expect(problem(production, local), local).toBe('endpoint: must name a public push service, not a local or private address');
    expect(problem(development, 'http://127.0.0.1:9000/push/1')).toBeUndefined();
    expect(problem(development, 'http://push.example/push/1')).toBe('endpoint: must be an https URL');
  });

  it('when the same browser subscribes again, then it stays one row with fresh keys; unsubscribing by endpoint removes it', async () => {
    const { cookie, subscriber, id } = await subscribedPerson('push-again@example.com');
    const fresh = createECDH('prime256v1');
    fresh.generateKeys();
    const again = await subscribe(cookie, { endpoint: subscriber.endpoint, keys: { p256dh: fresh.getPublicKey('base64url'), auth: subscriber.keys.auth } });
    expect(again).toMatchObject({ status: 200, json: { subscribed: true, id } });
    expect((await subscriptions().findOne({ _id: id }))!.keys.p256dh).toBe(fresh.getPublicKey('base64url'));
    const off = await fetch(`${svc.urls.app}/api/push/subscriptions/unsubscribe`, {
      method: 'POST',
      headers: { cookie, origin: origin(), 'content-type': 'application/json' },
      body: JSON.stringify({ endpoint: subscriber.endpoint }),
    });
    expect(await off.json()).toEqual({ unsubscribed: true, id });
    expect(await subscriptions().findOne({ _id: id })).toBeNull();
  });

  it('when a person already receives on 20 browsers, then a 21st is refused naming the limit; the same browser again is still fine', async () => {
    const cookie = await signIn(svc, 'push-many@example.com');
    const first = pushes.subscriber();
    expect((await subscribe(cookie, { endpoint: first.endpoint, keys: first.keys })).status).toBe(201);
    for (let i = 1; i < MAX_DEVICES; i++) {
      const s = pushes.subscriber();
      expect((await subscribe(cookie, { endpoint: s.endpoint, keys: s.keys })).status).toBe(201);
    }
    const extra = pushes.subscriber();
    const refused = await subscribe(cookie, { endpoint: extra.endpoint, keys: extra.keys });
    expect(refused.status).toBe(400);
    expect(refused.json).toMatchObject({ code: 'VALIDATION_FAILED', message: expect.stringContaining(`as many browsers as a person may (${MAX_DEVICES})`) });
    expect((await subscribe(cookie, { endpoint: first.endpoint, keys: first.keys })).status).toBe(200);
  });

  it('when the store holds a subscription, then its key is the endpoint hash, never the endpoint', async () => {
    const { id, subscriber } = await subscribedPerson('push-hash@example.com');
    expect(id).toMatch(/^[0-9a-f]{64}$/);
    expect(id).not.toContain(subscriber.id);
  });
});

describe('push - Settings', () => {
  it('when a person has browsers subscribed, then Settings lists them with this browser marked, and removing one asks first and works as plain forms', async () => {
    const { cookie, deviceCookie, id } = await subscribedPerson('push-settings@example.com');
    const other = pushes.subscriber();
    const otherRes = await fetch(`${svc.urls.app}/api/push/subscriptions`, {
      method: 'POST',
      headers: {
        cookie,
        origin: origin(),
        'content-type': 'application/json',
        'user-agent': 'Mozilla/5.0 (Android 14; Mobile; rv:133.0) Gecko/133.0 Firefox/133.0',
      },
      body: JSON.stringify({ endpoint: other.endpoint, keys: other.keys }),
    });
    const otherId = ((await otherRes.json()) as { id: string }).id;

    const settings = await page(`${cookie}; ${deviceCookie}`, '/settings');
    expect(settings.html).toContain(`data-vapid-key="${vapidKeys.publicKey}"`);
    expect(settings.html).not.toContain(vapidKeys.privateKey);
    const rows = [...settings.html.matchAll(/<tr data-device-id="([0-9a-f]+)"><td data-label="Browser">(.*?)<\/td>/g)].map((m) => [m[1], m[2]]);
    expect(rows).toEqual([
      [otherId, 'Firefox on Android'],
      [id, 'Chrome on Linux<strong class="this-device"> (this browser)</strong>'],
    ]);
    // Without the device cookie (another browser), no row is this one.
    expect((await page(cookie, '/settings')).html).not.toContain('this-device');

    const confirm = await page(cookie, `/settings/devices/${otherId}/remove`);
    expect(confirm.status).toBe(200);
    expect(confirm.html).toContain('Stop notifications on Firefox on Android?');
    expect(confirm.html).toContain(`<form method="post" action="/settings/devices/${otherId}/remove">`);
    expect(await subscriptions().countDocuments({ _id: otherId })).toBe(1);
    const removed = await form(cookie, `/settings/devices/${otherId}/remove`);
    expect(removed).toMatchObject({ status: 303, location: '/settings#notifications' });
    expect(await subscriptions().countDocuments({ _id: otherId })).toBe(0);

    // Someone else's browser is simply not there.
    const stranger = await signIn(svc, 'push-stranger@example.com');
    expect((await page(stranger, `/settings/devices/${id}/remove`)).status).toBe(404);
    expect((await form(stranger, `/settings/devices/${id}/remove`)).status).toBe(404);
    expect(await subscriptions().countDocuments({ _id: id })).toBe(1);
  });

  it('when a person deletes their account, then no browser of theirs is notified any more', async () => {
    const { cookie, uid } = await subscribedPerson('push-leaving@example.com');
    expect((await form(cookie, '/settings/delete-account')).status).toBe(200);
    expect(await subscriptions().countDocuments({ uid })).toBe(0);
    expect(await sender.sendPush(uid, { title: 'Missed dose', body: '', url: '/' })).toEqual([]);
  });

  it('when the service worker is fetched, then it is JavaScript from the root, with no scope header needed', async () => {
    const res = await fetch(`${svc.urls.app}/sw.js`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(res.headers.get('service-worker-allowed')).toBeNull();
    expect(await res.text()).toContain("addEventListener('push'");
  });
});

describe('push - VAPID keys', () => {
  it('when no pair is configured outside production, then one is generated once in DATA_DIR with mode 0600, reused, and the private key is never logged', () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'cc-vapid-'));
    try {
      let logged = '';
      const log = pino({ level: 'trace' }, new Writable({ write: (chunk: Buffer, _e, done) => ((logged += chunk.toString()), done()) }));
      const config = {
        dataDir,
        nodeEnv: 'development' as const,
        vapidPublicKey: undefined,
        vapidPrivateKey: undefined,
        vapidSubject: '',
        mailFrom: 'carecircle <no-reply@carecircle.example>',
      };
      const first = resolveVapid(config, log);
      const second = resolveVapid(config, log);
      expect(second).toEqual(first);
      expect(first.subject).toBe('mailto:no-reply@carecircle.example');
      const ecdh = createECDH('prime256v1');
      ecdh.setPrivateKey(Buffer.from(first.privateKey, 'base64url'));
      expect(ecdh.getPublicKey('base64url')).toBe(first.publicKey);
      const file = path.join(dataDir, VAPID_FILE);
      expect(statSync(file).mode & 0o777).toBe(0o600);
      expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ publicKey: first.publicKey, privateKey: first.privateKey });
      expect(logged).toContain('generated a VAPID key pair');
      expect(logged).not.toContain(first.privateKey);
      expect(() => resolveVapid({ ...config, nodeEnv: 'production' }, log)).toThrow(VapidError);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('when the pair in DATA_DIR was damaged, then start-up stops saying so without showing the file', () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'cc-vapid-'));
    try {
      const config = {
        dataDir,
        nodeEnv: 'development' as const,
        vapidPublicKey: undefined,
        vapidPrivateKey: undefined,
        vapidSubject: '',
        mailFrom: 'x@example.org',
      };
      const log = createLogger('silent');
      const real = resolveVapid(config, log);
      const other = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'jwk' });
      // A private key that is not the public key's half.
      writeFileSync(path.join(dataDir, VAPID_FILE), JSON.stringify({ publicKey: real.publicKey, privateKey: other.d }));
      expect(() => resolveVapid(config, log)).toThrow(/does not hold a VAPID key pair/);
      expect(() => resolveVapid(config, log)).not.toThrow(other.d!);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
