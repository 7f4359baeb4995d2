// Signing in and linking an agency in headless Chromium with JavaScript turned off: every step is a
// plain form post answered with a redirect or a page, and the person ends signed in and linked.
import { describe, expect, it } from 'vitest';
import { PartnerClient } from '../src/partner/client.js';
import { screenshot, useServiceWithBrowser } from './harness/browser.js';
import { onboard, TEST_DATA_KEY } from './ingest.fixtures.js';

const run = useServiceWithBrowser({ env: { DATA_KEY: TEST_DATA_KEY } });
const app = (path: string) => `${run.svc.config.appUrl}${path}`;

describe('without JavaScript, in Chromium', () => {
  it('when a person signs in, creates a workspace and enters an agency code with scripts off, then each step completes by form posts and redirects', async () => {
    const context = await run.browser.newContext({ javaScriptEnabled: false });
    const page = await context.newPage();
    try {
      await page.goto(app('/settings'));
      await Promise.all([page.waitForURL(/\/dev\/login/), page.click('#signin')]);
      await page.fill('#email', 'no-script@example.com');
      await page.click('button[type=submit]');
      // The provider posts the token back by a form the person sends: no fragment, no script.
      await page.locator('#form-post').waitFor();
      expect(page.url()).not.toContain('id_token');
      await Promise.all([page.waitForURL(app('/settings')), page.click('#form-post button')]);
      expect(await page.textContent('header')).toContain('no-script@example.com');
      expect(await page.locator('#signin-callback').count()).toBe(0);

      await page.goto(app('/onboarding'));
      await page.fill('#familyName', 'The Plain Family');
      await page.fill('#firstName', 'Rosa');
      await page.fill('#lastName', 'Plain');
      await Promise.all([page.waitForURL(app('/')), page.click('main button[type=submit]')]);

      const partner = await onboard(run.svc.store.db, run.svc.credentials, 'Prairie Home Care');
      const client = new PartnerClient({ baseUrl: run.svc.urls.pipe!, institutionId: partner.institutionId, secret: partner.secret });
      const code = ((await client.setFamilyShare('prairie-1', true)).body as { link_code: string }).link_code;

      await page.fill('#link-code', 'WRONG-CODE-0000');
      const refused = await Promise.all([page.waitForResponse((r) => r.url().endsWith('/api/family-share/link')), page.click('#family-share-form button')]);
      expect(refused[0].status()).toBe(400);
      await page.locator('#family-share-refused').waitFor();
      expect(await page.textContent('#family-share-refused')).toContain('that link code is not valid');
      expect(await page.content()).not.toContain('"code"');

      await page.goto(app('/'));
      await page.fill('#link-code', code);
      await Promise.all([page.waitForURL(/\/family-share\/linked\?link=/), page.click('#family-share-form button')]);
      expect(await page.textContent('#family-share-linked')).toContain('Linked: events from Prairie Home Care will appear for Rosa Plain.');
      expect(await page.content()).not.toContain('{"linked"');
      await screenshot(page, 'family-share-linked-no-script');
    } finally {
      await context.close();
    }
  });
});
