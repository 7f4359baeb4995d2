// The alerts slice: care news by mail, right away or in a daily or weekly digest, as each member
// chose per loved one; new records read by the workers as they are stored, the rules run by the
// cron leader every minute, deliveries kept in a durable outbox.
import { appHelpers } from '../app/helpers.js';
import { CARE_EVENTS } from '../family/careEvents.js';
import { defineSlice, handlers, type SliceContext, type Stoppable } from '../slice/contract.js';
import { pushSender } from '../push/send.js';
import { PushSubscriptions } from '../push/subscriptions.js';
import { emailChannel, LOCAL_OUTBOX_INDEXES, pushChannel, type Channel } from './channels.js';
import { ALERT_KINDS, type AlertKind } from './kinds.js';
import { AlertEngine } from './engine.js';
import { LINK_INDEXES } from './links.js';
import { OUTBOX_INDEXES } from './outbox.js';
import { alertPages } from './pages.js';
import { startAlertPrompt } from './prompt.js';
import { PREFERENCE_INDEXES } from './preferences.js';
import { RANGE_INDEXES } from './ranges.js';
import { alertClaimsBucketName, KvAttemptClaims, type AttemptClaims } from './claims.js';
import { jetStreamQueue, startAlertSender } from './queue.js';
import { ALERT_ROUTES } from './routes.js';

/** The alert engine of a process: mail, web push to the browsers members turned it on in, and any other channel given. */
export function alertEngine(
  ctx: Pick<SliceContext, 'config' | 'db' | 'credentials' | 'timelines' | 'log' | 'clock'> & {
    bus?: Pick<SliceContext['bus'], 'durable' | 'kv'>;
    /** Instead of the ones the bus gives (a test's own bucket). */
    claims?: AttemptClaims;
  },
  more: readonly Channel[] = [],
): AlertEngine {
  const durable = ctx.bus?.durable;
  const log = ctx.log.child({ component: 'alerts' });
  const subscriptions = new PushSubscriptions(ctx.db);
  const urgent = (kind: string) => Object.hasOwn(ALERT_KINDS, kind) && !!ALERT_KINDS[kind as AlertKind].urgent;
  return new AlertEngine({
    ...ctx,
    log,
    channels: [
      emailChannel(ctx.config, ctx.db, ctx.clock),
      pushChannel(pushSender(ctx.config, ctx.db, log), (uid) => subscriptions.devices(uid), urgent),
      ...more,
    ],
    ...(durable ? { queue: jetStreamQueue(durable, ctx.config.busNamespace) } : {}),
    ...(ctx.claims
      ? { claims: ctx.claims }
      : durable && ctx.bus?.kv
        ? { claims: new KvAttemptClaims(ctx.bus.kv, alertClaimsBucketName(ctx.config.busNamespace)) }
        : {}),
  });
}

export const alertsSlice = defineSlice({
  name: 'alerts',
  routes: ALERT_ROUTES,
  indexes: {
    // The scan of new records reads care events by arrival.
    [CARE_EVENTS]: [{ key: { receivedAt: 1 }, name: 'by_received' }],
    ...OUTBOX_INDEXES,
    ...PREFERENCE_INDEXES,
    ...RANGE_INDEXES,
    ...LINK_INDEXES,
    ...LOCAL_OUTBOX_INDEXES,
  },
  serve: (ctx) => {
    const engine = alertEngine(ctx);
    const p = alertPages({
      h: appHelpers(ctx.config, ctx.db, ctx.credentials, ctx.timelines),
      db: ctx.db,
      credentials: ctx.credentials,
      preferences: engine.preferences,
      ranges: engine.ranges,
      links: engine.links,
    });
    return handlers(ALERT_ROUTES)
      .on('alertSettings', 'GET', (req) => p.settingsGet(req))
      .on('alertSettingsFor', 'GET', (req, params) => p.settingsGet(req, params.lovedOneId!))
      .on('alertSettingsFor', 'POST', (req, params) => p.settingsPost(req, params.lovedOneId!))
      .on('alertRanges', 'GET', (req, params) => p.rangesGet(req, params.lovedOneId!))
      .on('alertRanges', 'POST', (req, params) => p.rangesPost(req, params.lovedOneId!))
      .on('unsubscribe', 'GET', (req, params) => p.unsubscribeGet(req, params.token!))
      .on('unsubscribe', 'POST', (req, params) => p.unsubscribePost(req, params.token!))
      .done();
  },
  // New care records read as soon as they are stored; on NATS, each delivery sent as soon as it is queued.
  background: (ctx) => {
    const engine = alertEngine(ctx);
    const running: Stoppable[] = [];
    if (ctx.bus.durable) running.push(startAlertSender(ctx.bus.durable, ctx.config.busNamespace, engine, ctx.log.child({ component: 'alert-sender' })));
    if (ctx.config.alertsOnStore)
      running.push(startAlertPrompt(ctx.bus, ctx.config.busNamespace, engine, !!ctx.bus.durable, ctx.log.child({ component: 'alert-prompt' })));
    return {
      stop: async () => {
        await Promise.all(running.map((r) => r.stop()));
        await engine.close();
      },
    };
  },
  // Every minute: new records read, schedules checked, digests due queued, the outbox sent.
  jobs: (ctx) => {
    const engine = alertEngine(ctx);
    return [{ name: 'alerts', schedule: '* * * * *', run: () => engine.run(), close: () => engine.close() }];
  },
});
