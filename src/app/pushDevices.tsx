// Settings → Notifications: the browsers a person receives care alerts on (this one marked), opting
// in on this browser (a script: the browser's push subscription), and removing one (plain forms).
import type { Db } from 'mongodb';
import { readCookie } from '../auth/sessions.js';
import type { SessionCaller } from '../auth/sessions.js';
import type { HttpRequestEnvelope } from '../bus/envelopes.js';
import type { Config } from '../config.js';
import { redirect } from '../http/page.js';
import { parseOr400 } from '../http/problems.js';
import { ApiProblem, json, text } from '../http/reply.js';
import { deviceLabel, endpointId, MAX_DEVICES, PushSubscriptions, subscriptionInput, TooManyDevices, type PushDevice } from '../push/subscriptions.js';
import type { AppHelpers } from './helpers.js';
import type { AppRouteBuilder } from './routeTable.js';
import { stamp, type Clock } from './time.js';
import { readFileSync } from 'node:fs';
import { z } from 'zod';

/** Names the subscription this browser made, so Settings can say "This browser" without script. */
export const PUSH_DEVICE_COOKIE = 'cc_push_device';
/** About as long as a browser keeps a subscription; a stale cookie only fails to mark a row. */
const DEVICE_COOKIE_MAX_AGE = 400 * 86_400;

const asset = (name: string) => readFileSync(new URL(`./assets/${name}`, import.meta.url), 'utf8');

const SUBSCRIBE_HINT = 'Send PushSubscription.toJSON(): {"endpoint": "https://…", "keys": {"p256dh": "…", "auth": "…"}}.';

/** The browser's own device, when its cookie names one of the person's subscriptions. */
const thisDeviceId = (req: HttpRequestEnvelope) => readCookie(req.headers.cookie, PUSH_DEVICE_COOKIE) ?? undefined;

export function pushDevicesSection(devices: PushDevice[], thisDevice: string | undefined, vapidPublicKey: string, clock: Clock) {
  return (
    <section class="card" id="notifications">
      <h2>Notifications</h2>
      <p>
        carecircle can tell you on your phone or computer when something needs attention: a missed dose, a reading out of range, a fall. Each browser you turn
        this on in is listed here; the notification says what happened and opens the loved one's page.
      </p>
      <p id="push-opt-in" data-vapid-key={vapidPublicKey}>
        <button type="button" id="push-enable" disabled>
          Notify me in this browser
        </button>{' '}
        <span id="push-status" role="status">
          Turning notifications on needs JavaScript, which has not run on this page.
        </span>
      </p>
      {devices.length ? (
        <div class="scroll">
          <table id="push-devices" class="stack">
            <caption>Browsers that receive notifications</caption>
            <thead>
              <tr>
                <th scope="col">Browser</th>
                <th scope="col">Added</th>
                <th scope="col">Action</th>
              </tr>
            </thead>
            <tbody>
              {devices.map((d) => (
                <tr data-device-id={d.id}>
                  <td data-label="Browser">
                    {d.device}
                    {d.id === thisDevice ? <strong class="this-device"> (this browser)</strong> : null}
                  </td>
                  <td data-label="Added">{stamp(clock, d.createdAt)}</td>
                  <td>
                    <a class="button danger" href={`/settings/devices/${encodeURIComponent(d.id)}/remove`}>
                      Remove {d.device}
                    </a>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : (
        <p class="muted" id="push-devices-none">
          No browser receives notifications yet.
        </p>
      )}
    </section>
  );
}

/** The subscription routes (JSON, for the Settings script), the service worker, and removal by form. */
export function pushDevicesRoutes(routes: AppRouteBuilder, h: AppHelpers, deps: { config: Config; db: Db }): void {
  const { config } = deps;
  const store = new PushSubscriptions(deps.db);
  const input = subscriptionInput({ allowLoopback: config.nodeEnv !== 'production' });
  const local = /^http:\/\/(localhost|127\.0\.0\.1)(:\d+)?$/.test(config.appUrl);
  const cookieAttributes = ['Path=/settings', 'HttpOnly', 'SameSite=Lax', ...(local ? [] : ['Secure'])].join('; ');
  const sw = asset('sw.js');
  const pushJs = asset('push.js');

  const ownDevice = async (caller: SessionCaller, id: string) => (await store.devices(caller.uid)).find((d) => d.id === id) ?? null;
  const noSuchDevice = (caller: SessionCaller) =>
    h.cardPage(
      404,
      'No such browser',
      <p>
        That browser does not receive your notifications any more. See <a href="/settings#notifications">your notifications</a>.
      </p>,
      caller,
    );

  routes
    // At the root, so its scope is the whole app without a Service-Worker-Allowed header. Browsers
    // check for a new version on their own; no-cache makes them ask us each time they do.
    .on('serviceWorker', 'GET', async () =>
      text(200, sw, 'text/javascript; charset=utf-8', { 'cache-control': 'no-cache', 'x-content-type-options': 'nosniff' }),
    )
    .on('pushJs', 'GET', async () => text(200, pushJs, 'text/javascript; charset=utf-8', { 'cache-control': 'public, max-age=300' }))
    .on('apiPushSubscriptions', 'POST', async (req) => {
      const caller = await h.requireCaller(req);
      const subscription = parseOr400(input, req.body ?? {}, SUBSCRIBE_HINT);
      try {
        const { id, created } = await store.add(caller.uid, subscription, deviceLabel(req.headers['user-agent'], subscription.endpoint));
        return json(
          created ? 201 : 200,
          { subscribed: true, id },
          { 'set-cookie': `${PUSH_DEVICE_COOKIE}=${id}; ${cookieAttributes}; Max-Age=${DEVICE_COOKIE_MAX_AGE}` },
        );
      } catch (err) {
        if (err instanceof TooManyDevices)
          throw new ApiProblem(400, 'VALIDATION_FAILED', err.message, `Settings lists your ${MAX_DEVICES} browsers; remove one under Notifications.`);
        throw err;
      }
    })
    .on('apiPushUnsubscribe', 'POST', async (req) => {
      const caller = await h.requireCaller(req);
      const { endpoint } = parseOr400(z.object({ endpoint: input.shape.endpoint }), req.body ?? {}, 'Send {"endpoint": "…"}, the subscription to forget.');
      const removed = await store.removeByEndpoint(caller.uid, endpoint);
      return json(200, { unsubscribed: removed, id: endpointId(endpoint) });
    })
    .on('settingsDevicesRemove', 'GET', async (req, params) => {
      const id = params.id ?? '';
      const caller = await h.currentCaller(req);
      if (!caller) return h.signedOutPage(`/settings/devices/${encodeURIComponent(id)}/remove`);
      const device = await ownDevice(caller, id);
      if (!device) return noSuchDevice(caller);
      const mine = id === thisDeviceId(req);
      return h.cardPage(
        200,
        'Remove a browser',
        <>
          <p>
            {mine ? 'This browser' : device.device} will receive no more carecircle notifications. You can turn them on again from Settings in that browser.
          </p>
          <form method="post" action={`/settings/devices/${encodeURIComponent(device.id)}/remove`}>
            <button class="danger" type="submit">
              Remove {device.device}
            </button>
          </form>
          <p>
            <a href="/settings#notifications">Keep it</a>
          </p>
        </>,
        caller,
        { heading: `Stop notifications on ${device.device}?`, id: 'confirm' },
      );
    })
    .on('settingsDevicesRemove', 'POST', async (req, params) => {
      const caller = await h.currentCaller(req);
      if (!caller) return redirect('/signin?next=/settings');
      if (!(await store.remove(caller.uid, params.id ?? ''))) return noSuchDevice(caller);
      return redirect('/settings#notifications');
    });
}

/** What Settings shows under Notifications for the caller. */
export async function pushDevicesFor(db: Db, caller: SessionCaller, req: HttpRequestEnvelope) {
  return { devices: await new PushSubscriptions(db).devices(caller.uid), thisDevice: thisDeviceId(req) };
}
