// Two siblings share the care in headless Chromium at 375 px with JavaScript off, every step a form
// post: the primary caregiver invites a sibling, who joins able to add and take things; one adds a
// medication taken morning and evening, the other logs the evening dose and both see today's doses
// change; an appointment added in the app is in the sibling's calendar feed; the sibling takes a
// task and marks it done. Each page fits the phone and has no serious axe finding.
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import ICAL from 'ical.js';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { screenshot, useServiceWithBrowser } from './harness/browser.js';
import { signIn } from './harness/identity.js';

const run = useServiceWithBrowser({ env: { SMTP_URL: '' } });
const PHONE = { width: 375, height: 812 };
const app = (path: string) => `${run.svc.config.appUrl}${path}`;
const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** axe-core's serious and critical findings on the page as it stands (WCAG 2 A and AA). */
async function seriousViolations(page: Page): Promise<string[]> {
  await page.evaluate(AXE);
  const found = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run(ctx: Document, o: object): Promise<{ violations: { id: string; impact: string | null }[] }> } }).axe;
    return (await axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa'] } })).violations;
  });
  return found.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => v.id);
}

interface Phone {
  /** The person's phone, scripts off. */
  page: Page;
  /** The same person's session with scripts on: axe runs there (its checks wait on timers, which never fire with scripts off). */
  checker: Page;
  close(): Promise<void>;
}

/** A signed-in phone (the session from the development provider, as a browser gets it). */
async function phone(email: string, name: string): Promise<Phone> {
  const cookie = await signIn(run.svc, email, name);
  const eq = cookie.indexOf('=');
  const contexts = await Promise.all([false, true].map((javaScriptEnabled) => run.browser.newContext({ javaScriptEnabled, viewport: PHONE })));
  for (const c of contexts) await c.addCookies([{ name: cookie.slice(0, eq), value: cookie.slice(eq + 1), url: run.svc.config.appUrl }]);
  const [page, checker] = await Promise.all(contexts.map((c) => c.newPage()));
  return { page: page!, checker: checker!, close: async () => void (await Promise.all(contexts.map((c) => c.close()))) };
}

/** The page the phone shows fits 375 px, and axe finds nothing serious on it (loaded again where scripts run). */
async function fits(p: Phone, shot: string): Promise<void> {
  expect(await p.page.evaluate(() => document.documentElement.scrollWidth), shot).toBeLessThanOrEqual(PHONE.width);
  await screenshot(p.page, shot);
  await p.checker.goto(p.page.url());
  expect(await seriousViolations(p.checker), shot).toEqual([]);
}

/** A zone where it is now between 21:00 and 22:00, so a medication taken at 08:00 and 20:00 has both
 *  of today's doses behind it, whatever time the test runs. */
function eveningZone(now = new Date()): string {
  const offset = ((21 - now.getUTCHours() + 36) % 24) - 12;
  return offset === 0 ? 'UTC' : `Etc/GMT${offset > 0 ? '-' : '+'}${Math.abs(offset)}`;
}

const nextDay = (isoDay: string) => new Date(Date.parse(`${isoDay}T12:00:00Z`) + 86_400_000).toISOString().slice(0, 10);

/** Today's doses on the medications page, one line each ("Missed Lisinopril 10 mg …"). */
const todaysDoses = async (page: Page, lovedOneId: string) => {
  await page.goto(app(`/care/${lovedOneId}/medications`));
  return (await page.locator('#meds-today li.dose').allInnerTexts()).map((t) => t.replace(/\s+/g, ' ').trim());
};

describe('two siblings share the care in Chromium, scripts off, at 375 px', () => {
  it('when one adds a medication, an appointment and a task and the other logs the evening dose and does the task, then both see it and the calendar feed has the appointment', async () => {
    const lucia = await phone('lucia.lopez@example.com', 'Lucia Lopez');
    const sam = await phone('sam.lopez@example.com', 'Sam Lopez');
    const cg = lucia.page;
    const sib = sam.page;
    try {
      // The primary caregiver starts the workspace and invites her brother; email is off, so she copies the link.
      await cg.goto(app('/onboarding'));
      await cg.fill('#familyName', 'The Lopez Family');
      await cg.fill('#firstName', 'Rosa');
      await cg.fill('#lastName', 'Lopez');
      await Promise.all([cg.waitForURL(app('/')), cg.click('main button[type=submit]')]);
      const lovedOneId = decodeURIComponent((await cg.getAttribute('a.loved-one', 'href'))!.split('/').at(-1)!);
      await cg.goto(app('/family'));
      // Someone invited joins to help, and both pages say so.
      expect(await cg.textContent('main')).toContain('as a family member who can add and take things');
      await cg.fill('#invite-email', 'sam.lopez@example.com');
      await Promise.all([cg.waitForURL(/\/family/), cg.click('#invite')]);
      const link = (await cg.textContent('#invite-url'))!.trim();
      expect(link).toMatch(new RegExp(`^${run.svc.config.appUrl}/join/`));

      await sib.goto(link);
      expect(await sib.textContent('main')).toContain('add notes, doses, medications, appointments and tasks');
      await Promise.all([sib.waitForURL(app('/')), sib.click('#accept')]);
      expect(await sib.textContent('h1')).toBe('The Lopez Family');
      // He joins able to add and take things: the caregiver's Family page says so, and she keeps it.
      await cg.goto(app('/family'));
      const access = cg.locator('#members select[name=access]');
      expect(await access.inputValue()).toBe('write');
      expect(await access.locator('option[selected]').textContent()).toBe('Can add and take things');
      await fits(lucia, 'family-writes-circle-375');

      // Lucia adds the medication, taken at 08:00 and 20:00 where Rosa is.
      await cg.goto(app(`/care/${lovedOneId}/medication-list/new`));
      await cg.fill('#med-name', 'Lisinopril');
      await cg.fill('#med-strength', '10 mg');
      await cg.fill('#med-time1', '08:00');
      await cg.fill('#med-time2', '20:00');
      await cg.fill('#med-timeZone', eveningZone());
      await fits(lucia, 'family-writes-medication-form-375');
      await Promise.all([cg.waitForURL(/\/medication-list$/), cg.click('form.med-form button[type=submit]')]);
      expect(await cg.textContent('#medications-active')).toContain('Lisinopril');
      const before = await todaysDoses(cg, lovedOneId);
      expect(before).toEqual([expect.stringMatching(/Missed Lisinopril 10 mg/), expect.stringMatching(/Missed Lisinopril 10 mg/)]);
      expect(await todaysDoses(sib, lovedOneId)).toEqual(before);

      // Sam logs the evening dose he gave.
      await sib.goto(app(`/care/${lovedOneId}/add/dose`));
      await sib.selectOption('#status', 'given');
      await sib.fill('#medication', 'Lisinopril');
      await sib.fill('#amount', '10');
      await sib.fill('#unit', 'mg');
      await fits(sam, 'family-writes-dose-form-375');
      await Promise.all([sib.waitForURL(/#entry-fe_/), sib.click('#entry-form button[type=submit]')]);
      for (const page of [sib, cg]) {
        const after = await todaysDoses(page, lovedOneId);
        // The morning dose is still missed; the evening one is given, by Sam.
        expect(after[0]).toMatch(/Missed Lisinopril 10 mg/);
        expect(after[1]).toMatch(/Given Lisinopril 10 mg .*by Sam Lopez, in the app$/);
      }
      await fits(lucia, 'family-writes-doses-375');

      // Lucia adds tomorrow's appointment; it is in Sam's calendar feed.
      await cg.goto(app(`/care/${lovedOneId}/appointments`));
      const tomorrow = nextDay(await cg.inputValue('#day'));
      await cg.fill('#title', 'Cardiology follow-up');
      await cg.fill('#day', tomorrow);
      await cg.fill('#startTime', '10:00');
      await cg.fill('#endTime', '11:00');
      await Promise.all([cg.waitForURL(/\/appointments/), cg.click('form.plan-form button[type=submit]')]);
      expect(await cg.textContent('#appointments')).toContain('Cardiology follow-up');
      await fits(lucia, 'family-writes-appointments-375');
      await sib.goto(app('/settings/calendar'));
      await Promise.all([sib.waitForURL(/\/settings\/calendar/), sib.click('#feed-rotate')]);
      const feedUrl = await sib.inputValue('#feed-url');
      await fits(sam, 'family-writes-calendar-375');
      const feed = await fetch(feedUrl);
      expect(feed.status).toBe(200);
      expect(feed.headers.get('content-type')).toMatch(/^text\/calendar/);
      const events = new ICAL.Component(ICAL.parse(await feed.text())).getAllSubcomponents('vevent').map((v) => new ICAL.Event(v));
      expect(events.map((e) => e.summary)).toEqual(['Rosa Lopez: Cardiology follow-up']);
      expect(events[0]!.startDate.toJSDate().getTime()).toBeGreaterThan(Date.now());

      // Lucia asks for help; Sam takes the task and marks it done; Lucia sees who did it.
      await cg.goto(app(`/care/${lovedOneId}/tasks`));
      await cg.fill('#title', 'Pick up the blood pressure cuff');
      await cg.fill('#dueDay', tomorrow);
      await cg.fill('#dueTime', '18:00');
      await Promise.all([cg.waitForURL(/\/tasks/), cg.click('form.plan-form button[type=submit]')]);
      expect(await cg.textContent('#tasks')).toContain('Nobody has taken this yet');
      await sib.goto(app(`/care/${lovedOneId}/tasks`));
      await Promise.all([sib.waitForURL(/\/tasks/), sib.click('#tasks button:has-text("I\'ll do it")')]);
      expect(await sib.textContent('#tasks')).toContain('You are doing this');
      await cg.goto(app(`/care/${lovedOneId}/tasks`));
      expect(await cg.textContent('#tasks')).toContain('Sam Lopez is doing this');
      await fits(sam, 'family-writes-task-taken-375');
      await Promise.all([sib.waitForURL(/\/tasks/), sib.click('#tasks button:has-text("Mark done")')]);
      expect(await sib.locator('#tasks').count()).toBe(0);
      await cg.goto(app(`/care/${lovedOneId}/tasks`));
      expect(await cg.textContent('#tasks-done')).toContain('Done by Sam Lopez');
      await fits(lucia, 'family-writes-task-done-375');
    } finally {
      await lucia.close();
      await sam.close();
    }
    // A long walk of some thirty pages, each checked by axe: slow on a loaded machine.
  }, 180_000);
});
