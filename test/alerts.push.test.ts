// Alerts by web push, end to end with the embedded defaults: a member turns notifications on in a
// browser, the family sets a range for pulse, the agency sends a reading above it, and the alert
// reaches the browser's push service signed with carecircle's VAPID key, decrypting to the loved
// one's name and what happened; a member with no browser subscribed still gets the mail.
import { createECDH } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALERT_DELIVERIES, type DeliveryRecord } from '../src/alerts/outbox.js';
import { alertEngine } from '../src/alerts/slice.js';
import { createLogger } from '../src/log.js';
import { startPushService, type PushService } from './harness/pushService.js';
import { startTestService, type TestService } from './harness/service.js';
import { startSmtpSink, type SmtpSink } from './harness/smtpSink.js';
import { family, onboard, postEvent, shareWith, storedEvents, TEST_DATA_KEY, type Family, type Partner } from './ingest.fixtures.js';

const vapid = (() => {
  const ecdh = createECDH('prime256v1');
  // A fixed private key: a generated one is sometimes a byte short, which VAPID_PRIVATE_KEY refuses.
  ecdh.setPrivateKey(Buffer.from(Array.from({ length: 32 }, (_, i) => 100 + i * 3)));
  return { publicKey: ecdh.getPublicKey('base64url'), privateKey: ecdh.getPrivateKey('base64url') };
})();

let svc: TestService;
let pushes: PushService;
let smtp: SmtpSink;
beforeAll(async () => {
  [pushes, smtp] = await Promise.all([startPushService(), startSmtpSink()]);
  svc = await startTestService({
    env: {
      DATA_KEY: TEST_DATA_KEY,
      SMTP_URL: smtp.url,
      // The engine here runs when the test says: no read of new records on store.
      ALERTS_ON_STORE: 'off',
      VAPID_PUBLIC_KEY: vapid.publicKey,
      VAPID_PRIVATE_KEY: vapid.privateKey,
      VAPID_SUBJECT: 'mailto:ops@carecircle.example',
    },
  });
});
afterAll(async () => {
  await svc?.stop();
  await pushes?.close();
  await smtp?.close();
});

const origin = () => new URL(svc.config.appUrl).origin;
const post = async (fam: Family, path: string, body: string, type = 'application/x-www-form-urlencoded') =>
  fetch(`${svc.urls.app}${path}`, { method: 'POST', headers: { cookie: fam.cookie, origin: origin(), 'content-type': type }, body, redirect: 'manual' });

describe('alerts - by web push', () => {
  let fam: Family;
  let partner: Partner;

  beforeAll(async () => {
    fam = await family(svc.store.db, svc.credentials, svc.config);
    partner = await onboard(svc.store.db, svc.credentials);
    await shareWith(svc, partner, `rose-${fam.lovedOneId}`, fam);
  });

  it('when a reading is outside the range the family set, then the member’s subscribed browser gets the alert, decrypted by its push service', async () => {
    const subscriber = pushes.subscriber();
    const subscribed = await post(fam, '/api/push/subscriptions', JSON.stringify({ endpoint: subscriber.endpoint, keys: subscriber.keys }), 'application/json');
    expect(subscribed.status, await subscribed.text()).toBe(201);
    // Readings outside the range right away; the pulse range 50 to 100 per minute.
    const settings = new URLSearchParams({
      mode_missed_dose: 'now',
      mode_flagged_note: 'now',
      mode_out_of_range: 'now',
      mode_late_visit: 'weekly',
      mode_appointment_tomorrow: 'weekly',
      mode_task_unclaimed: 'weekly',
      mode_inbox_mail: 'never',
      quiet_start: '',
      quiet_end: '',
      zone: 'UTC',
      digest_day: 'sun',
      digest_hour: '18',
    });
    expect((await post(fam, `/settings/alerts/${fam.lovedOneId}`, settings.toString())).status).toBe(303);
    const range = new URLSearchParams({ vital: 'pulse', unit: '/min', low: '50', high: '100' });
    expect((await post(fam, `/care/${fam.lovedOneId}/alert-ranges`, range.toString())).status).toBe(303);

    const reading = await postEvent(svc.urls.pipe!, partner, {
      institution_id: partner.institutionId,
      subject_ref: `rose-${fam.lovedOneId}`,
      event_type: 'vital_recorded',
      occurred_at: new Date(Date.now() - 60_000).toISOString(),
      payload: { vital_type: 'pulse', value: 131, unit: '/min', recorded_by: 'cg-1' },
    });
    expect(reading.status).toBe(202);
    await storedEvents(svc.store.db, { lovedOneId: fam.lovedOneId }, 1);

    const engine = alertEngine({
      config: svc.config,
      db: svc.store.db,
      credentials: svc.credentials,
      timelines: svc.timelines,
      log: createLogger('silent'),
      clock: Date.now,
    });
    await engine.run();

    const got = pushes.received.filter((r) => r.subscriberId === subscriber.id);
    expect(got).toHaveLength(1);
    expect(got[0]!.vapidKey).toBe(vapid.publicKey);
    expect(got[0]!.payload).toMatchObject({ url: expect.stringMatching(new RegExp(`^${svc.config.appUrl}/care/`)), tag: 'out_of_range' });
    expect(JSON.stringify(got[0]!.payload)).toMatch(/131/);
    // The mail went too, and each channel's delivery is sent once: running again sends nothing more.
    const deliveries = await svc.store.db.collection<DeliveryRecord>(ALERT_DELIVERIES).find({ lovedOneId: fam.lovedOneId }).toArray();
    expect(deliveries.map((d) => [d.channel, d.state]).sort()).toEqual([
      ['email', 'sent'],
      ['push', 'sent'],
    ]);
    await engine.run();
    expect(pushes.received.filter((r) => r.subscriberId === subscriber.id)).toHaveLength(1);
  });
});
