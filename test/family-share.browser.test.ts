// A family enters an agency's link code on its workspace page, and the agency's events arrive.
import { describe, expect, it } from 'vitest';
import { PartnerClient } from '../src/partner/client.js';
import { createWorkspaceWithBrowser, newPage, screenshot, useServiceWithBrowser } from './harness/browser.js';
import { drained, onboard, storedEvents, TEST_DATA_KEY } from './ingest.fixtures.js';

const run = useServiceWithBrowser({ nats: true, env: { DATA_KEY: TEST_DATA_KEY } });

describe('family-share link code on the workspace page', () => {
  it('when a caregiver enters the code the agency gave, then the client is linked and its events reach the loved one', async () => {
    const { page, errors } = await newPage(run.browser);
    await createWorkspaceWithBrowser(page, run.svc.config.appUrl, 'linker@example.com', {
      familyName: 'The Linker Family',
      firstName: 'June',
      lastName: 'Linker',
    });

    const partner = await onboard(run.svc.store.db, run.svc.credentials, 'Evergreen Home Care');
    const client = new PartnerClient({ baseUrl: run.svc.urls.pipe!, institutionId: partner.institutionId, secret: partner.secret });
    const code = ((await client.setFamilyShare('evergreen-7', true)).body as { link_code: string }).link_code;

    await page.fill('#link-code', 'WRONG-CODE');
    await page.click('#family-share-form button');
    await page.locator('#family-share-result', { hasText: /not valid/ }).waitFor();

    await page.fill('#link-code', code);
    await page.click('#family-share-form button');
    await page.locator('#family-share-result', { hasText: /^Linked/ }).waitFor();
    expect(await page.textContent('#family-share-result')).toContain('Evergreen Home Care');
    await screenshot(page, 'family-share-linked');

    const lovedOneId = await page.getAttribute('#link-loved-one option', 'value');
    const sent = await client.sendEvent({
      subject_ref: 'evergreen-7',
      event_type: 'note_added',
      occurred_at: new Date().toISOString(),
      payload: { caregiver_id: 'cg-1', note_text: 'Ate a full lunch.' },
      source_event_id: 'ev-1',
    });
    expect(sent.rule).toBe('accepted');
    await drained(run.svc.bus, run.svc.config);
    expect((await storedEvents(run.svc.store.db, { lovedOneId }, 1)).map((e) => e.eventType)).toEqual(['note_added']);
    // 400 for the wrong code is the expected answer, not a page error.
    expect(errors.filter((e) => !/status of 400/.test(e))).toEqual([]);
  });
});
