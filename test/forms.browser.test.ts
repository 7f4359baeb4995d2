// The app's forms in headless Chromium at a phone's, a tablet's and a desktop's width: a form's
// button sits below its last field or clearly beside it, never glued to the field's edge.
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { screenshot, signInWithBrowser, useServiceWithBrowser } from './harness/browser.js';

const run = useServiceWithBrowser();
const WIDTHS = [375, 768, 1280, 1600];

/** Buttons that come right after a field, and how each sits against it. */
function gluedButtons(page: Page): Promise<string[]> {
  return page.evaluate(() =>
    Array.from(document.querySelectorAll('main form button'))
      .flatMap((button) => {
        const field = button.previousElementSibling;
        if (!field || !['INPUT', 'SELECT', 'TEXTAREA'].includes(field.tagName) || (field as HTMLInputElement).type === 'hidden') return [];
        const b = button.getBoundingClientRect();
        const f = field.getBoundingClientRect();
        const below = b.top >= f.bottom + 4;
        const beside = b.left >= f.right + 8 && b.top < f.bottom && b.bottom > f.top;
        return below || beside
          ? []
          : [`${button.textContent?.trim()}: ${Math.round(b.left - f.right)} px right of its field, ${Math.round(b.top - f.bottom)} px below`];
      })
      .filter(Boolean),
  );
}

describe('forms - buttons beside or below their fields', () => {
  it(
    'when a caregiver creates a workspace, adds, links, mints and saves at 375 to 1600 px, then no button is glued to a field',
    { timeout: 90_000 },
    async () => {
      const context = await run.browser.newContext({ viewport: { width: 1280, height: 900 } });
      const page = await context.newPage();
      const app = run.svc.config.appUrl;
      await signInWithBrowser(page, `${app}/onboarding`, 'forms@example.com');
      const found: Record<string, string[]> = {};
      const measure = async (name: string) => {
        for (const width of WIDTHS) {
          await page.setViewportSize({ width, height: 900 });
          const glued = await gluedButtons(page);
          if (glued.length) found[`${name} at ${width} px`] = glued;
        }
        await screenshot(page, `forms-${name}-1600`);
      };
      await measure('create-workspace');

      await page.fill('#familyName', 'The Form Family');
      await page.fill('#firstName', 'Rosa');
      await page.fill('#lastName', 'Form');
      await Promise.all([page.waitForURL(`${app}/`), page.click('main button[type=submit]')]);
      expect(await page.locator('main form button').count()).toBeGreaterThanOrEqual(2); // add and link
      await measure('workspace');

      await page.goto(`${app}/settings`);
      expect(await page.locator('form[action="/settings/keys"] button').count()).toBe(1);
      expect(await page.locator('form[action="/settings/time-zone"] button').count()).toBe(1);
      await measure('settings');

      await page.goto(`${app}/workspace/name`);
      await measure('rename');
      await context.close();
      expect(found).toEqual({});
    },
  );
});
