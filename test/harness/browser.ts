// Real headless Chromium (Debian's package) driven by playwright-core, one browser per vitest worker.
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll } from 'vitest';
import { repoRoot } from './servers.js';
import { startTestService, type TestService, type TestServiceOptions } from './service.js';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const SCREENSHOTS = path.join(repoRoot, 'test-results');

function launch(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--disable-dev-shm-usage',
      // One renderer per site rather than per frame and page, and no background features: the
      // walks' Chromium is most of the suite's CPU (about 10% less with these).
      '--disable-features=IsolateOrigins,site-per-process,Translate,MediaRouter,OptimizationHints',
      '--process-per-site',
    ],
  });
}

let shared: Promise<Browser> | undefined;

/**
 * Chromium for one test file. The files of a vitest worker share its modules, and so one Chromium
 * (a launch costs about 1.5 s of CPU, some twenty times a run): each file gets a handle whose
 * `close()` closes the contexts and pages the file opened, never the browser, which ends with
 * its worker. Everything a page keeps (cookies, storage, service workers, permissions) lives in
 * its context, so no file sees another's.
 */
export async function launchBrowser(): Promise<Browser> {
  if (!shared || !(await shared.catch(() => undefined))?.isConnected()) shared = launch();
  const browser = await shared;
  const opened = new Set<BrowserContext>();
  const track = (context: BrowserContext) => {
    opened.add(context);
    context.once('close', () => opened.delete(context));
    return context;
  };
  return new Proxy(browser, {
    get(target, prop) {
      if (prop === 'newContext') return async (...args: Parameters<Browser['newContext']>) => track(await target.newContext(...args));
      if (prop === 'newPage')
        return async (...args: Parameters<Browser['newPage']>) => {
          const page = await target.newPage(...args);
          track(page.context());
          return page;
        };
      if (prop === 'close') return async () => void (await Promise.all([...opened].map((c) => c.close().catch(() => undefined))));
      const value: unknown = Reflect.get(target, prop, target);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/** A fresh page whose console errors and page errors are collected for the test to assert on. */
export async function newPage(browser: Browser): Promise<{ page: Page; errors: string[] }> {
  const context = await browser.newContext();
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('console', (msg) => {
    if (msg.type() === 'error') errors.push(msg.text());
  });
  page.on('pageerror', (err) => errors.push(err.message));
  return { page, errors };
}

/** Whether the walks save what they see (`SCREENSHOTS=1`): a full-page PNG costs time a test run
 *  does not need, so only a run meant for looking at the pages takes them. */
export const TAKE_SCREENSHOTS = process.env.SCREENSHOTS === '1';

/** Saves the page as test-results/<name>.png when screenshots are asked for; the file, or undefined. */
export async function screenshot(page: Page, name: string): Promise<string | undefined> {
  if (!TAKE_SCREENSHOTS) return undefined;
  mkdirSync(SCREENSHOTS, { recursive: true });
  const file = path.join(SCREENSHOTS, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  return file;
}

/** What on the page a reader would have to swipe sideways: boxes that scroll content wider than themselves. */
export function sidewaysBoxes(page: Page): Promise<string[]> {
  return page.evaluate(() =>
    Array.from(document.querySelectorAll('main *'))
      .filter((el) => el.scrollWidth > el.clientWidth + 1 && ['auto', 'scroll'].includes(getComputedStyle(el).overflowX))
      .map((el) => el.tagName.toLowerCase() + (el.classList.length ? `.${el.classList[0]}` : '')),
  );
}

/** The height on screen of the smallest text `selector` matches (a chart's labels, say); fails when it matches none. */
export async function smallestTextHeight(page: Page, selector: string): Promise<number> {
  const heights = await page.$$eval(selector, (texts) => texts.map((t) => t.getBoundingClientRect().height));
  if (!heights.length) throw new Error(`no text matches ${selector}`);
  return Math.min(...heights);
}

/** Sign in through the development identity provider's form, starting from an app page. */
export async function signInWithBrowser(page: Page, startUrl: string, email: string): Promise<void> {
  await page.goto(startUrl);
  await page.click('#signin');
  await page.waitForURL(/\/dev\/login/);
  await page.fill('#email', email);
  await page.click('button[type=submit]');
  await page.waitForURL((url) => url.href.startsWith(new URL(startUrl).origin) && !url.pathname.startsWith('/auth/callback'));
}

/** Sign in as `email` and create a family workspace with one loved one; lands on the workspace page. */
export async function createWorkspaceWithBrowser(
  page: Page,
  appUrl: string,
  email: string,
  family: { familyName: string; firstName: string; lastName: string },
): Promise<void> {
  await signInWithBrowser(page, `${appUrl}/onboarding`, email);
  await page.fill('#familyName', family.familyName);
  await page.fill('#firstName', family.firstName);
  await page.fill('#lastName', family.lastName);
  await Promise.all([page.waitForURL(`${appUrl}/`), page.click('main button[type=submit]')]);
}

/** On the workspace page: enter an agency's link code and wait until the client is linked. */
export async function linkAgencyWithBrowser(page: Page, code: string): Promise<void> {
  await page.fill('#link-code', code);
  await page.click('#family-share-form button');
  await page.locator('#family-share-result', { hasText: /^Linked/ }).waitFor();
}

/** A carecircle and a Chromium for a test file: both started before its tests and stopped after
 *  them; the returned object is filled in before the tests run. */
export function useServiceWithBrowser(options: TestServiceOptions = {}): { svc: TestService; browser: Browser } {
  const handle = {} as { svc: TestService; browser: Browser };
  beforeAll(async () => {
    [handle.svc, handle.browser] = await Promise.all([startTestService(options), launchBrowser()]);
  });
  afterAll(async () => {
    await handle.browser?.close();
    await handle.svc?.stop();
  });
  return handle;
}
