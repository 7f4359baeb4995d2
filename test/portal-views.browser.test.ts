// In headless Chromium: a caregiver connects the loved one's health-system portal (the SMART on FHIR
// server on loopback), confirms the patient, and reads the portal's medications and results on the
// timeline, its vital signs on the charts, and the clinicians' list beside the family's schedule.
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MedicationList } from '../src/family/medications.js';
import { createWorkspaceWithBrowser, launchBrowser, screenshot, sidewaysBoxes } from './harness/browser.js';
import { startTestService, surfaceEnv, type TestService } from './harness/service.js';
import { startSmartServer, type SmartServer } from './harness/smartServer.js';

let svc: TestService;
let smart: SmartServer;
let browser: Browser;

beforeAll(async () => {
  const surfaces = await surfaceEnv();
  smart = await startSmartServer({ clientId: 'carecircle', redirectUri: `${surfaces.APP_URL}/portal/callback` });
  const issuers = [{ name: 'Northside Health', url: smart.fhirBase, clientId: 'carecircle' }];
  [svc, browser] = await Promise.all([
    startTestService({ env: { ...surfaces, FHIR_ISSUERS: JSON.stringify(issuers), FHIR_CLIENT_ID: 'carecircle' } }),
    launchBrowser(),
  ]);
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await svc?.stop();
  await smart?.close();
});

describe('portal views in Chromium', () => {
  it("when a caregiver connects the portal and confirms the patient, then its records show on the timeline, the charts and beside the family's medication list", async () => {
    const context = await browser.newContext({ viewport: { width: 375, height: 812 } });
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('console', (msg) => void (msg.type() === 'error' && errors.push(msg.text())));
    page.on('pageerror', (err) => errors.push(err.message));
    const appUrl = svc.config.appUrl;
    await createWorkspaceWithBrowser(page, appUrl, 'maria.portal@example.com', { familyName: 'The Rivera Family', firstName: 'Rosa', lastName: 'Rivera' });

    // The family schedules Warfarin, which the clinicians' list says was stopped.
    const lovedOne = (await svc.store.db.collection('loved_ones').findOne<{ _id: string; workspaceId: string }>({ firstName: 'Rosa', lastName: 'Rivera' }))!;
    await new MedicationList(svc.store.db).add(
      lovedOne,
      { name: 'Warfarin', strength: '2 mg', schedule: { asNeeded: false, times: ['18:00'], days: [], timeZone: 'UTC' } },
      { uid: 'u', name: 'Maria', how: 'app' },
    );
    const care = `${appUrl}/care/${lovedOne._id}`;

    // Connect: the portal's sign-in (the page's form-action must admit the redirect to it), then
    // back to carecircle to confirm the patient side by side.
    await page.goto(`${care}/portal`);
    await page.selectOption('select[name=issuer]', { label: 'Northside Health' });
    await Promise.all([page.waitForURL((u) => u.href.startsWith(`${care}/portal`) && u.hash.startsWith('#portal-')), page.click('form.portal-connect button')]);
    await expect.poll(() => page.textContent('#portal-patient-name')).toBe('Rosa Rivera');
    await Promise.all([page.waitForLoadState('load'), page.click('text=Yes, this is Rosa Rivera: import')]);
    await page.locator('text=Sync now').waitFor();

    // The timeline: the clinicians' medications and the results, each saying where it came from.
    await page.goto(care);
    const timeline = await page.textContent('#timeline');
    expect(timeline).toContain("Metoprolol tartrate 25 mg tablet on the clinicians' list, from Northside Health's portal");
    expect(timeline).toContain("Warfarin 2 mg tablet (stopped) on the clinicians' list, from Northside Health's portal");
    expect(timeline).toContain("Hemoglobin A1c 6.9 %, from Northside Health's portal");

    // The charts: heart rate, weight and temperature from the portal, in the units it sent.
    await page.goto(`${care}/vitals?days=365`);
    const pulse = page.locator('section.vital[data-vital=pulse]');
    await expect.poll(() => pulse.locator('.vital-from').textContent()).toBe("From Northside Health's portal.");
    expect(await pulse.locator('svg.vital-chart circle.dot').count()).toBe(2);
    expect(await page.locator('section.vital[data-vital=weight] h2').textContent()).toBe('Weight (kg)');
    expect(await page.locator('section.vital[data-vital=temperature] h2').textContent()).toBe('Temperature (°C)');

    // The medications page: the difference in words, highlighted.
    await page.goto(`${care}/medications`);
    const differences = page.locator('#med-differences li');
    // Aspirin is on the portal's list as a medication reported (a MedicationStatement), not ordered.
    expect(await differences.allTextContents()).toEqual([
      "Differs Aspirin 81 mg tablet: on the doctor's list, not in the family's schedule.",
      "Differs Metoprolol tartrate 25 mg tablet: on the doctor's list, not in the family's schedule.",
      "Differs The doctor's list says Warfarin was stopped; the family still schedules it.",
    ]);
    await expect.poll(() => page.locator('#clinician-list-table tr.med-differs').count()).toBe(3);
    expect(await sidewaysBoxes(page)).toEqual([]);
    await screenshot(page, 'portal-medications-375');
    expect(errors).toEqual([]);
  }, 120_000);
});
