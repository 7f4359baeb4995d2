// In headless Chromium, with no mail configured: a caregiver invites a sibling and copies the
// link; the sibling opens it, signs in with the invited email, joins, and reads the same loved
// one's timeline, medications and vital signs, each page fitting 375 px.
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { appendCareEvents } from '../src/family/records.js';
import { screenshot, signInWithBrowser, useServiceWithBrowser } from './harness/browser.js';

const run = useServiceWithBrowser({ env: { SMTP_URL: '' } });

const documentWidth = (page: Page) => page.evaluate(() => document.documentElement.scrollWidth);
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

async function phone(): Promise<{ page: Page; errors: string[] }> {
  const context = await run.browser.newContext({ viewport: { width: 375, height: 812 } });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('console', (msg) => void (msg.type() === 'error' && errors.push(msg.text())));
  page.on('pageerror', (err) => errors.push(err.message));
  return { page, errors };
}

describe('the family circle in Chromium', () => {
  it('when a caregiver invites a sibling by link, then the sibling signs in with that email and sees the same loved one', async () => {
    const caregiver = await phone();
    const cg = caregiver.page;
    await signInWithBrowser(cg, `${run.svc.config.appUrl}/onboarding`, 'lucia.family@example.com');
    await cg.fill('#familyName', 'The Lopez Family');
    await cg.fill('#firstName', 'Rosa');
    await cg.fill('#lastName', 'Lopez');
    await Promise.all([cg.waitForURL(`${run.svc.config.appUrl}/`), cg.click('main button[type=submit]')]);
    const lovedOneId = decodeURIComponent((await cg.getAttribute('a.loved-one', 'href'))!.split('/').at(-1)!);
    const at = new Date(Date.now() - 2 * 3_600_000);
    await appendCareEvents(run.svc.timelines, [
      {
        _id: 'ce_family_browser_1',
        lovedOneId,
        workspaceId: (await run.svc.store.db.collection('loved_ones').findOne({ _id: lovedOneId as never }))!.workspaceId as string,
        source: 'partner',
        eventType: 'med_administered',
        occurredAt: at,
        receivedAt: at,
        payload: { medication_name: 'Metoprolol', dose_amount: 25, dose_unit: 'mg', administered_by: 'cg-2210', caregiver_name: 'Ana' },
      },
    ]);

    await cg.click('header nav a:has-text("Family")');
    await cg.locator('#members').waitFor();
    expect(await cg.textContent('main')).toContain('Email is not set up on this carecircle');
    await cg.fill('#invite-email', 'Sam.Lopez@example.com');
    await cg.click('#invite');
    await cg.locator('#invite-url').waitFor();
    expect(await cg.textContent('#invitation')).toContain('nothing was sent');
    const link = (await cg.textContent('#invite-url'))!.trim();
    expect(link).toMatch(new RegExp(`^${run.svc.config.appUrl}/join/`));
    expect(await documentWidth(cg)).toBeLessThanOrEqual(375);
    await screenshot(cg, 'family-invite-link-375');
    await cg.goto(`${run.svc.config.appUrl}/family`);
    expect(await cg.textContent('#invites-pending')).toContain('sam.lopez@example.com');
    expect(await documentWidth(cg)).toBeLessThanOrEqual(375);
    expect(await seriousViolations(cg)).toEqual([]);
    await screenshot(cg, 'family-circle-caregiver-375');

    const sibling = await phone();
    const sib = sibling.page;
    await sib.goto(link);
    expect(await sib.textContent('main')).toContain('Rosa Lopez');
    expect(await sib.textContent('#invited-email')).toBe('sam.lopez@example.com');
    await screenshot(sib, 'family-join-signed-out-375');
    await signInWithBrowser(sib, link, 'sam.lopez@example.com');
    await sib.locator('#accept').waitFor();
    expect(await seriousViolations(sib)).toEqual([]);
    await screenshot(sib, 'family-join-375');
    await Promise.all([sib.waitForURL(`${run.svc.config.appUrl}/`), sib.click('#accept')]);
    expect(await sib.textContent('h1')).toBe('The Lopez Family');
    expect(await sib.locator('form[action="/workspace/loved-ones"]').count()).toBe(0);

    await sib.click('a.loved-one');
    await sib.locator('#timeline').waitFor();
    expect(await sib.textContent('#timeline')).toMatch(/Metoprolol 25 mg given by Ana/);
    expect(await documentWidth(sib)).toBeLessThanOrEqual(375);
    await screenshot(sib, 'family-sibling-timeline-375');
    await sib.click('nav.tabs a:has-text("Medications")');
    await sib.locator('#medications').waitFor();
    expect(await sib.textContent('main')).toContain('Metoprolol');
    await sib.click('nav.tabs a:has-text("Vital signs")');
    await sib.locator('#vitals').waitFor();

    await sib.goto(`${run.svc.config.appUrl}/family`);
    const members = (await sib.textContent('#members'))!;
    expect(members).toContain('Primary caregiver');
    expect(members).toContain('Family member');
    expect(await sib.locator('#invite').count()).toBe(0);
    expect(await documentWidth(sib)).toBeLessThanOrEqual(375);
    expect(await seriousViolations(sib)).toEqual([]);
    await screenshot(sib, 'family-circle-member-375');

    // The caregiver removes the sibling after a page that names them; the sibling's next page has no workspace.
    await cg.goto(`${run.svc.config.appUrl}/family`);
    await cg.click('#members a:has-text("Remove sam.lopez@example.com")');
    await cg.locator('#confirm-remove').waitFor();
    expect(await cg.textContent('h1')).toBe('Remove sam.lopez@example.com from The Lopez Family?');
    expect(await documentWidth(cg)).toBeLessThanOrEqual(375);
    expect(await seriousViolations(cg)).toEqual([]);
    await screenshot(cg, 'family-remove-confirm-375');
    await Promise.all([cg.waitForURL(`${run.svc.config.appUrl}/family`), cg.click('#confirm-remove')]);
    expect(await cg.textContent('#members')).not.toContain('sam.lopez@example.com');
    await sib.goto(`${run.svc.config.appUrl}/care/${encodeURIComponent(lovedOneId)}`);
    await sib.waitForURL(`${run.svc.config.appUrl}/onboarding`);
    expect([...caregiver.errors, ...sibling.errors]).toEqual([]);
  });
});
