// Where a sign-in leads, in headless Chromium: a `next` that a browser would turn into another host
// (a tab, newline or carriage return inside `/\t/host`) lands on the app, the page script checks
// the server's choice again, and the browser's own URL parser agrees with the rule on every row of
// the hostile table. "Another host" is a second loopback listener, so nothing leaves the machine.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newPage, useServiceWithBrowser } from './harness/browser.js';
import { hostileNexts, keptNexts } from './returnTarget.fixtures.js';

const run = useServiceWithBrowser();
const app = () => run.svc.config.appUrl;

/** The elsewhere a hostile link would send people to: it counts every request it gets. */
let evil: Server;
let evilHost = '';
const evilHits: string[] = [];
beforeAll(async () => {
  evil = createServer((req, res) => {
    evilHits.push(req.url ?? '');
    res.end('phished');
  });
  await new Promise<void>((resolve) => evil.listen(0, '127.0.0.2', resolve));
  evilHost = `127.0.0.2:${(evil.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((resolve) => evil?.close(resolve));
});

/** Sign in through the development provider starting at `/signin?next=…`; where the browser ends up. */
async function signInWith(page: Page, next: string, email: string): Promise<URL> {
  await page.goto(`${app()}/signin?next=${encodeURIComponent(next)}`);
  await page.waitForURL(/\/dev\/login/);
  await page.fill('#email', email);
  await page.click('button[type=submit]');
  const authOrigin = new URL(run.svc.config.authUrl).origin;
  await page.waitForURL((url) => url.origin !== authOrigin && !url.pathname.startsWith('/auth/callback'));
  return new URL(page.url());
}

describe('sign-in return address in a browser', () => {
  it('when next hides another host behind a tab, newline or carriage return, then signing in lands on the app', async () => {
    for (const [label, char] of [
      ['tab', '\t'],
      ['newline', '\n'],
      ['carriage return', '\r'],
    ]) {
      const { page } = await newPage(run.browser);
      const landed = await signInWith(page, `/${char}/${evilHost}/phish`, 'return-hostile@example.com');
      expect(landed.origin, label).toBe(new URL(app()).origin);
      await page.context().close();
    }
    expect(evilHits).toEqual([]);
  });

  it('when next is a page of the app, then signing in lands there', async () => {
    const { page, errors } = await newPage(run.browser);
    const landed = await signInWith(page, '/settings#connected-apps', 'return-kept@example.com');
    expect(landed.href).toBe(`${app()}/settings#connected-apps`);
    expect(errors).toEqual([]);
    await page.context().close();
  });

  it('when the callback page itself carries a hostile next, then the page script still lands on the app', async () => {
    const { page } = await newPage(run.browser);
    // The page as a server without the rule would send it: the script is the last line of defence.
    await page.route(`${app()}/auth/callback*`, async (route) => {
      const response = await route.fetch();
      const body = (await response.text()).replace(/data-next="[^"]*"/, `data-next="/&#9;/${evilHost}/phish"`);
      expect(body).toContain(`data-next="/&#9;/${evilHost}`);
      await route.fulfill({ response, body });
    });
    const landed = await signInWith(page, '/', 'return-script@example.com');
    expect(landed.origin).toBe(new URL(app()).origin);
    expect(evilHits).toEqual([]);
    await page.context().close();
  });

  it("when the browser's URL parser judges the table, then it refuses every hostile next and keeps the others as Node does", async () => {
    const { page } = await newPage(run.browser);
    await page.goto(`${app()}/`);
    const origins = { app: new URL(app()).origin, site: new URL(run.svc.config.siteUrl).origin, evil: evilHost };
    // As source text: the test runner would rewrite an import() written inside a function.
    const judge = `(async ({ hostile, kept, site }) => {
      const rule = await import('/assets/return-target.js');
      const verdict = (next) => [next, rule.returnTarget(next, location.origin, [site])];
      return { hostile: hostile.map(verdict), kept: kept.map(([next]) => verdict(next)) };
    })(${JSON.stringify({ hostile: hostileNexts(origins), kept: keptNexts(origins), site: origins.site })})`;
    const verdicts = (await page.evaluate(judge)) as { hostile: [string, string | null][]; kept: [string, string | null][] };
    expect(verdicts.hostile.filter(([, answer]) => answer !== null)).toEqual([]);
    expect(verdicts.kept).toEqual(keptNexts(origins));
    await page.context().close();
  });
});
