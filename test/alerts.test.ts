// Alerts and digests against a running carecircle with the embedded defaults (in-process bus,
// real SMTP server on loopback): an agency dose missing past its grace mails each member who chose
// right away, once; the one-click unsubscribe works without signing in and only once; a weekly
// digest carries the week's counts; a restart mid-delivery sends nothing twice and loses nothing;
// and settings that make no sense are refused naming the field. The alert engine runs on a clock
// the test drives, as the workspace tests drive theirs.
import { randomBytes } from 'node:crypto';
import { simpleParser, type ParsedMail } from 'mailparser';
import { MongoClient } from 'mongodb';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { alertEngine } from '../src/alerts/slice.js';
import { emailChannel, LOCAL_OUTBOX, type Channel, type LocalMail } from '../src/alerts/channels.js';
import { alertClaimsBucketName, KvAttemptClaims, type AttemptClaims } from '../src/alerts/claims.js';
import { AlertEngine } from '../src/alerts/engine.js';
import { QUEUE_GRACE_MS } from '../src/alerts/takes.js';
import { alertsCommand } from '../src/alerts/cli.js';
import { ALERT_DECISIONS, ALERT_DELIVERIES, LEASE_MS, MAX_ATTEMPTS, backoffMs, type DeliveryRecord } from '../src/alerts/outbox.js';
import { defaultPreferences, PreferenceStore } from '../src/alerts/preferences.js';
import { SessionStore } from '../src/auth/sessions.js';
import { NatsBus } from '../src/bus/nats.js';
import { subjects } from '../src/bus/subjects.js';
import { appendCareEvents } from '../src/family/careEvents.js';
import { deleteLovedOne } from '../src/family/changes.js';
import { FamilyCircle } from '../src/family/circle.js';
import { MedicationList, type MedicationFields } from '../src/family/medications.js';
import { WorkspaceStore } from '../src/family/records.js';
import { createLogger } from '../src/log.js';
import { registry } from '../src/metrics/index.js';
import { ANNOUNCED_RECORDS_MAX_BYTES, recordsStored, timelinesOf } from '../src/store/timeline/timelines.js';
import { startRole } from './harness/processes.js';
import { closeAfterInsert, freePort, freshDatabaseUrl } from './harness/servers.js';
import { startSmtpSink, type SmtpSink } from './harness/smtpSink.js';
import { startTestService, type TestService } from './harness/service.js';
import { family, onboard, postEvent, shareWith, storedEvents, TEST_DATA_KEY, type Family, type Partner } from './ingest.fixtures.js';

let smtp: SmtpSink;
let svc: TestService;
beforeAll(async () => {
  smtp = await startSmtpSink();
  // The engine runs on the test's clock: no read of new records on store here (see 'alerts - within seconds').
  svc = await startTestService({ env: { DATA_KEY: TEST_DATA_KEY, SMTP_URL: smtp.url, ALERTS_ON_STORE: 'off' } });
});
afterAll(async () => {
  await svc?.stop();
  await smtp?.close();
});

/** An engine on the running service's store, on a clock the test sets; `smtpUrl` instead of the
 *  service's, `claims` to take deliveries as on NATS. */
const engineAt = (s: TestService, at: () => number, other: { smtpUrl?: string; claims?: AttemptClaims } = {}) =>
  alertEngine({
    config: other.smtpUrl === undefined ? s.config : { ...s.config, smtpUrl: other.smtpUrl },
    db: s.store.db,
    credentials: s.credentials,
    timelines: s.timelines,
    log: createLogger('silent'),
    clock: at,
    ...(other.claims ? { claims: other.claims } : {}),
  });
/** What an AlertEngine built by hand needs of a running service, at a fixed instant. */
const engineDeps = (s: TestService, at: number) => ({
  config: s.config,
  db: s.store.db,
  credentials: s.credentials,
  timelines: s.timelines,
  log: createLogger('silent'),
  clock: () => at,
});

/** Each mail to `email`, parsed, with its raw header block (mailparser folds List-* headers into one object). */
const mailsTo = async (email: string): Promise<(ParsedMail & { raw: string })[]> =>
  Promise.all(
    smtp.received.filter((m) => m.to.includes(email)).map(async (m) => Object.assign(await simpleParser(m.data), { raw: m.data.split('\r\n\r\n')[0]! })),
  );
/** A header's value from the raw block, unfolded. */
const header = (raw: string, name: string): string | undefined =>
  raw
    .replace(/\r\n[ \t]+/g, ' ')
    .split('\r\n')
    .find((l) => l.toLowerCase().startsWith(`${name.toLowerCase()}:`))
    ?.slice(name.length + 1)
    .trim();

interface Member {
  uid: string;
  email: string;
  cookie: string;
}

async function member(fam: Family, access: 'read' | 'write' = 'read', s: TestService = svc): Promise<Member> {
  const uid = `u-${randomBytes(5).toString('hex')}`;
  const email = `${uid}@example.com`;
  const store = new WorkspaceStore(s.store.db, s.credentials, s.config.inboxDomain, s.timelines);
  await store.upsertUser({ uid, email });
  await store.addMember(fam.workspaceId, { uid, email }, 'family_member');
  if (access === 'write')
    await s.store.db.collection<{ _id: string }>('workspace_members').updateOne({ _id: `${fam.workspaceId}:${uid}` }, { $set: { access: 'write' } });
  const { token } = await new SessionStore(s.store.db, s.credentials).create({ uid, email, tenant: 'family' });
  return { uid, email, cookie: `cc_session=${token}` };
}

/** A family of two on `s` whose loved one an agency shares care with: the addresses alerts go to, and the agency. */
async function sharedFamily(s: TestService): Promise<{ fam: Family; members: string[]; partner: Partner }> {
  const fam = await family(s.store.db, s.credentials, s.config);
  const members = [`${fam.uid}@example.com`, (await member(fam, 'read', s)).email];
  const partner = await onboard(s.store.db, s.credentials);
  await shareWith(s, partner, `rose-${fam.lovedOneId}`, fam);
  return { fam, members, partner };
}

const post = async (path: string, form: Record<string, string>, headers: Record<string, string> = {}) => {
  const res = await fetch(`${svc.config.appUrl}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(form).toString(),
    redirect: 'manual',
  });
  return { status: res.status, location: res.headers.get('location'), html: await res.text() };
};
const asMember = (m: { cookie: string }) => ({ cookie: m.cookie, origin: new URL(svc.config.appUrl).origin });

const weekday = (d: Date) => ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'][d.getUTCDay()]!;
/** The settings form with every kind as given, in UTC, the digest on `day` at `hour`. */
const settingsForm = (modes: Record<string, string>, day: string, hour: number, extra: Record<string, string> = {}) => ({
  mode_missed_dose: 'now',
  mode_flagged_note: 'now',
  mode_out_of_range: 'weekly',
  mode_late_visit: 'weekly',
  mode_appointment_tomorrow: 'weekly',
  mode_task_unclaimed: 'weekly',
  mode_inbox_mail: 'never',
  ...Object.fromEntries(Object.entries(modes).map(([k, v]) => [`mode_${k}`, v])),
  quiet_start: '',
  quiet_end: '',
  zone: 'UTC',
  digest_day: day,
  digest_hour: String(hour),
  ...extra,
});

const hhmm = (d: Date) => `${String(d.getUTCHours()).padStart(2, '0')}:${String(d.getUTCMinutes()).padStart(2, '0')}`;
const medication = (name: string, at: Date): MedicationFields => ({
  name,
  strength: '25 mg',
  schedule: { asNeeded: false, times: [hhmm(at)], days: [], timeZone: 'UTC' },
  graceMinutes: 60,
});

describe('alerts - a dose the agency did not record', () => {
  let fam: Family;
  let partner: Partner;
  let second: Member;
  let third: Member;
  let due: Date;
  let caregiverEmail: string;
  let engineNow = 0;

  beforeAll(async () => {
    fam = await family(svc.store.db, svc.credentials, svc.config);
    caregiverEmail = `${fam.uid}@example.com`;
    second = await member(fam);
    third = await member(fam);
    partner = await onboard(svc.store.db, svc.credentials);
    await shareWith(svc, partner, `rose-${fam.lovedOneId}`, fam);
    // Two doses due half an hour ago (to the minute): the agency records one of them.
    due = new Date(Math.floor((Date.now() - 30 * 60_000) / 60_000) * 60_000);
    const lovedOne = { _id: fam.lovedOneId, workspaceId: fam.workspaceId };
    const by = { uid: fam.uid, name: 'Caregiver', how: 'app' as const };
    const addedAt = new Date(due.getTime() - 3_600_000);
    const meds = new MedicationList(svc.store.db);
    await meds.add(lovedOne, medication('Metoprolol', due), by, addedAt);
    await meds.add(lovedOne, medication('Lisinopril', due), by, addedAt);
    const given = await postEvent(svc.urls.pipe!, partner, {
      institution_id: partner.institutionId,
      subject_ref: `rose-${fam.lovedOneId}`,
      event_type: 'med_administered',
      occurred_at: new Date(due.getTime() + 4 * 60_000).toISOString(),
      payload: { medication_name: 'Lisinopril', dose_amount: 10, dose_unit: 'mg', administered_by: 'cg-1', scheduled_at: due.toISOString() },
    });
    expect(given.status).toBe(202);
    await storedEvents(svc.store.db, { lovedOneId: fam.lovedOneId }, 1);
    // The third member wants missed doses in the weekly digest only.
    const chose = await post(`/settings/alerts/${fam.lovedOneId}`, settingsForm({ missed_dose: 'weekly' }, 'mon', 18), asMember(third));
    expect(chose).toMatchObject({ status: 303, location: `/settings/alerts/${fam.lovedOneId}?saved=1` });
  });

  it('when the grace has not passed, then nothing is decided; once it has, each member who chose right away gets one mail, and running again sends none', async () => {
    engineNow = due.getTime() + 59 * 60_000;
    const engine = engineAt(svc, () => engineNow);
    expect((await engine.run()).decided).toBe(0);
    expect(await mailsTo(caregiverEmail)).toHaveLength(0);

    engineNow = due.getTime() + 61 * 60_000;
    const run = await engine.run();
    expect(run).toMatchObject({ decided: 1, sent: 2 });
    await engine.run();
    await engineAt(svc, () => engineNow).run();

    const [mail, ...more] = await mailsTo(caregiverEmail);
    expect(more).toHaveLength(0);
    expect(await mailsTo(second.email)).toHaveLength(1);
    expect(await mailsTo(third.email)).toHaveLength(0);
    expect(mail!.subject).toBe(`Rose: the ${hhmmWords(due)} dose of Metoprolol was not recorded as given`);
    expect(mail!.text).toContain(`${svc.config.appUrl}/care/${fam.lovedOneId}/medications`);
    expect(mail!.html).toContain('<html lang="en">');
    expect(mail!.html).toContain(`href="${svc.config.appUrl}/care/${fam.lovedOneId}/medications"`);
    expect(header(mail!.raw, 'List-Unsubscribe-Post')).toBe('List-Unsubscribe=One-Click');
    const unsubscribe = header(mail!.raw, 'List-Unsubscribe')!.replace(/^<|>$/g, '');
    expect(unsubscribe.startsWith(`${svc.config.appUrl}/alerts/unsubscribe/`)).toBe(true);
    const exported = await registry.metrics();
    expect(exported).toMatch(/carecircle_alerts_decided_total\{kind="missed_dose"\} [1-9]/);
    expect(exported).toMatch(/carecircle_alert_deliveries_sent_total\{channel="email"\} [1-9]/);
    // Lisinopril was given: no word of it.
    expect(smtp.received.some((m) => m.data.includes('Lisinopril'))).toBe(false);

    // One-click, as a mail program sends it: no cookie, no Origin.
    const path = new URL(unsubscribe).pathname;
    const once = await post(path, { 'List-Unsubscribe': 'One-Click' });
    expect(once.status).toBe(200);
    expect(once.html).toContain('id="unsubscribed"');
    const prefs = await engine.preferences.of(fam.uid, fam.lovedOneId);
    expect(prefs.modes).toMatchObject({ missed_dose: 'never', flagged_note: 'now' });
    const again = await post(path, { 'List-Unsubscribe': 'One-Click' });
    expect(again.status).toBe(409);
    expect(again.html).toContain('data-code="LINK_USED"');
    const token = path.split('/').at(-1)!;
    const tampered = `${token.slice(0, -3)}${token.endsWith('AAA') ? 'BBB' : 'AAA'}`;
    const forged = await post(`/alerts/unsubscribe/${tampered}`, { 'List-Unsubscribe': 'One-Click' });
    expect(forged.status).toBe(400);
    expect(forged.html).toContain('data-code="LINK_INVALID"');
    // The second member's own link still works: links are per person.
    expect((await engine.preferences.of(second.uid, fam.lovedOneId)).modes.missed_dose).toBe('now');
  });

  it('when the weekly digest falls due, then the members who chose it get the week in counts, and those who did not get none', async () => {
    const at = new Date(engineNow);
    const today = weekday(at);
    const otherDay = weekday(new Date(engineNow + 86_400_000));
    expect((await post(`/settings/alerts/${fam.lovedOneId}`, settingsForm({ missed_dose: 'weekly' }, today, 0), asMember(third))).status).toBe(303);
    expect((await post(`/settings/alerts/${fam.lovedOneId}`, settingsForm({}, otherDay, 0), asMember(second))).status).toBe(303);
    expect((await post(`/settings/alerts/${fam.lovedOneId}`, settingsForm({}, otherDay, 0), asMember(fam))).status).toBe(303);
    // A reading, a visit and a note of the week, from the agency.
    const subject = `rose-${fam.lovedOneId}`;
    const send = (event_type: string, payload: Record<string, unknown>) =>
      postEvent(svc.urls.pipe!, partner, {
        institution_id: partner.institutionId,
        subject_ref: subject,
        event_type,
        occurred_at: new Date(Date.now() - 60_000).toISOString(),
        payload,
      });
    expect((await send('vital_recorded', { vital_type: 'pulse', value: 72, unit: '/min', recorded_by: 'cg-1' })).status).toBe(202);
    const start = new Date(Date.now() - 120_000).toISOString();
    expect((await send('visit_started', { caregiver_id: 'cg-1', scheduled_start: start, actual_start: start })).status).toBe(202);
    expect((await send('note_added', { caregiver_id: 'cg-1', note_text: 'She fell asleep after lunch.' })).status).toBe(202);
    await storedEvents(svc.store.db, { lovedOneId: fam.lovedOneId }, 4);
    // A portal whose refresh was refused: every digest says so until someone signs in again.
    await svc.store.db.collection<{ _id: string }>('portal_connections').insertOne({
      _id: `${fam.lovedOneId}:np`,
      lovedOneId: fam.lovedOneId,
      workspaceId: fam.workspaceId,
      name: 'Northside Health',
      status: 'needs_sign_in',
    } as never);

    const engine = engineAt(svc, () => engineNow);
    const run = await engine.run();
    expect(run.digests).toBe(1);
    await engine.run();
    const digests = (await mailsTo(third.email)).filter((m) => m.subject === 'Rose: your weekly care digest');
    expect(digests).toHaveLength(1);
    expect(digests[0]!.text).toContain(
      'Doses given: 1, doses missed or refused: 1, readings: 1, visits: 1, notes: 1, inbox mail: 0, appointments ahead: 0, open tasks: 0.',
    );
    // The weekly_care_summary's own wording of the record.
    expect(digests[0]!.text).toContain('Here is what was recorded for Rose Test from ');
    expect(digests[0]!.text).toContain(
      "Northside Health's portal needs someone in the family to sign in again before carecircle can read Rose's records from it.",
    );
    expect(header(digests[0]!.raw, 'List-Unsubscribe-Post')).toBe('List-Unsubscribe=One-Click');
    expect((await mailsTo(second.email)).filter((m) => m.subject?.includes('digest'))).toHaveLength(0);
    // "fell asleep" is not a fall: no alert went out for the note.
    expect(smtp.received.filter((m) => m.data.includes('mentions a fall'))).toHaveLength(0);
  });
});

const hhmmWords = (d: Date) => {
  const h = d.getUTCHours();
  return `${h % 12 === 0 ? 12 : h % 12}:${String(d.getUTCMinutes()).padStart(2, '0')} ${h < 12 ? 'am' : 'pm'}`;
};

describe('alerts - bad settings are refused naming the field', () => {
  let fam: Family;
  let writer: Member;
  beforeAll(async () => {
    fam = await family(svc.store.db, svc.credentials, svc.config);
    writer = await member(fam, 'write');
  });

  it('when a range makes no sense, then the range page answers 400 naming the field, and a member who may only read is refused', async () => {
    const path = `/care/${fam.lovedOneId}/alert-ranges`;
    const upsideDown = await post(path, { vital: 'pulse', unit: '/min', low: '120', high: '50' }, asMember(writer));
    expect(upsideDown.status).toBe(400);
    expect(upsideDown.html).toContain('Low: must be below the high value (50)');
    const implausible = await post(path, { vital: 'pulse', unit: '/min', low: '40', high: '900' }, asMember(writer));
    expect(implausible.status).toBe(400);
    expect(implausible.html).toContain('High: must be between 25 and 250 /min');
    const wrongUnit = await post(path, { vital: 'pulse', unit: 'kg', low: '40' }, asMember(writer));
    expect(wrongUnit.status).toBe(400);
    expect(wrongUnit.html).toContain('Unit: must be one of /min');
    const ok = await post(path, { vital: 'pulse', unit: '/min', low: '50', high: '110' }, asMember(writer));
    expect(ok).toMatchObject({ status: 303, location: path });
    const reader = await member(fam, 'read');
    expect((await post(path, { vital: 'pulse', unit: '/min', low: '50' }, asMember(reader))).status).toBe(403);
  });

  it('when quiet hours or the zone make no sense, then Settings answers 400 naming the field and keeps what was saved', async () => {
    const path = `/settings/alerts/${fam.lovedOneId}`;
    const same = await post(path, settingsForm({}, 'sun', 18, { quiet_start: '22:00', quiet_end: '22:00' }), asMember(writer));
    expect(same.status).toBe(400);
    expect(same.html).toContain('Quiet hours until: must differ from the start');
    const half = await post(path, settingsForm({}, 'sun', 18, { quiet_start: '22:00' }), asMember(writer));
    expect(half.status).toBe(400);
    expect(half.html).toContain('Quiet hours until: must be a time such as 22:00');
    const zone = await post(path, settingsForm({}, 'sun', 18, { zone: 'Mars/Olympus_Mons' }), asMember(writer));
    expect(zone.status).toBe(400);
    expect(zone.html).toContain('Time zone: is not a time zone this server knows');
    // The form comes back with what was typed.
    expect(zone.html).toContain('value="Mars/Olympus_Mons"');
    const mode = await post(path, settingsForm({ missed_dose: 'hourly' }, 'sun', 18), asMember(writer));
    expect(mode.status).toBe(400);
    expect(mode.html).toContain('Missed doses:');
    const hour = await post(path, settingsForm({}, 'sun', 24), asMember(writer));
    expect(hour.status).toBe(400);
    expect(hour.html).toContain('Digest hour: must be an hour from 0 to 23');
    const page = await fetch(`${svc.config.appUrl}${path}`, { headers: { cookie: writer.cookie } });
    const html = await page.text();
    expect(page.status).toBe(200);
    // Nothing was saved: the defaults stand (missed doses right away, the digest on Sunday at 18:00).
    expect(html).toMatch(/id="mode_missed_dose" name="mode_missed_dose"><option value="now" selected/);
    expect(html).toContain('<option value="sun" selected');
  });
});

/** One `carecircle alerts` command in this process, with its output captured. */
async function alertsCli(s: TestService, args: string[]) {
  let stdout = '';
  const out = vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => ((stdout += String(chunk)), true));
  const err = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
  try {
    return { code: await alertsCommand(args, { ...s.config, mongoUrl: s.mongoUrl }), stdout };
  } finally {
    out.mockRestore();
    err.mockRestore();
  }
}

/** A note from the agency that mentions a fall and a hospital visit: urgent, right away by default. */
async function fallNote(s: TestService, fam: Family, partner: Partner) {
  const r = await postEvent(s.urls.pipe!, partner, {
    institution_id: partner.institutionId,
    subject_ref: `rose-${fam.lovedOneId}`,
    event_type: 'note_added',
    occurred_at: new Date(Date.now() - 60_000).toISOString(),
    payload: { caregiver_id: 'cg-1', note_text: 'She fell in the bathroom and was taken to the hospital.' },
  });
  expect(r.status).toBe(202);
  await storedEvents(s.store.db, { lovedOneId: fam.lovedOneId, eventType: 'note_added' }, 1);
}

describe('alerts - the outbox across a restart', () => {
  it('when the service stops with one mail sent and one taken mid-send, then after the restart every member has exactly one mail', async () => {
    const first = await startTestService({ env: { DATA_KEY: TEST_DATA_KEY, SMTP_URL: smtp.url, ALERTS_ON_STORE: 'off' } });
    const fam = await family(first.store.db, first.credentials, first.config);
    const members = [`${fam.uid}@example.com`, (await member(fam, 'read', first)).email, (await member(fam, 'read', first)).email];
    const partner = await onboard(first.store.db, first.credentials);
    await shareWith(first, partner, `rose-${fam.lovedOneId}`, fam);
    await fallNote(first, fam, partner);
    const t0 = Date.now();
    const before = engineAt(first, () => t0);
    expect(await before.scanRecords()).toMatchObject({ decided: 1 });
    expect(await before.deliver(1)).toMatchObject({ sent: 1 });
    // Taken, and the process goes before it is sent.
    expect(await before.outbox.take(new Date(t0))).not.toBeNull();
    await first.stop();

    const again = await startTestService({ mongoUrl: first.mongoUrl, env: { DATA_KEY: TEST_DATA_KEY, SMTP_URL: smtp.url, ALERTS_ON_STORE: 'off' } });
    try {
      // Right after the restart the taken one is still leased; once the lease runs out it goes.
      await engineAt(again, () => t0 + 1_000).run();
      await engineAt(again, () => t0 + LEASE_MS + 1_000).run();
      await engineAt(again, () => t0 + LEASE_MS + 2_000).run();
      for (const to of members) {
        const mails = (await mailsTo(to)).filter((m) => m.subject === 'Rose: a note mentions a fall and a hospital visit');
        expect(mails, to).toHaveLength(1);
      }
      const rows = await again.store.db.collection<DeliveryRecord>(ALERT_DELIVERIES).find({ lovedOneId: fam.lovedOneId }).toArray();
      expect(rows.map((r) => r.state)).toEqual(['sent', 'sent', 'sent']);
      // Sent, the words are not kept.
      expect(rows.filter((r) => r.message || r.note)).toEqual([]);
      expect((await alertsCli(again, [fam.lovedOneId])).stdout).toContain(`nothing waiting for ${fam.lovedOneId}`);
    } finally {
      await again.stop();
    }
  });
});

describe('alerts - a store that drops out mid-send', () => {
  it('when the store is gone just after the SMTP server took the mail, then the delivery is marked sent once it is back, and the mail is not sent again', async () => {
    const s = await startTestService({ env: { DATA_KEY: TEST_DATA_KEY, SMTP_URL: smtp.url, ALERTS_ON_STORE: 'off' } });
    // Only this test's engine sends: no minute run.
    await s.cron?.stop();
    const client = new MongoClient(s.mongoUrl);
    try {
      const fam = await family(s.store.db, s.credentials, s.config);
      const partner = await onboard(s.store.db, s.credentials);
      await shareWith(s, partner, `rose-${fam.lovedOneId}`, fam);
      await fallNote(s, fam, partner);
      // The engine on a connection of its own, which drops right after the relay accepted the
      // first mail and is back a moment later (a database restarting).
      await client.connect();
      const mail = emailChannel(s.config, client.db());
      let sends = 0;
      const dropping: Channel = {
        name: 'email',
        send: async (d) => {
          await mail.send(d);
          if (sends++ > 0) return;
          await client.close();
          setTimeout(() => void client.connect(), 300);
        },
      };
      const t0 = Date.now();
      const engineAt = (at: number) =>
        new AlertEngine({
          config: s.config,
          db: client.db(),
          credentials: s.credentials,
          timelines: s.timelines,
          log: createLogger('silent'),
          clock: () => at,
          channels: [dropping],
        });
      expect(await engineAt(t0).scanRecords()).toMatchObject({ decided: 1 });
      expect(await engineAt(t0).deliver()).toMatchObject({ sent: 1, failed: 0 });
      // Past any backoff and any lease: nothing is left to send.
      expect(await engineAt(t0 + LEASE_MS + 60 * 60_000).deliver()).toMatchObject({ sent: 0 });
      const rows = await s.store.db.collection<DeliveryRecord>(ALERT_DELIVERIES).find({ lovedOneId: fam.lovedOneId }).toArray();
      expect(rows.map((r) => [r.state, r.attempts])).toEqual([['sent', 1]]);
      expect((await mailsTo(`${fam.uid}@example.com`)).filter((m) => m.subject === 'Rose: a note mentions a fall and a hospital visit')).toHaveLength(1);
    } finally {
      await client.close();
      await s.stop();
    }
  });
});

describe('alerts - a digest run that dies half way', () => {
  it('when a run dies after queueing a digest and before deciding it, then the next run mails that digest once, and nobody gets it as an alert', async () => {
    const s = await startTestService({ env: { DATA_KEY: TEST_DATA_KEY, SMTP_URL: smtp.url, ALERTS_ON_STORE: 'off' } });
    await s.cron?.stop();
    // The dying run's connection: it drops as soon as the digest's delivery is written.
    const client = new MongoClient(s.mongoUrl, { monitorCommands: true });
    try {
      const fam = await family(s.store.db, s.credentials, s.config);
      const other = await member(fam, 'read', s);
      // The owner wants missed doses in a daily digest, due from midnight; the other member right away.
      const prefs = new PreferenceStore(s.store.db);
      const defaults = defaultPreferences('UTC');
      await prefs.set(fam.uid, fam.lovedOneId, { ...defaults, modes: { ...defaults.modes, missed_dose: 'daily' }, digestHour: 0 });

      await client.connect();
      closeAfterInsert(client, ALERT_DELIVERIES);
      const now = Date.now();
      const dying = new AlertEngine({ ...engineDeps(s, now), db: client.db(), channels: [emailChannel(s.config, client.db())] });
      await expect(dying.queueDigests()).rejects.toThrow();

      const next = engineAt(s, () => now);
      // Queued already: decided now, and sent, but not queued again.
      expect(await next.run()).toMatchObject({ refanned: 0, digests: 0, sent: 1 });
      expect(await s.store.db.collection(ALERT_DECISIONS).countDocuments({ lovedOneId: fam.lovedOneId, what: 'daily digest', fannedOut: true })).toBe(1);
      expect((await mailsTo(`${fam.uid}@example.com`)).filter((m) => m.subject === 'Rose: your daily care digest')).toHaveLength(1);
      expect(await mailsTo(other.email)).toHaveLength(0);
    } finally {
      await client.close();
      await s.stop();
    }
  });
});

describe('alerts - what is kept', () => {
  it('when a member leaves and a loved one is removed, then their alert settings, ranges and pending mail are forgotten', async () => {
    const fam = await family(svc.store.db, svc.credentials, svc.config);
    const leaving = await member(fam, 'write');
    const path = `/settings/alerts/${fam.lovedOneId}`;
    expect((await post(path, settingsForm({}, 'sun', 18), asMember(leaving))).status).toBe(303);
    expect((await post(path, settingsForm({}, 'sun', 18), asMember(fam))).status).toBe(303);
    expect((await post(`/care/${fam.lovedOneId}/alert-ranges`, { vital: 'pulse', unit: '/min', low: '50' }, asMember(leaving))).status).toBe(303);
    const engine = engineAt(svc, Date.now);
    const prefs = () => svc.store.db.collection<{ uid: string; lovedOneId: string }>('alert_preferences').find({ lovedOneId: fam.lovedOneId }).toArray();
    expect((await prefs()).map((p) => p.uid).sort()).toEqual([fam.uid, leaving.uid].sort());

    expect(await new FamilyCircle(svc.store.db, svc.credentials).leave(fam.workspaceId, leaving.uid)).toBe('left');
    await engine.forgetGone();
    expect((await prefs()).map((p) => p.uid)).toEqual([fam.uid]);
    expect(await engine.ranges.of(fam.lovedOneId)).toHaveLength(1);

    expect(await deleteLovedOne(svc.store.db, svc.credentials, fam.workspaceId, fam.lovedOneId)).toBe(true);
    await engine.forgetGone();
    expect(await prefs()).toEqual([]);
    expect(await engine.ranges.of(fam.lovedOneId)).toEqual([]);
  });
});

describe('alerts - quiet hours', () => {
  it('when an alert waits out quiet hours and the member turns the kind off meanwhile, then it is not sent; an urgent one is not held', async () => {
    const fam = await family(svc.store.db, svc.credentials, svc.config);
    const sleeper = await member(fam);
    const now = new Date();
    // Quiet from an hour ago to an hour ahead, in UTC.
    const quiet = { quiet_start: hhmm(new Date(now.getTime() - 3_600_000)), quiet_end: hhmm(new Date(now.getTime() + 3_600_000)) };
    expect((await post(`/settings/alerts/${fam.lovedOneId}`, settingsForm({ inbox_mail: 'now' }, 'sun', 18, quiet), asMember(sleeper))).status).toBe(303);
    const engine = engineAt(svc, () => now.getTime());
    const mail = (kind: string, id: string) => ({
      key: `${kind}:${id}`,
      kind: kind as 'inbox_mail' | 'flagged_note',
      lovedOneId: fam.lovedOneId,
      workspaceId: fam.workspaceId,
      what: kind === 'inbox_mail' ? 'new mail arrived in the inbox' : 'a note mentions a fall',
      path: `/care/${fam.lovedOneId}`,
      at: now,
    });
    const rows = () => svc.store.db.collection<DeliveryRecord>(ALERT_DELIVERIES).find({ uid: sleeper.uid }).toArray();
    // Decided through the engine's own path, as the rules would.
    const decide = (c: ReturnType<typeof mail>) => engine.decideAll([c], now);
    await decide(mail('inbox_mail', `q-${fam.lovedOneId}`));
    await decide(mail('flagged_note', `q-${fam.lovedOneId}`));
    await engine.deliver();
    const states = Object.fromEntries((await rows()).map((r) => [r.kind, r.state]));
    expect(states).toEqual({ inbox_mail: 'pending', flagged_note: 'sent' });
    expect((await post(`/settings/alerts/${fam.lovedOneId}`, settingsForm({ inbox_mail: 'never' }, 'sun', 18, quiet), asMember(sleeper))).status).toBe(303);
    const later = engineAt(svc, () => now.getTime() + 2 * 3_600_000);
    await later.deliver();
    expect(Object.fromEntries((await rows()).map((r) => [r.kind, r.state]))).toEqual({ inbox_mail: 'withdrawn', flagged_note: 'sent' });
    expect((await mailsTo(sleeper.email)).map((m) => m.subject)).toEqual(['Rose: a note mentions a fall']);
  });
});

describe('alerts - on NATS', () => {
  it('when NATS_URL is set, then each delivery goes through the JetStream work queue to a worker at once, and a later pass over the outbox sends nothing again', async () => {
    const onNats = await startTestService({ nats: true, env: { DATA_KEY: TEST_DATA_KEY, SMTP_URL: smtp.url, ALERTS_ON_STORE: 'off' } });
    // No cron pass over the outbox in this process: only the work queue can send.
    await onNats.cron?.stop();
    try {
      const { fam, members, partner } = await sharedFamily(onNats);
      await fallNote(onNats, fam, partner);
      const engine = alertEngine({
        config: onNats.config,
        db: onNats.store.db,
        credentials: onNats.credentials,
        timelines: onNats.timelines,
        log: createLogger('silent'),
        clock: Date.now,
        bus: onNats.bus,
      });
      // Decided and queued only: the workers' consumer sends.
      expect(await engine.scanRecords()).toMatchObject({ decided: 1 });
      const subject = 'Rose: a note mentions a fall and a hospital visit';
      await vi.waitFor(
        async () => {
          for (const to of members) expect((await mailsTo(to)).filter((m) => m.subject === subject)).toHaveLength(1);
        },
        { timeout: 15_000, interval: 50 },
      );
      expect(await engine.deliver()).toMatchObject({ sent: 0 });
      expect((await mailsTo(members[0]!)).filter((m) => m.subject === subject)).toHaveLength(1);
    } finally {
      await onNats.stop();
    }
  });
});

describe('alerts - the SMTP relay', () => {
  const delivery = (i: number): DeliveryRecord => ({
    _id: `flagged_note:evt_pool${i}|u-pool|email`,
    decisionId: `flagged_note:evt_pool${i}`,
    uid: 'u-pool',
    lovedOneId: 'lo-pool',
    kind: 'flagged_note',
    channel: 'email',
    message: { to: 'pool@example.com', subject: `Rose: note ${i}`, text: 'A note mentions a fall.', html: '<p>A note mentions a fall.</p>', headers: {} },
    state: 'sending',
    attempts: 1,
    notBefore: new Date(),
    createdAt: new Date(),
  });

  it('when several alerts are mailed, then they go over kept-open connections, unless SMTP_URL says pool=false', async () => {
    const sink = await startSmtpSink();
    try {
      const pooled = emailChannel({ ...svc.config, smtpUrl: sink.url }, svc.store.db);
      for (let i = 0; i < 6; i++) await pooled.send(delivery(i));
      pooled.close?.();
      expect(sink.received).toHaveLength(6);
      expect(sink.connections()).toBe(1);

      const single = emailChannel({ ...svc.config, smtpUrl: `${sink.url}?pool=false` }, svc.store.db);
      for (let i = 6; i < 9; i++) await single.send(delivery(i));
      single.close?.();
      expect(sink.received).toHaveLength(9);
      expect(sink.connections()).toBe(4);
    } finally {
      await sink.close();
    }
  });
});

describe('alerts - failures and the local outbox', () => {
  // On NATS first: the other puts its dead letter back in the queue, for the test after this one.
  it.each([
    ['claims in NATS key-value', true],
    ['the outbox’s own lease', false],
  ])(
    'when the SMTP server keeps answering 451, then the delivery is retried with backoff and then listed as a dead letter (taken through %s)',
    async (_, onNats) => {
      const bus = onNats ? await NatsBus.connect(inject('natsUrl'), createLogger('silent'), 'alerts-451-test') : undefined;
      // On NATS the work queue sends a due delivery; the pass over the outbox only what it left.
      const queueGrace = bus ? QUEUE_GRACE_MS : 0;
      const port = await freePort();
      const refusing = new SMTPServer({
        closeTimeout: 200,
        authOptional: true,
        disabledCommands: ['STARTTLS'],
        logger: false,
        onRcptTo: (_address, _session, cb) => cb(Object.assign(new Error('mailbox busy, try later'), { responseCode: 451 })),
      });
      await new Promise<void>((resolve) => refusing.listen(port, '127.0.0.1', resolve));
      try {
        const fam = await family(svc.store.db, svc.credentials, svc.config);
        const partner = await onboard(svc.store.db, svc.credentials);
        await shareWith(svc, partner, `rose-${fam.lovedOneId}`, fam);
        await fallNote(svc, fam, partner);
        let now = Date.now();
        const engine = engineAt(svc, () => now, {
          smtpUrl: `smtp://127.0.0.1:${port}`,
          ...(bus ? { claims: new KvAttemptClaims(bus.kv, alertClaimsBucketName(`t451${randomBytes(4).toString('hex')}`)) } : {}),
        });
        await engine.scanRecords();
        now += queueGrace;
        const deliveries = () => svc.store.db.collection<DeliveryRecord>(ALERT_DELIVERIES).find({ lovedOneId: fam.lovedOneId }).toArray();
        for (let attempt = 1; attempt < MAX_ATTEMPTS; attempt++) {
          expect(await engine.deliver()).toMatchObject({ sent: 0, failed: 1, dead: 0 });
          const [d] = await deliveries();
          expect(d).toMatchObject({ state: 'pending', attempts: attempt, lastError: expect.stringContaining('SMTP 451') });
          // Not again before its backoff.
          expect(await engine.deliver()).toMatchObject({ failed: 0 });
          now += backoffMs(attempt) + queueGrace;
        }
        expect(await engine.deliver()).toMatchObject({ dead: 1 });
        const [dead] = await deliveries();
        expect(dead).toMatchObject({ state: 'dead', attempts: MAX_ATTEMPTS });
        if (bus) return;
        const listed = await alertsCli(svc, [fam.lovedOneId, '--json']);
        expect(JSON.parse(listed.stdout)).toEqual([expect.objectContaining({ delivery_id: dead!._id, state: 'dead', kind: 'flagged_note', channel: 'email' })]);
        expect((await alertsCli(svc, ['dead'])).stdout).toContain(dead!._id);
        expect((await alertsCli(svc, ['retry', dead!._id])).code).toBe(0);
        expect((await deliveries())[0]).toMatchObject({ state: 'pending', attempts: 0 });
      } finally {
        await new Promise<void>((resolve) => refusing.close(() => resolve()));
        await bus?.close();
      }
    },
  );

  it('when SMTP_URL is empty, then the mail lands in the local outbox that `carecircle alerts outbox` prints', async () => {
    const fam = await family(svc.store.db, svc.credentials, svc.config);
    const partner = await onboard(svc.store.db, svc.credentials);
    await shareWith(svc, partner, `rose-${fam.lovedOneId}`, fam);
    await fallNote(svc, fam, partner);
    const engine = engineAt(svc, Date.now, { smtpUrl: '' });
    await engine.scanRecords();
    // (The dead letter the test before put back in the queue goes out this way too.)
    expect((await engine.deliver()).sent).toBeGreaterThanOrEqual(1);
    const kept = await svc.store.db.collection<LocalMail>(LOCAL_OUTBOX).findOne({ to: `${fam.uid}@example.com` });
    expect(kept).toMatchObject({ subject: 'Rose: a note mentions a fall and a hospital visit' });
    expect(kept!.headers['List-Unsubscribe-Post']).toBe('List-Unsubscribe=One-Click');
    const printed = await alertsCli(svc, ['outbox', '--limit', '50']);
    expect(printed.code).toBe(0);
    expect(printed.stdout).toContain(`to ${fam.uid}@example.com\nSubject: Rose: a note mentions a fall and a hospital visit`);
  });
});

describe('alerts - within seconds of the record', () => {
  const subject = 'Rose: a note mentions a fall and a hospital visit';
  /** Each member's mails with the fall subject, until each has one; then each still has exactly one. */
  const eachGetsOne = async (members: string[]) => {
    await vi.waitFor(
      async () => {
        for (const to of members) expect((await mailsTo(to)).filter((m) => m.subject === subject)).toHaveLength(1);
      },
      { timeout: 20_000, interval: 50 },
    );
  };

  it('when a partner note mentions a fall, then with the embedded defaults the mail reaches the SMTP server without the minute run, once', async () => {
    const fast = await startTestService({ env: { DATA_KEY: TEST_DATA_KEY, SMTP_URL: smtp.url } });
    // No minute run in this process: only the read on store can send.
    await fast.cron?.stop();
    try {
      const { fam, members, partner } = await sharedFamily(fast);
      await fallNote(fast, fam, partner);
      await eachGetsOne(members);
      // Marked sent just after the relay took each mail.
      const states = async () =>
        (await fast.store.db.collection<DeliveryRecord>(ALERT_DELIVERIES).find({ lovedOneId: fam.lovedOneId }).toArray()).map((r) => r.state);
      await expect.poll(states).toEqual(['sent', 'sent']);
      // A later read of the same records decides nothing again.
      expect(await engineAt(fast, Date.now).scanRecords()).toMatchObject({ decided: 0 });
    } finally {
      await fast.stop();
    }
  });

  it('when the service stops, then it lets go of the SMTP connections it kept open', async () => {
    const own = await startSmtpSink();
    const fast = await startTestService({ env: { DATA_KEY: TEST_DATA_KEY, SMTP_URL: own.url } });
    let stopped = false;
    try {
      const { fam, members, partner } = await sharedFamily(fast);
      await fallNote(fast, fam, partner);
      await vi.waitFor(() => expect(own.received.filter((m) => members.some((to) => m.to.includes(to)))).toHaveLength(members.length), {
        timeout: 20_000,
        interval: 50,
      });
      // Kept open for the next alert while the service runs.
      expect(own.open()).toBeGreaterThan(0);
      await fast.stop();
      stopped = true;
      await vi.waitFor(() => expect(own.open()).toBe(0), { timeout: 5_000, interval: 50 });
    } finally {
      if (!stopped) await fast.stop();
      await own.close();
    }
  });

  it('when the read of care events by arrival would not find the new record, then the mail still goes out, decided from the announced record', async () => {
    const fast = await startTestService({ env: { DATA_KEY: TEST_DATA_KEY, SMTP_URL: smtp.url } });
    await fast.cron?.stop();
    try {
      // The scan's watermark an hour ahead: a read of new records by `receivedAt` finds nothing now.
      await engineAt(fast, Date.now).outbox.setMark('scan', new Date(Date.now() + 3_600_000));
      const { fam, members, partner } = await sharedFamily(fast);
      await fallNote(fast, fam, partner);
      await eachGetsOne(members);
      expect(await engineAt(fast, Date.now).scanRecords()).toMatchObject({ read: 0 });
    } finally {
      await fast.stop();
    }
  });

  it('when care events are stored, then only those that may raise an alert travel with the announcement, and a routine one is announced with none', async () => {
    const announced: { stream: string; records?: { eventType: string }[] }[] = [];
    const sub = svc.bus.subscribe(subjects(svc.config.busNamespace).recordsStored, (m) => void announced.push(m.data as (typeof announced)[number]));
    try {
      const { fam, partner } = await sharedFamily(svc);
      const onTime = new Date(Date.now() - 60_000).toISOString();
      const r = await postEvent(svc.urls.pipe!, partner, {
        institution_id: partner.institutionId,
        subject_ref: `rose-${fam.lovedOneId}`,
        event_type: 'visit_started',
        occurred_at: onTime,
        payload: { caregiver_id: 'cg-1', scheduled_start: onTime, actual_start: onTime },
      });
      expect(r.status).toBe(202);
      await storedEvents(svc.store.db, { lovedOneId: fam.lovedOneId, eventType: 'visit_started' }, 1);
      await fallNote(svc, fam, partner);
      await vi.waitFor(() => expect(announced.filter((a) => a.stream === 'care')).toHaveLength(2));
      expect(announced.filter((a) => a.stream === 'care').map((a) => a.records?.map((x) => x.eventType))).toEqual([[], ['note_added']]);
    } finally {
      await sub.drain();
    }
  });

  it('when an announcement comes without its records (an append past the size carried), then the worker reads new records instead and the mail goes out', async () => {
    const big = { _id: 'evt_big', lovedOneId: 'lo', workspaceId: 'ws', payload: { text: 'x'.repeat(ANNOUNCED_RECORDS_MAX_BYTES) } };
    expect(recordsStored('care', [big])).toEqual({ stream: 'care' });
    const small = { ...big, payload: {} };
    expect(recordsStored('care', [small])).toEqual({ stream: 'care', records: [small] });
    // None that a listener needs is an answer of its own; no records at all is the stream alone.
    expect(recordsStored('care', [])).toEqual({ stream: 'care', records: [] });
    expect(recordsStored('inbox', null)).toEqual({ stream: 'inbox' });
    const fast = await startTestService({ env: { DATA_KEY: TEST_DATA_KEY, SMTP_URL: smtp.url } });
    await fast.cron?.stop();
    try {
      const fam = await family(fast.store.db, fast.credentials, fast.config);
      const members = [`${fam.uid}@example.com`, (await member(fam, 'read', fast)).email];
      // Stored past the announcing wrapper, then announced by its stream alone.
      const now = new Date();
      await appendCareEvents(timelinesOf(fast.store.db, fast.timelines.shape), [
        {
          _id: `evt_${randomBytes(8).toString('hex')}`,
          lovedOneId: fam.lovedOneId,
          workspaceId: fam.workspaceId,
          source: 'partner',
          eventType: 'note_added',
          occurredAt: now,
          receivedAt: now,
          payload: { caregiver_id: 'cg-1', note_text: 'She fell in the bathroom and was taken to the hospital.' },
        },
      ]);
      fast.bus.publish(subjects(fast.config.busNamespace).recordsStored, { stream: 'care' });
      await eachGetsOne(members);
    } finally {
      await fast.stop();
    }
  });

  it('when two worker processes on NATS both read the new record, then each member gets the mail once, without the minute run', async () => {
    const mongoUrl = freshDatabaseUrl(inject('mongoUrl'));
    const env = {
      NATS_URL: inject('natsUrl'),
      MONGO_URL: mongoUrl,
      BUS_NAMESPACE: `alfast${process.pid}`,
      DATA_KEY: TEST_DATA_KEY,
      SMTP_URL: smtp.url,
      APP_URL: 'http://localhost:8081',
    };
    const workers = [startRole('worker', env), startRole('worker', env)];
    let gateway: TestService | undefined;
    try {
      await Promise.all(workers.map((w) => w.waitFor(/alert sender started/)));
      gateway = await startTestService({ nats: true, role: 'gateway', mongoUrl, env });
      const { fam, members, partner } = await sharedFamily(gateway);
      await fallNote(gateway, fam, partner);
      await eachGetsOne(members);
      // Marked sent once the relay took every mail of the sender's batch: soon after the last arrived.
      const states = async () =>
        (await gateway!.store.db.collection<DeliveryRecord>(ALERT_DELIVERIES).find({ lovedOneId: fam.lovedOneId }).toArray()).map((r) => r.state);
      await expect.poll(states).toEqual(['sent', 'sent']);
    } finally {
      await gateway?.stop();
      await Promise.all(workers.map((w) => w.kill('SIGKILL')));
    }
  });
});
