// In headless Chromium at phone width: a caregiver links an agency client, the agency sends visits,
// doses, vitals and notes, and the caregiver reads them on the loved one's page, the medication
// view and the charts, each fitting 375 px without horizontal scroll.
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { PartnerClient } from '../src/partner/client.js';
import { createWorkspaceWithBrowser, linkAgencyWithBrowser, screenshot, sidewaysBoxes, smallestTextHeight, useServiceWithBrowser } from './harness/browser.js';
import { drained, onboard, TEST_DATA_KEY } from './ingest.fixtures.js';

const run = useServiceWithBrowser({ nats: true, env: { DATA_KEY: TEST_DATA_KEY } });

const documentWidth = (page: Page) => page.evaluate(() => document.documentElement.scrollWidth);

describe('care pages in Chromium', () => {
  it('when an agency sends a day of care, then the caregiver sees it on the timeline, medications and charts at 375 px', async () => {
    // A zone other than the machine's, so the page's script must pass it on for the times to follow.
    const context = await run.browser.newContext({ timezoneId: 'Asia/Tokyo', viewport: { width: 375, height: 812 } });
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('console', (msg) => void (msg.type() === 'error' && errors.push(msg.text())));
    page.on('pageerror', (err) => errors.push(err.message));
    await createWorkspaceWithBrowser(page, run.svc.config.appUrl, 'rosa.family@example.com', {
      familyName: 'The Lopez Family',
      firstName: 'Rosa',
      lastName: 'Lopez',
    });

    const partner = await onboard(run.svc.store.db, run.svc.credentials, 'Evergreen Home Care');
    const client = new PartnerClient({ baseUrl: run.svc.urls.pipe!, institutionId: partner.institutionId, secret: partner.secret });
    const code = ((await client.setFamilyShare('rosa-7', true)).body as { link_code: string }).link_code;
    await linkAgencyWithBrowser(page, code);

    const at = (hoursAgo: number) => new Date(Date.now() - hoursAgo * 3_600_000).toISOString();
    const events = [
      {
        event_type: 'visit_started',
        occurred_at: at(6),
        payload: { caregiver_id: 'cg-2210', caregiver_name: 'Ana', scheduled_start: at(6), actual_start: at(6) },
      },
      {
        event_type: 'med_administered',
        occurred_at: at(5.5),
        payload: { medication_name: 'Metoprolol', dose_amount: 25, dose_unit: 'mg', administered_by: 'cg-2210', caregiver_name: 'Ana', scheduled_at: at(5.5) },
      },
      {
        event_type: 'med_administered',
        occurred_at: at(29.5),
        payload: { medication_name: 'Metoprolol', dose_amount: 25, dose_unit: 'mg', administered_by: 'cg-1043', caregiver_name: 'Ben', scheduled_at: at(29.5) },
      },
      {
        event_type: 'note_added',
        occurred_at: at(5),
        payload: { caregiver_id: 'cg-2210', caregiver_name: 'Ana', note_text: 'Ate a full breakfast and walked to the mailbox.' },
      },
      {
        event_type: 'visit_ended',
        occurred_at: at(2.75),
        payload: { caregiver_id: 'cg-2210', caregiver_name: 'Ana', actual_end: at(2.75), duration_minutes: 195 },
      },
      ...[0, 24, 48, 72].flatMap((h, i) => [
        {
          event_type: 'vital_recorded',
          occurred_at: at(5.2 + h),
          payload: {
            vital_type: 'blood_pressure',
            value: 142 - i * 4,
            secondary_value: 88 - i * 2,
            unit: 'mmHg',
            recorded_by: 'cg-2210',
            caregiver_name: 'Ana',
          },
        },
        {
          event_type: 'vital_recorded',
          occurred_at: at(5.1 + h),
          payload: { vital_type: 'pulse', value: 72 + i, unit: '/min', recorded_by: 'cg-2210', caregiver_name: 'Ana' },
        },
        {
          event_type: 'vital_recorded',
          occurred_at: at(5.0 + h),
          payload: { vital_type: 'oxygen_saturation', value: 96 - (i % 2), unit: '%', recorded_by: 'cg-2210', caregiver_name: 'Ana' },
        },
      ]),
      {
        event_type: 'vital_recorded',
        occurred_at: at(5),
        payload: { vital_type: 'temperature', value: 36.9, unit: 'Cel', recorded_by: 'cg-2210', caregiver_name: 'Ana' },
      },
    ];
    for (const [i, e] of events.entries()) expect((await client.sendEvent({ subject_ref: 'rosa-7', ...e, source_event_id: `day-${i}` })).rule).toBe('accepted');
    await drained(run.svc.bus, run.svc.config);

    await page.click('a.loved-one');
    await page.locator('#timeline').waitFor();
    await page.locator('#zone-note', { hasText: 'Times are in Asia/Tokyo (GMT+9)' }).waitFor();
    const timeline = (await page.textContent('#timeline'))!;
    expect(timeline).toMatch(/\d{1,2}:\d{2} [ap]m ?Metoprolol 25 mg given by Ana/);
    expect(timeline).toContain('Visit by Ana ended after 3 h 15 min');
    expect(timeline).toContain('Blood pressure 142/88 mmHg');
    expect(timeline).toContain('Ate a full breakfast');
    expect(await documentWidth(page)).toBeLessThanOrEqual(375);
    await screenshot(page, 'care-timeline-375');

    await page.click('nav.tabs a:has-text("Medications")');
    await page.locator('#medications').waitFor();
    expect(await page.textContent('main')).toMatch(/Metoprolol 25 mg( at \d{1,2}:\d{2} [ap]m)? by Ana/);
    expect(await page.locator('main li.dose-given').count()).toBe(2);
    expect(await documentWidth(page)).toBeLessThanOrEqual(375);
    expect(await sidewaysBoxes(page)).toEqual([]);
    await screenshot(page, 'care-medications-375');

    await page.click('nav.tabs a:has-text("Vital signs")');
    await page.locator('#vitals').waitFor();
    expect(await page.locator('#vitals svg[role=img]').count()).toBe(4);
    expect(await page.locator('#vitals svg[role=img] polyline').count()).toBe(4); // both blood-pressure lines, pulse, oxygen
    const box = await page.locator('#vitals svg').first().boundingBox();
    expect(box!.width).toBeGreaterThan(250);
    // The chart is scaled to the phone; its dates and values still read at a normal small size.
    expect(await smallestTextHeight(page, '#vitals svg text.axis')).toBeGreaterThanOrEqual(12);
    await page.click('#vitals details summary >> nth=0');
    expect(await page.locator('#vitals details[open] tbody tr').count()).toBe(4);
    expect(await documentWidth(page)).toBeLessThanOrEqual(375);
    // On a phone each reading is one block, its values under their names: nothing to swipe.
    expect(await sidewaysBoxes(page)).toEqual([]);
    await screenshot(page, 'care-vitals-375');

    await page.setViewportSize({ width: 1024, height: 900 });
    await screenshot(page, 'care-vitals-desktop');
    // No CSP violation, no script error on any of the pages.
    expect(errors).toEqual([]);
  });
});
