// Every app page at phone width and with assistive technology in mind, in headless Chromium: each
// page the app host serves (found from the slices' routes, so a new page is checked without being
// listed here) fits 375 px with no horizontal scroll, passes axe-core with no serious or critical
// violation, starts with a skip link, captions its tables and scopes their headers, and is saved
// as a screenshot.
import { createECDH } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PartnerClient } from '../src/partner/client.js';
import { UnsubscribeLinks } from '../src/alerts/links.js';
import { SLICES } from '../src/slices.js';
import { createWorkspaceWithBrowser, launchBrowser, linkAgencyWithBrowser, screenshot, sidewaysBoxes, signInWithBrowser } from './harness/browser.js';
import { startTestService, type TestService } from './harness/service.js';
import { onboard, TEST_DATA_KEY } from './ingest.fixtures.js';
import { connectedApp } from './oauth.fixtures.js';

const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const PHONE = { width: 375, height: 812 };

/** The app host's pages: GET routes that answer a person, not an API, asset or discovery document. */
export function appPages(): { name: string; path: string }[] {
  const pages: { name: string; path: string }[] = [];
  for (const slice of SLICES)
    for (const [name, route] of Object.entries(slice.routes ?? {})) {
      if (!route.hosts.includes('app') || !route.methods.includes('GET')) continue;
      for (const path of Array.isArray(route.path) ? route.path : [route.path]) {
        // Not pages: APIs, assets, discovery, the sign-in redirects and file downloads.
        if (
          /^\/(api|assets|\.well-known|downloads)\//.test(path) ||
          path === '/api/mcp' ||
          ['/signin', '/auth/callback', '/sw.js'].includes(path) ||
          path.includes('/attachments/') ||
          path.endsWith('/export/:format') ||
          path.startsWith('/calendar/')
        )
          continue;
        pages.push({ name, path });
      }
    }
  return pages;
}

let svc: TestService;
let browser: Browser;
let caregiver: BrowserContext;
/** Path parameter values by route name and parameter, or by parameter alone. */
const samples: Record<string, string> = {};

beforeAll(async () => {
  [svc, browser] = await Promise.all([startTestService({ env: { DATA_KEY: TEST_DATA_KEY, SMTP_URL: '' } }), launchBrowser()]);
  caregiver = await browser.newContext({ viewport: PHONE, bypassCSP: true, timezoneId: 'America/Chicago' });
  const page = await caregiver.newPage();
  await createWorkspaceWithBrowser(page, svc.config.appUrl, 'a11y.family@example.com', {
    familyName: 'The Okafor Family',
    firstName: 'Ngozi',
    lastName: 'Okafor',
  });
  // A day of agency events, so the timeline, medications and charts have something to show.
  const partner = await onboard(svc.store.db, svc.credentials, 'Riverside Home Care');
  const client = new PartnerClient({ baseUrl: svc.urls.pipe!, institutionId: partner.institutionId, secret: partner.secret });
  const code = ((await client.setFamilyShare('ngozi-1', true)).body as { link_code: string }).link_code;
  await linkAgencyWithBrowser(page, code);
  const at = (hoursAgo: number) => new Date(Date.now() - hoursAgo * 3_600_000).toISOString();
  const events = [
    { event_type: 'visit_started', occurred_at: at(6), payload: { caregiver_id: 'Ana', scheduled_start: at(6), actual_start: at(6) } },
    {
      event_type: 'med_administered',
      occurred_at: at(5.5),
      payload: { medication_name: 'Metformin', dose_amount: 500, dose_unit: 'mg', administered_by: 'Ana', scheduled_at: at(5.5) },
    },
    {
      event_type: 'vital_recorded',
      occurred_at: at(5.2),
      payload: { vital_type: 'blood_pressure', value: 138, secondary_value: 84, unit: 'mmHg', recorded_by: 'Ana' },
    },
    {
      event_type: 'vital_recorded',
      occurred_at: at(29.2),
      payload: { vital_type: 'blood_pressure', value: 131, secondary_value: 82, unit: 'mmHg', recorded_by: 'Ana' },
    },
    { event_type: 'note_added', occurred_at: at(5), payload: { caregiver_id: 'Ana', note_text: 'Walked to the garden.' } },
    { event_type: 'visit_ended', occurred_at: at(3), payload: { caregiver_id: 'Ana', actual_end: at(3), duration_minutes: 180 } },
  ];
  for (const [i, e] of events.entries()) expect((await client.sendEvent({ subject_ref: 'ngozi-1', ...e, source_event_id: `a11y-${i}` })).rule).toBe('accepted');
  await page.click('a.loved-one');
  await page.waitForURL(/\/care\//);
  samples.lovedOneId = decodeURIComponent(new URL(page.url()).pathname.split('/')[2]!);
  // A family note, so an entry's page, its correction form and its withdrawal confirmation are checked.
  await page.fill('#entry-form #text', 'Slept well.\nAsked about the garden.');
  await Promise.all([page.waitForURL(/#entry-/), page.click('#entry-form button[type=submit]')]);
  samples.entryId = decodeURIComponent(new URL(page.url()).hash.replace(/^#entry-/, ''));
  samples.kind = 'reading';
  samples['lovedOneEdit:id'] = samples.lovedOneId;
  samples['lovedOneRemove:id'] = samples.lovedOneId;
  // A medication on the list, so the list shows a schedule and its change and stop pages open.
  await page.goto(`${svc.config.appUrl}/care/${encodeURIComponent(samples.lovedOneId)}/medication-list/new`);
  await page.fill('#med-name', 'Metformin');
  await page.fill('#med-strength', '500 mg');
  await page.fill('#med-time1', '08:00');
  await page.fill('#med-time2', '20:00');
  await Promise.all([page.waitForURL(/\/medication-list$/), page.click('form.med-form button[type=submit]')]);
  samples.medicationId = decodeURIComponent((await page.getAttribute('a[href$="/stop"]', 'href'))!.split('/').at(-2)!);
  // A key in Settings, so its table is on the page.
  await page.goto(`${svc.config.appUrl}/settings`);
  await page.fill('#key-name', 'Phone assistant');
  await page.click('form[action="/settings/keys"] button');
  await page.goto(`${svc.config.appUrl}/settings`);
  const revokeHref = (await page.getAttribute('#keys a[href$="/revoke"]', 'href'))!;
  samples['settingsKeysRevoke:id'] = decodeURIComponent(revokeHref.split('/').at(-2)!);
  // A browser that receives notifications, so Settings lists it and its removal confirmation opens.
  const browserKey = createECDH('prime256v1');
  browserKey.generateKeys();
  const subscribed = await page.request.post(`${svc.config.appUrl}/api/push/subscriptions`, {
    headers: { origin: new URL(svc.config.appUrl).origin },
    data: { endpoint: 'http://127.0.0.1:9/push/a11y', keys: { p256dh: browserKey.getPublicKey('base64url'), auth: 'AAECAwQFBgcICQoLDA0ODw' } },
  });
  samples['settingsDevicesRemove:id'] = ((await subscribed.json()) as { id: string }).id;
  // A sibling in the family circle (their remove and hand-over pages) and an invitation still open.
  const invite = async (email: string) => {
    await page.goto(`${svc.config.appUrl}/family`);
    await page.fill('#invite-email', email);
    await page.click('#invite');
    return (await page.locator('#invite-url').textContent())!.trim();
  };
  const siblingLink = await invite('chidi.okafor@example.com');
  samples.token = decodeURIComponent((await invite('ada.okafor@example.com')).split('/').at(-1)!);
  const sibling = await browser.newContext({ viewport: PHONE });
  const sib = await sibling.newPage();
  await signInWithBrowser(sib, siblingLink, 'chidi.okafor@example.com');
  await Promise.all([sib.waitForURL(`${svc.config.appUrl}/`), sib.click('#accept')]);
  await sibling.close();
  // An assistant connected with OAuth, so Connected apps and its revoke confirmation have a row.
  await connectedApp(svc, 'a11y.family@example.com', ['care_circle:read']);
  await page.goto(`${svc.config.appUrl}/settings`);
  samples['settingsAppsRevoke:id'] = decodeURIComponent((await page.getAttribute('#connected-apps-list a[href$="/revoke"]', 'href'))!.split('/').at(-2)!);
  await page.goto(`${svc.config.appUrl}/family`);
  samples.uid = decodeURIComponent((await page.getAttribute('#members a[href$="/remove"]', 'href'))!.split('/').at(-2)!);
  // An appointment and a task added through the forms, the task taken, so their pages have rows.
  const care = `${svc.config.appUrl}/care/${encodeURIComponent(samples.lovedOneId)}`;
  const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
  await page.goto(`${care}/appointments`);
  await page.fill('#title', 'Cardiology check-up with a rather long name that has to wrap on a phone');
  await page.fill('#withWhom', 'Dr. Patel');
  await page.fill('#place', 'Mercy Heart Clinic, 2nd floor, 1200 West Lake Street');
  await page.fill('#day', tomorrow);
  await page.fill('#startTime', '14:00');
  await page.fill('#endTime', '15:00');
  await Promise.all([page.waitForURL(`${care}/appointments`), page.click('form.plan-form button[type=submit]')]);
  samples.appointmentId = decodeURIComponent((await page.getAttribute('#appointments a[href$="/cancel"]', 'href'))!.split('/').at(-2)!);
  await page.goto(`${care}/tasks`);
  await page.fill('#title', 'Drive Mom to cardiology');
  await page.fill('#dueDay', tomorrow);
  await page.fill('#dueTime', '13:30');
  await Promise.all([page.waitForURL(`${care}/tasks`), page.click('form.plan-form button[type=submit]')]);
  await Promise.all([page.waitForURL(`${care}/tasks`), page.click('#tasks form[action$="/take"] button')]);
  // An alert mail's unsubscribe link, so its confirmation page is checked (not the refusal).
  const unsubscribe = await new UnsubscribeLinks(svc.store.db, svc.config).url({ uid: samples.uid, lovedOneId: samples.lovedOneId, kind: 'missed_dose' });
  samples['unsubscribe:token'] = unsubscribe.split('/').at(-1)!;
  await page.close();
}, 120_000);

afterAll(async () => {
  await caregiver?.close();
  await browser?.close();
  await svc?.stop();
});

interface Check {
  width: number;
  violations: { id: string; impact: string; nodes: number }[];
  firstFocus: string;
  tablesWithoutCaption: number;
  headersWithoutScope: number;
  /** Table cells whose words wrap in the middle: more lines than words. */
  cellsBreakingWords: string[];
  /** Boxes that scroll sideways: a table that needs a swipe to be read. */
  scrollsSideways: string[];
}

async function check(page: Page): Promise<Check> {
  await page.evaluate(axeSource);
  const violations = await page.evaluate(async () => {
    const axe = (
      globalThis as unknown as { axe: { run: (ctx: unknown, opts: unknown) => Promise<{ violations: { id: string; impact: string; nodes: unknown[] }[] }> } }
    ).axe;
    const result = await axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] } });
    return result.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.length }));
  });
  await page.keyboard.press('Tab');
  const scrollsSideways = await sidewaysBoxes(page);
  const found = await page.evaluate((v) => {
    const focused = document.activeElement as HTMLAnchorElement | null;
    return {
      width: document.documentElement.scrollWidth,
      violations: v.filter((x) => x.impact === 'serious' || x.impact === 'critical'),
      firstFocus: focused?.tagName === 'A' ? `${focused.textContent?.trim()} -> ${focused.getAttribute('href')}` : String(focused?.tagName),
      tablesWithoutCaption: Array.from(document.querySelectorAll('table')).filter((t) => !t.querySelector('caption')?.textContent?.trim()).length,
      headersWithoutScope: Array.from(document.querySelectorAll('th')).filter((th) => !th.getAttribute('scope')).length,
      cellsBreakingWords: Array.from(document.querySelectorAll('td, th'))
        .filter((cell) => {
          const words = (cell.textContent ?? '').trim().split(/\s+/).filter(Boolean).length;
          // The lines the cell's text sits on: the distinct tops of its text's boxes.
          const tops: number[] = [];
          const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
          for (let node = walker.nextNode(); node; node = walker.nextNode()) {
            const range = document.createRange();
            range.selectNodeContents(node);
            for (const box of Array.from(range.getClientRects())) tops.push(box.top);
          }
          tops.sort((a, b) => a - b);
          const lines = tops.filter((top, i) => i === 0 || top - tops[i - 1]! > 4).length;
          return words > 0 && lines > words;
        })
        .map((cell) => (cell.textContent ?? '').trim().slice(0, 40)),
    };
  }, violations);
  return { ...found, scrollsSideways };
}

const expected = {
  violations: [],
  firstFocus: 'Skip to content -> #main',
  tablesWithoutCaption: 0,
  headersWithoutScope: 0,
  cellsBreakingWords: [],
  scrollsSideways: [],
};

describe('every app page on a phone and with assistive technology', () => {
  // One test per page of the app, each rendered, measured and checked by axe: a failure names the
  // page, and no one test has to fit every page of a growing app in its time.
  const pages = appPages();
  it('lists the pages every caregiver reaches first among the pages it walks', () => {
    expect(pages.map((p) => p.path)).toEqual(expect.arrayContaining(['/', '/settings', '/care/:lovedOneId']));
  });

  // Pages are checked a few at a time (vitest's maxConcurrency): each has its own tab, and most of
  // a check is Chromium laying out and axe walking one page while the other core has room.
  it.concurrent.for(pages)('when the caregiver opens $path ($name) at 375 px, then it fits and passes axe', async ({ name, path }, { expect }) => {
    const url = path.replace(/:([A-Za-z]+)/g, (_, param: string) => {
      const value = samples[`${name}:${param}`] ?? samples[param];
      if (!value) throw new Error(`no sample value for :${param} of ${path}: add one to this test`);
      return encodeURIComponent(value);
    });
    const page = await caregiver.newPage();
    await page.goto(`${svc.config.appUrl}${url}`);
    const result = await check(page);
    await screenshot(page, `app-375-${name}`);
    await page.close();
    expect({ ...result, width: result.width <= PHONE.width ? 'fits' : `${result.width} px` }).toEqual({ ...expected, width: 'fits' });
  });

  it('when someone signed out or without a workspace opens the app, then those pages fit and pass too', async () => {
    const stranger = await browser.newContext({ viewport: PHONE, bypassCSP: true });
    const page = await stranger.newPage();
    await page.goto(`${svc.config.appUrl}/`);
    const signedOut = await check(page);
    await screenshot(page, 'app-375-signed-out');
    const fits = (r: Check) => ({ ...r, width: r.width <= PHONE.width ? 'fits' : `${r.width} px` });
    await signInWithBrowser(page, `${svc.config.appUrl}/onboarding`, 'newcomer@example.com');
    const onboarding = await check(page);
    await screenshot(page, 'app-375-onboarding-form');
    expect({ signedOut: fits(signedOut), onboarding: fits(onboarding) }).toEqual({
      signedOut: { ...expected, width: 'fits' },
      onboarding: { ...expected, width: 'fits' },
    });
    await stranger.close();
  });
});
