// A loved one's timeline, medications and vital signs, read from the app host after an agency sent
// events through the signed ingest and a clinic mailed the family inbox; payloads stay inert.
import nodemailer from 'nodemailer';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { clockIn } from '../src/care/time.js';
import { TIMELINE_PAGE } from '../src/care/timeline.js';
import { WorkspaceStore } from '../src/family/records.js';
import { startTestService, type TestService } from './harness/service.js';
import { trialEvents } from './care.fixtures.js';
import { careEvents, family, onboard, postEvent, shareWith, TEST_DATA_KEY, type Family, type Partner } from './ingest.fixtures.js';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService({ env: { DATA_KEY: TEST_DATA_KEY } });
});
afterAll(async () => {
  await svc?.stop();
});

// Tokyo keeps one offset all year, so the words below do not change with the season.
const TZ = 'Asia/Tokyo';
const now = new Date();
// Counted from today in Tokyo, not in UTC: from 15:00 UTC Tokyo is already on the next day.
const [year, month, date] = clockIn(TZ).isoDay(now).split('-').map(Number) as [number, number, number];
/** The day `back` days before today in Tokyo, at hh:mm UTC; 23:02 UTC is 8:02 am the next day in Tokyo. */
const utc = (back: number, hh: number, mm: number) => new Date(Date.UTC(year, month - 1, date - back, hh, mm)).toISOString();

const send = async (partner: Partner, subject: string, event_type: string, occurred_at: string, payload: Record<string, unknown>) => {
  const r = await postEvent(svc.urls.pipe!, partner, { institution_id: partner.institutionId, subject_ref: subject, event_type, occurred_at, payload });
  expect(r.status, JSON.stringify(r.json)).toBe(202);
};

const page = async (fam: Family | null, path: string, tz = TZ) => {
  const res = await fetch(`${svc.config.appUrl}${path}`, { headers: fam ? { cookie: `${fam.cookie}; tz=${encodeURIComponent(tz)}` } : {} });
  return { status: res.status, html: await res.text(), csp: res.headers.get('content-security-policy') ?? '' };
};

/** The page's text, tags removed and entities read back, for assertions in plain words. */
const textOf = (html: string) =>
  html
    .replace(/<[^>]+>/g, ' ')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&')
    .replace(/\s+/g, ' ');

/** The agency's internal id of an aide, with the display name it may send beside it. */
const ana = { caregiver_id: 'cg-2210', caregiver_name: 'Ana' };

/** The text of the timeline section alone (the blocks above it repeat some entries). */
const timelineText = (html: string) => textOf(html.slice(html.indexOf('id="timeline-title"'), html.indexOf('class="pager"')));

describe('care pages - a loved one seen by the family', () => {
  let partner: Partner;
  let fam: Family;
  beforeAll(async () => {
    partner = await onboard(svc.store.db, svc.credentials, 'Evergreen Home Care');
    fam = await family(svc.store.db, svc.credentials, svc.config);
    await shareWith(svc, partner, 'rosa-1', fam);
    await send(partner, 'rosa-1', 'visit_started', utc(2, 22, 0), { ...ana, scheduled_start: utc(2, 22, 0), actual_start: utc(2, 22, 0) });
    for (const back of [4, 2])
      await send(partner, 'rosa-1', 'med_administered', utc(back, 23, 2), {
        medication_name: 'Metoprolol',
        dose_amount: 25,
        dose_unit: 'mg',
        administered_by: 'cg-2210',
        caregiver_name: 'Ana',
        scheduled_at: utc(back, 23, 0),
      });
    await send(partner, 'rosa-1', 'vital_recorded', utc(2, 23, 10), {
      vital_type: 'blood_pressure',
      value: 142,
      secondary_value: 88,
      unit: 'mmHg',
      recorded_by: 'cg-2210',
      caregiver_name: 'Ana',
    });
    await send(partner, 'rosa-1', 'vital_recorded', utc(3, 23, 10), {
      vital_type: 'blood_pressure',
      value: 130,
      secondary_value: 80,
      unit: 'mm[Hg]',
      recorded_by: 'cg-2210',
      caregiver_name: 'Ana',
    });
    await send(partner, 'rosa-1', 'vital_recorded', utc(2, 23, 11), {
      vital_type: 'pulse',
      value: 72,
      unit: '/min',
      recorded_by: 'cg-2210',
      caregiver_name: 'Ana',
    });
    await send(partner, 'rosa-1', 'vital_recorded', utc(2, 23, 12), {
      vital_type: 'weight',
      value: 61.5,
      unit: 'kg',
      recorded_by: 'cg-2210',
      caregiver_name: 'Ana',
    });
    await send(partner, 'rosa-1', 'note_added', utc(2, 23, 30), { caregiver_id: 'cg-1043', note_text: 'Ate a full breakfast.' });
    await send(partner, 'rosa-1', 'visit_ended', utc(1, 1, 15), { ...ana, actual_end: utc(1, 1, 15), duration_minutes: 195 });
    await send(partner, 'rosa-1', 'fall_reported', utc(1, 2, 0), { severity: 'minor', reported_by: 'cg-1043' });
    const lovedOne = await new WorkspaceStore(svc.store.db, svc.credentials, svc.config.inboxDomain, svc.timelines).lovedOneIn(fam.workspaceId, fam.lovedOneId);
    const mail = nodemailer.createTransport({ host: '127.0.0.1', port: Number(new URL(svc.urls.smtp!).port), secure: false, ignoreTLS: true });
    await mail.sendMail({ from: 'clinic@sender.example', to: lovedOne!.inboxAddress, subject: 'Lab results ready', text: 'Your results are in the portal.' });
    mail.close();
    await vi.waitFor(async () => expect(await careEvents(svc.store.db).findOne({ lovedOneId: fam.lovedOneId, eventType: 'inbox_message' })).not.toBeNull(), {
      timeout: 10_000,
      interval: 50,
    });
  });

  it('when the family opens the loved one, then the timeline merges visits, doses, vitals, notes, mail and unknown types under day headings, each time once, in plain words and their zone', async () => {
    const { status, html, csp } = await page(fam, `/care/${fam.lovedOneId}`);
    expect(status).toBe(200);
    expect(csp).toContain("script-src 'self'");
    const clock = clockIn(TZ);
    const text = timelineText(html);
    expect(text).toContain('8:02 am Metoprolol 25 mg given by Ana');
    expect(text).toContain('10:15 am Visit by Ana ended after 3 h 15 min');
    // Readings taken together are one entry, one reading a line.
    expect(text).toContain('8:12 am 3 readings by Ana Vital signs Blood pressure 142/88 mmHg Pulse 72 /min Weight 61.5 kg');
    expect(text).toContain('8:02 am Metoprolol 25 mg given by Ana Medications Scheduled for 8:00 am');
    expect(text).toContain('8:30 am Note from an aide from Evergreen Home Care Notes Ate a full breakfast.');
    expect(text).toContain('11:00 am Fall reported Other update Needs attention: fall');
    expect(text).toMatch(/Severity minor Reported by an aide from Evergreen Home Care/);
    expect(text).toMatch(/Mail from clinic@sender\.example: Lab results ready/);
    expect(textOf(html)).toContain(`Times are in ${TZ} (GMT+9)`);
    // Each time is printed once: under its day's heading, never again in the sentence.
    expect(text).not.toMatch(/ at \d{1,2}:\d{2} [ap]m/);
    for (const back of [1, 2, 3]) expect(html).toContain(`<h3 class="day-heading" id="day-${clock.isoDay(new Date(utc(back, 23, 10)))}">`);
    const day = (back: number) => clock.day(new Date(utc(back, 23, 10)));
    const order = [
      `Today, ${day(1)}`,
      'Lab results',
      `Yesterday, ${day(2)}`,
      'Fall reported',
      'Note from',
      'Metoprolol 25 mg',
      day(3),
      'Blood pressure 130/80',
    ].map((s) => text.indexOf(s));
    expect(order.every((i) => i >= 0)).toBe(true);
    expect(order).toEqual([...order].sort((a, b) => a - b));
    // The agency's internal ids of its aides never reach the family.
    expect(html).not.toMatch(/cg-2210|cg-1043/);
    expect((await page(fam, `/care/${fam.lovedOneId}`, 'Not/AZone')).html).toContain('Times are in UTC.');
  });

  it('when the family filters by kind or by day, then only those entries are listed', async () => {
    const meds = timelineText((await page(fam, `/care/${fam.lovedOneId}?type=medications`)).html);
    expect(meds).toContain('Metoprolol 25 mg');
    expect(meds).not.toContain('Blood pressure');
    const clock = clockIn(TZ);
    const day = clock.isoDay(new Date(utc(3, 23, 10)));
    const oneDay = timelineText((await page(fam, `/care/${fam.lovedOneId}?from=${day}&to=${day}`)).html);
    expect(oneDay).toContain('Blood pressure 130/80 mmHg');
    expect(oneDay).not.toContain('Fall reported');
    expect(oneDay).not.toContain('Metoprolol');
  });

  it('when the family opens medications, then each dose on one line with its time and person, and a scheduled dose nobody recorded', async () => {
    const { html } = await page(fam, `/care/${fam.lovedOneId}/medications`);
    const text = textOf(html);
    const clock = clockIn(TZ);
    expect(text).toContain('8:00 am Given Metoprolol 25 mg at 8:02 am by Ana');
    expect(text).toMatch(new RegExp(`${clock.day(new Date(utc(3, 23, 0)))} 8:00 am Not recorded Metoprolol 25 mg check with the agency`));
    expect(html).not.toContain('cg-2210');
  });

  it('when the family opens vital signs, then one chart per kind with units, text alternatives and a table, and no unsourced range', async () => {
    const { html } = await page(fam, `/care/${fam.lovedOneId}/vitals?days=7`);
    const charts = html.match(/<svg [^>]*role="img"/g) ?? [];
    expect(charts).toHaveLength(3);
    expect(html).toContain('<title id="vital-0-title">Blood pressure (mmHg)</title>');
    expect(html).toMatch(/<desc id="vital-0-desc">2 readings between .*systolic from 130 to 142 mmHg; the latest, .*, was 142\/88 mmHg\.<\/desc>/);
    expect(html).toContain('Pulse (/min)');
    expect(html).toContain('Weight (kg)');
    expect(html).toContain('<caption>Blood pressure (mmHg): every reading in the period</caption>');
    expect(html).not.toMatch(/style=/);
    expect(textOf(html)).toContain('No normal ranges are drawn');
  });

  it('when someone outside the workspace asks, then not found; signed out, the sign-in page', async () => {
    const other = await family(svc.store.db, svc.credentials, svc.config);
    for (const path of ['', '/medications', '/vitals']) {
      const r = await page(other, `/care/${fam.lovedOneId}${path}`);
      expect(r.status).toBe(404);
      expect(r.html).not.toContain('Metoprolol');
    }
    const out = await page(null, `/care/${fam.lovedOneId}`);
    expect(out.html).toContain('id="signin"');
    expect(out.html).not.toContain('Metoprolol');
  });

  it('when more entries exist than a page holds, then "Older entries" pages through them without repeats', async () => {
    const p2 = await onboard(svc.store.db, svc.credentials);
    const many = await family(svc.store.db, svc.credentials, svc.config);
    await shareWith(svc, p2, 'many-1', many);
    for (let i = 0; i < TIMELINE_PAGE + 5; i++)
      await send(p2, 'many-1', 'note_added', new Date(now.getTime() - (i + 1) * 60_000).toISOString(), { caregiver_id: 'cg', note_text: `note number ${i}` });
    await send(p2, 'many-1', 'vital_recorded', new Date(now.getTime() - 30_000).toISOString(), {
      vital_type: 'pulse',
      value: 70,
      unit: '/min',
      recorded_by: 'cg',
    });
    const first = await page(many, `/care/${many.lovedOneId}?type=notes`);
    const seen = [...timelineText(first.html).matchAll(/note number (\d+)/g)].map((m) => Number(m[1]));
    expect(seen).toEqual(Array.from({ length: TIMELINE_PAGE }, (_, i) => i));
    const older = /<a href="([^"]+)" id="older"/.exec(first.html)![1]!.replace(/&amp;/g, '&');
    // The filter goes with the page: the next page is still notes only.
    expect(older).toContain('type=notes');
    const second = await page(many, older);
    expect([...timelineText(second.html).matchAll(/note number (\d+)/g)].map((m) => Number(m[1]))).toEqual([0, 1, 2, 3, 4].map((i) => TIMELINE_PAGE + i));
    expect(second.html).not.toContain('id="older"');
    expect(second.html).not.toContain('Pulse');
    expect(second.html).toMatch(/<option value="notes" selected/);
  });

  it('when partner text carries script and attribute payloads, then every care page prints it as inert text', async () => {
    const p3 = await onboard(svc.store.db, svc.credentials, '<script>alert("agency")</script>');
    const evil = await family(svc.store.db, svc.credentials, svc.config);
    await shareWith(svc, p3, 'evil-1', evil);
    const at = utc(1, 3, 0);
    await send(p3, 'evil-1', 'med_administered', at, {
      medication_name: '<script>alert(1)</script>',
      dose_amount: 1,
      dose_unit: '"><img src=x onerror=alert(2)>',
      administered_by: "' onmouseover='alert(3)",
      scheduled_at: at,
    });
    await send(p3, 'evil-1', 'note_added', at, { caregiver_id: '<iframe src="javascript:alert(4)">', note_text: '<svg onload=alert(5)>' });
    await send(p3, 'evil-1', 'vital_recorded', at, {
      vital_type: '<b onclick=alert(6)>bp</b>',
      value: 1,
      unit: '"><script>alert(7)</script>',
      recorded_by: '<img src=x onerror=alert(8)>',
    });
    await send(p3, 'evil-1', 'door_alarm', at, { '<script>k</script>': '<script>alert(10)</script>' });
    for (const path of ['', '?type=notes', '/medications', '/vitals']) {
      const { html } = await page(evil, `/care/${evil.lovedOneId}${path}`);
      // No payload opened a tag, and none broke out of an attribute into an event handler.
      expect(html, path).not.toMatch(/<script>|<img |<iframe|<svg onload|<b onclick/i);
      expect(html, path).not.toMatch(/<[^>]*\son(mouseover|error|click|load)=/i);
    }
    const meds = (await page(evil, `/care/${evil.lovedOneId}/medications`)).html;
    expect(meds).toContain('&lt;script>alert(1)&lt;/script>');
  });
});

describe('care pages - a day read at a glance', () => {
  let fam: Family;
  const trial = trialEvents(now);
  beforeAll(async () => {
    const partner = await onboard(svc.store.db, svc.credentials, 'Evergreen Home Care');
    fam = await family(svc.store.db, svc.credentials, svc.config);
    await shareWith(svc, partner, 'trial-1', fam);
    for (const e of trial.events) await send(partner, 'trial-1', e.event_type, e.occurred_at, e.payload);
  });

  it('when the loved one is opened, then what needs attention comes first (the fall, the missed and the refused dose), then today, then the timeline', async () => {
    const { html } = await page(fam, `/care/${fam.lovedOneId}`, trial.zone);
    const [attention, today, timeline] = ['id="attention"', 'id="today"', 'id="timeline"'].map((s) => html.indexOf(s));
    expect(attention).toBeGreaterThan(0);
    expect(attention).toBeLessThan(today!);
    expect(today).toBeLessThan(timeline!);
    const block = textOf(html.slice(attention, today));
    expect(block).toMatch(
      /Fall Fall reported Today, .*, 10:40 am Severity: minor; Reported by: an aide from Evergreen Home Care; Description: Slipped getting up from her chair\./,
    );
    // The refusal is said once, as the dose it was.
    expect(block.match(/Refused her Metformin/g)).toHaveLength(1);
    expect(block).toContain('Medicine Metoprolol 25 mg not recorded');
    expect(block).toMatch(/Medicine Metformin 500 mg refused Today, .*, 9:00 am Ana Souza wrote: Refused her Metformin/);
    // A routine dose, a routine note and a reading with no family range are not in the block.
    expect(block).not.toMatch(/Lisinopril|breakfast|glucose/i);
    const day = textOf(html.slice(today, timeline));
    expect(day).toContain('7:00 am Given Lisinopril 10 mg at 7:04 am by Ana Souza');
    expect(day).toContain('8:00 am Not recorded Metoprolol 25 mg check with the agency');
    expect(day).toContain('9:00 am Refused Metformin 500 mg Ana Souza wrote: “Refused her Metformin, said it upsets her stomach.”');
    expect(day).toContain('6:00 pm Due Metformin 500 mg');
    expect(day).toContain('6:55 am Visit by Ana Souza started');
    const list = timelineText(html);
    expect(list).toContain('10:20 am Note from an aide from Evergreen Home Care Notes Ate a full breakfast');
    expect(list).toContain('7:23 am 3 readings by Ana Souza Vital signs Blood pressure 142/88 mmHg Pulse 72 /min Blood glucose 188 mg/dL');
    expect(html).not.toMatch(/cg-2210|cg-1043/);
  });

  it('when the medications page is opened, then today’s doses by time come first, the refusal in its slot, and earlier days one line a dose', async () => {
    const { html } = await page(fam, `/care/${fam.lovedOneId}/medications`, trial.zone);
    const text = textOf(html);
    const today = text.slice(text.indexOf('Medicines today'), text.indexOf('Earlier doses'));
    expect(today.match(/\d{1,2}:\d{2} [ap]m (Given|Refused|Not recorded|Due) /g)).toEqual([
      '7:00 am Given ',
      '8:00 am Not recorded ',
      '9:00 am Refused ',
      '6:00 pm Due ',
    ]);
    // The refusal fills the 9 am slot: it is not also "not recorded".
    expect(today).not.toMatch(/Not recorded Metformin/);
    const clock = clockIn(trial.zone);
    const twoDaysAgo = text.slice(text.indexOf(clock.day(trial.at(2, 12, 0))));
    expect(twoDaysAgo).toMatch(
      /^\S+ \S+ \d+ 7:00 am Given Lisinopril 10 mg at 7:04 am by Ana Souza 8:00 am Not recorded Metoprolol 25 mg check with the agency 9:00 am Given Metformin/,
    );
    expect(html.match(/<li class="dose /g)!.length).toBe(4 + 3 * 4);
  });
});
