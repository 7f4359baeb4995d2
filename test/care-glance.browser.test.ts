// In headless Chromium at 375 and 1280 px, after an agency sent a few days of signed care events (a
// fall, a missed dose, a refusal, readings): the loved one's page puts what needs attention before
// the timeline, the medications page shows today's doses on its first screen, the timeline has day
// headings, and aides are named, never shown by id. The screenshots are the ones in docs/images.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { PartnerClient } from '../src/partner/client.js';
import { trialEvents } from './care.fixtures.js';
import { createWorkspaceWithBrowser, linkAgencyWithBrowser, sidewaysBoxes, TAKE_SCREENSHOTS, useServiceWithBrowser } from './harness/browser.js';
import { repoRoot } from './harness/servers.js';
import { drained, onboard, TEST_DATA_KEY } from './ingest.fixtures.js';

const run = useServiceWithBrowser({ nats: true, env: { DATA_KEY: TEST_DATA_KEY } });
const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const IMAGES = path.join(repoRoot, 'docs', 'images');

/** axe-core's serious and critical findings on the page as it stands (WCAG 2 A and AA). */
async function seriousViolations(page: Page): Promise<string[]> {
  await page.evaluate(AXE);
  const found = await page.evaluate(async () => {
    const axe = (
      window as unknown as {
        axe: { run(ctx: Document, o: object): Promise<{ violations: { id: string; impact: string | null; nodes: { target: string[] }[] }[] }> };
      }
    ).axe;
    return (await axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa'] } })).violations;
  });
  // Each finding with the elements it was found on, so a failure says where to look.
  return found.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}

/** Where an element starts and ends on the page, in CSS pixels from the top. */
const span = async (page: Page, selector: string) => {
  const box = (await page.locator(selector).first().boundingBox())!;
  const scrollY = await page.evaluate(() => window.scrollY);
  return { top: box.y + scrollY, bottom: box.y + scrollY + box.height };
};

/** The first screen only, so the images stay small and show what a reader sees on arrival. */
const shoot = async (page: Page, name: string) => {
  if (TAKE_SCREENSHOTS) await page.screenshot({ path: path.join(IMAGES, `${name}.png`) });
};

describe('care pages at a glance in Chromium', () => {
  it('when an agency sent a fall, a missed dose, a refusal and readings, then at 375 and 1280 px attention comes first, today’s doses fit the first screen, days have headings and aides have names', async () => {
    const trial = trialEvents(new Date());
    const context = await run.browser.newContext({ timezoneId: trial.zone, viewport: { width: 375, height: 812 } });
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
    for (const e of trial.events) expect((await client.sendEvent({ subject_ref: 'rosa-7', ...e })).rule).toBe('accepted');
    await drained(run.svc.bus, run.svc.config);
    await page.click('a.loved-one');
    const lovedOne = page.url();

    for (const width of [375, 1280]) {
      await page.setViewportSize({ width, height: width === 375 ? 812 : 800 });
      const height = page.viewportSize()!.height;
      await page.goto(lovedOne);
      await page.locator('#timeline').waitFor();
      const attention = await span(page, '#attention');
      expect(attention.bottom, `${width} px`).toBeLessThan((await span(page, '#timeline')).top);
      const block = (await page.textContent('#attention'))!;
      expect(block).toContain('Fall reported');
      expect(block).toContain('Metoprolol 25 mg not recorded');
      expect(block).toContain('Metformin 500 mg refused');
      const headings = await page.locator('#timeline h3.day-heading').allTextContents();
      expect(headings[0]).toMatch(/^Today, /);
      expect(headings[1]).toMatch(/^Yesterday, /);
      expect(headings.length).toBeGreaterThanOrEqual(3);
      const body = (await page.textContent('main'))!;
      expect(body).toContain('Visit by Ana Souza started');
      expect(body).toContain('Note from an aide from Evergreen Home Care');
      expect(body).not.toMatch(/cg-\d+/);
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(width);
      expect(await sidewaysBoxes(page)).toEqual([]);
      expect(await seriousViolations(page)).toEqual([]);
      await shoot(page, `care-loved-one-${width}`);

      await page.click('nav.tabs a:has-text("Medications")');
      await page.locator('#meds-today').waitFor();
      const doses = await page.locator('#meds-today li').allTextContents();
      expect(doses.map((d) => /(Given|Refused|Not recorded|Due)/.exec(d)?.[1])).toEqual(['Given', 'Not recorded', 'Refused', 'Due']);
      // Every one of today's doses is on the first screen, before any scrolling.
      expect((await span(page, '#meds-today li:last-child')).bottom, `${width} px`).toBeLessThanOrEqual(height);
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(width);
      expect(await seriousViolations(page)).toEqual([]);
      await shoot(page, `care-medications-${width}`);
    }
    // No CSP violation, no script error on any of the pages.
    expect(errors).toEqual([]);
    await context.close();
  });
});
