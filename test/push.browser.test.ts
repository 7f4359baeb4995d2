// Web push in headless Chromium: on opting in, the Settings script asks for permission, registers
// the service worker at the root, subscribes with carecircle's VAPID public key and posts the
// subscription (a visit alone registers nothing); a message sent through our loopback push service
// is shown by the service worker.
//
// Headless Chromium cannot subscribe for real: its push service is Google's (FCM), and
// pushManager.subscribe answers "AbortError: Registration failed - permission denied" even with
// notifications granted. So the page's PushManager.subscribe hands back a subscription built in
// the page from keys this test made, with an endpoint on our own push service; everything else is
// the browser's own: the permission prompt, the service worker, the page's POST, and the push
// event, which DevTools delivers to the registered worker (ServiceWorker.deliverPushMessage).
import { createECDH, randomBytes } from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';
import { createLogger } from '../src/log.js';
import { pushSender } from '../src/push/send.js';
import { newPage, screenshot, signInWithBrowser, useServiceWithBrowser } from './harness/browser.js';
import { startPushService, type PushService } from './harness/pushService.js';

const vapid = createECDH('prime256v1');
vapid.setPrivateKey(randomBytes(32));
const run = useServiceWithBrowser({
  env: {
    VAPID_PUBLIC_KEY: vapid.getPublicKey('base64url'),
    VAPID_PRIVATE_KEY: vapid.getPrivateKey('base64url'),
    VAPID_SUBJECT: 'mailto:ops@carecircle.example',
  },
});
const app = (path: string) => `${run.svc.config.appUrl}${path}`;

/** Stands in for the browser's push service registration: records the key the page subscribed with. */
function stubSubscribe(subscription: { endpoint: string; keys: { p256dh: string; auth: string } }) {
  const key = 'cc-test-subscription';
  const toB64url = (buffer: ArrayBuffer) =>
    btoa(String.fromCharCode(...new Uint8Array(buffer)))
      .replace(/\+/g, '-')
      .replace(/\//g, '_')
      .replace(/=+$/, '');
  const made = () => ({
    endpoint: subscription.endpoint,
    expirationTime: null,
    toJSON: () => ({ endpoint: subscription.endpoint, expirationTime: null, keys: subscription.keys }),
    unsubscribe: async () => {
      localStorage.removeItem(key);
      return true;
    },
  });
  PushManager.prototype.subscribe = async function (options?: PushSubscriptionOptionsInit) {
    const serverKey = options?.applicationServerKey;
    localStorage.setItem(key, serverKey instanceof Uint8Array ? toB64url(serverKey.buffer as ArrayBuffer) : String(serverKey));
    return made() as unknown as PushSubscription;
  };
  PushManager.prototype.getSubscription = async function () {
    return (localStorage.getItem(key) ? made() : null) as unknown as PushSubscription;
  };
}

describe('web push in Chromium', () => {
  it('when a caregiver visits Settings and then turns notifications on, then the visit registers no worker, opting in registers it, the subscription is posted with our VAPID key, this browser is listed, and a push shows its notification', async () => {
    const pushes: PushService = await startPushService();
    const { page, errors } = await newPage(run.browser);
    try {
      const origin = new URL(run.svc.config.appUrl).origin;
      await page.context().grantPermissions(['notifications'], { origin });
      const subscriber = pushes.subscriber();
      await page.addInitScript(stubSubscribe, { endpoint: subscriber.endpoint, keys: subscriber.keys });
      await signInWithBrowser(page, app('/settings'), 'push-browser@example.com');

      // The script took over the button once it knew this browser has no worker: a visit registers none.
      await page.locator('#push-enable:not([disabled])', { hasText: 'Notify me in this browser' }).waitFor();
      expect(await page.evaluate(async () => (await navigator.serviceWorker.getRegistrations()).map((r) => r.scope))).toEqual([]);
      expect(await page.locator('#push-devices').count()).toBe(0);
      await screenshot(page, 'push-settings-off');

      // Opting in registers the worker, active for the whole app.
      await Promise.all([page.waitForEvent('load'), page.click('#push-enable')]);
      await page.locator('#push-devices .this-device').waitFor();
      const worker = await page.evaluate(async () => {
        const reg = await navigator.serviceWorker.ready;
        return { script: reg.active?.scriptURL, scope: reg.scope };
      });
      expect(worker).toEqual({ script: app('/sw.js'), scope: app('/') });
      expect(await page.evaluate(() => localStorage.getItem('cc-test-subscription'))).toBe(vapid.getPublicKey('base64url'));
      expect(await page.textContent('#push-devices')).toContain('Chrome on Linux (this browser)');
      await page.locator('#push-enable', { hasText: 'Stop notifications in this browser' }).waitFor();
      await screenshot(page, 'push-settings-on');

      // A message to this person arrives at the push service, decrypts, and the worker shows it.
      const db = run.svc.store.db;
      const { uid } = (await db.collection('push_subscriptions').findOne({ endpoint: subscriber.endpoint }))!;
      const outcomes = await pushSender(run.svc.config, db, createLogger('silent')).sendPush(uid as string, {
        title: 'Missed dose',
        body: 'The 8:00 dose is not marked taken.',
        url: '/settings#notifications',
        tag: 'dose',
      });
      expect(outcomes).toMatchObject([{ status: 'sent', statusCode: 201 }]);
      const payload = pushes.received.find((r) => r.subscriberId === subscriber.id)!.payload;
      expect(payload).toEqual({ title: 'Missed dose', body: 'The 8:00 dose is not marked taken.', url: app('/settings#notifications'), tag: 'dose' });

      const cdp = await page.context().newCDPSession(page);
      const registered = new Promise<string>((resolve) =>
        cdp.on('ServiceWorker.workerRegistrationUpdated', (e) => {
          const reg = e.registrations.find((r) => r.scopeURL === app('/') && !r.isDeleted);
          if (reg) resolve(reg.registrationId);
        }),
      );
      await cdp.send('ServiceWorker.enable');
      const registrationId = await registered;
      // Delivered once the worker is active. Chromium may still drop a push made through the
      // DevTools protocol while the worker starts up, so a push not yet shown is made again: the
      // notifications carry a tag, and a repeat replaces its own, never adds a second.
      await page.evaluate(async () => void (await navigator.serviceWorker.ready));
      const shown = async (data: unknown, tag: string) => {
        const list = () =>
          page.evaluate(async (tag) => {
            const reg = await navigator.serviceWorker.ready;
            return (await reg.getNotifications({ tag })).map((n) => ({ title: n.title, body: n.body, tag: n.tag, url: (n.data as { url: string }).url }));
          }, tag);
        for (let attempt = 0; attempt < 5; attempt++) {
          await cdp.send('ServiceWorker.deliverPushMessage', { origin, registrationId, data: JSON.stringify(data) });
          const found = await vi
            .waitFor(
              async () => {
                const l = await list();
                if (!l.length) throw new Error('not shown yet');
                return l;
              },
              { timeout: 3_000, interval: 200 },
            )
            .catch(() => []);
          if (found.length) return found;
        }
        return list();
      };
      expect(await shown(payload, 'dose')).toEqual([
        { title: 'Missed dose', body: 'The 8:00 dose is not marked taken.', tag: 'dose', url: app('/settings#notifications') },
      ]);

      // A push naming another site opens home instead.
      expect((await shown({ title: 'Elsewhere', body: '', url: 'https://evil.example/', tag: 'other' }, 'other')).map((n) => n.url)).toEqual([app('/')]);

      // Turning it off here forgets this browser on the server too.
      await Promise.all([page.waitForEvent('load'), page.click('#push-enable')]);
      await page.locator('#push-devices-none').waitFor();
      expect(await db.collection('push_subscriptions').countDocuments({ endpoint: subscriber.endpoint })).toBe(0);
      expect(errors).toEqual([]);
    } finally {
      await page.context().close();
      await pushes.close();
    }
  });

  it('when JavaScript is off, then Settings says turning notifications on needs it, and a browser is still removed by its confirmation form', async () => {
    const context = await run.browser.newContext({ javaScriptEnabled: false });
    const page = await context.newPage();
    try {
      await page.goto(app('/settings'));
      await Promise.all([page.waitForURL(/\/dev\/login/), page.click('#signin')]);
      await page.fill('#email', 'push-no-script@example.com');
      await page.click('button[type=submit]');
      // Without script the provider's answer comes back as a form to send.
      await Promise.all([page.waitForURL(app('/settings')), page.click('#form-post button')]);
      expect(await page.textContent('#push-status')).toContain('Turning notifications on needs JavaScript');
      expect(await page.isDisabled('#push-enable')).toBe(true);

      // A browser subscribed elsewhere: another User-Agent, the same person's session, not this browser's cookies.
      const other = createECDH('prime256v1');
      other.generateKeys();
      const session = (await context.cookies(app('/'))).find((c) => c.name === 'cc_session')!;
      const posted = await fetch(app('/api/push/subscriptions'), {
        method: 'POST',
        headers: {
          cookie: `cc_session=${session.value}`,
          origin: new URL(run.svc.config.appUrl).origin,
          'content-type': 'application/json',
          'user-agent': 'Mozilla/5.0 (iPhone; CPU iPhone OS 18_0 like Mac OS X) Version/18.0 Mobile Safari/604.1',
        },
        body: JSON.stringify({
          endpoint: 'https://web.push.apple.com/QGhlbGxv',
          keys: { p256dh: other.getPublicKey('base64url'), auth: randomBytes(16).toString('base64url') },
        }),
      });
      expect(posted.status).toBe(201);
      await page.goto(app('/settings'));
      expect(await page.textContent('#push-devices')).toContain('Safari on iOS');
      expect(await page.textContent('#push-devices')).not.toContain('this browser');
      await Promise.all([page.waitForURL(/\/settings\/devices\/[0-9a-f]+\/remove$/), page.click('#push-devices a.button')]);
      expect(await page.textContent('h1')).toBe('Stop notifications on Safari on iOS?');
      await screenshot(page, 'push-remove-confirm');
      await Promise.all([page.waitForURL(app('/settings#notifications')), page.click('#confirm button')]);
      expect(await page.locator('#push-devices').count()).toBe(0);
      expect(await page.textContent('#push-devices-none')).toContain('No browser receives notifications yet.');
    } finally {
      await context.close();
    }
  });
});
