// A family member adds to the loved one's record in headless Chromium at 375 px with JavaScript
// off: a note by the form on the loved one's page, a mistyped reading sent back with what was
// typed, and a withdrawal after its confirmation page; every page fits the phone's width.
import { describe, expect, it } from 'vitest';
import { screenshot, useServiceWithBrowser } from './harness/browser.js';
import { caregiverWithKey } from './harness/identity.js';

const run = useServiceWithBrowser({});
const PHONE = { width: 375, height: 812 };

describe('family entries in Chromium, scripts off, at 375 px', () => {
  it('when a member adds a note, mistypes a reading and withdraws the note, then each step is a form post and the page fits', async () => {
    const me = await caregiverWithKey(run.svc, 'entries.browser@example.com');
    const app = (path: string) => `${run.svc.config.appUrl}${path}`;
    const context = await run.browser.newContext({ javaScriptEnabled: false, viewport: PHONE, timezoneId: 'Europe/Lisbon' });
    const [name, value] = me.cookie.split('=') as [string, string];
    await context.addCookies([{ name, value, url: run.svc.config.appUrl }]);
    const page = await context.newPage();
    const width = () => page.evaluate(() => document.documentElement.scrollWidth);
    try {
      await page.goto(app(`/care/${me.lovedOneId}`));
      expect(await width()).toBeLessThanOrEqual(PHONE.width);
      await page.fill('#entry-form #text', 'Slept badly.\nAsked for Dad twice.');
      await Promise.all([page.waitForURL(/#entry-fe_/), page.click('#entry-form button[type=submit]')]);
      const id = new URL(page.url()).hash.slice('#entry-'.length);
      const entry = page.locator(`#entry-${id}`);
      expect(await entry.textContent()).toContain('Note from Test Caregiver, in the app');
      expect(await entry.locator('.entry-detail').innerText()).toBe('Slept badly.\nAsked for Dad twice.');
      await screenshot(page, 'family-entry-note-375');

      await page.goto(app(`/care/${me.lovedOneId}/add/reading`));
      await page.selectOption('#kind', 'pulse');
      await page.fill('#value', '720');
      await page.selectOption('#unit', '/min');
      const refused = await Promise.all([page.waitForResponse((r) => r.request().method() === 'POST'), page.click('#entry-form button[type=submit]')]);
      expect(refused[0].status()).toBe(400);
      expect(await page.textContent('#entry-error')).toContain('Reading: must be between 25 and 250 /min');
      expect(await page.inputValue('#value')).toBe('720');
      expect(await page.getAttribute('#value', 'aria-invalid')).toBe('true');
      expect(await width()).toBeLessThanOrEqual(PHONE.width);

      await page.goto(app(`/care/${me.lovedOneId}/entries/${id}`));
      await Promise.all([page.waitForURL(/\/withdraw$/), page.click('#withdraw')]);
      expect(await page.textContent('h1')).toBe('Withdraw this entry?');
      expect(await width()).toBeLessThanOrEqual(PHONE.width);
      await page.fill('#reason', 'Written about the wrong day');
      await Promise.all([page.waitForURL(/\/entries\/fe_/), page.click('#confirm-withdraw')]);
      expect(await page.textContent('#versions')).toContain('Withdrawn by Test Caregiver');
      await page.goto(app(`/care/${me.lovedOneId}`));
      expect(await page.textContent('#timeline')).toContain('Reason: Written about the wrong day');
      await screenshot(page, 'family-entry-withdrawn-375');
    } finally {
      await context.close();
    }
  });
});
