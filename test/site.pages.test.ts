// Directory pages in real headless Chromium with JavaScript off (they are server-rendered), and
// the markdown renderings for agents: same data, same facts, strict headers.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadCostData } from '../src/directory/costData.js';
import { loadDirectoryData } from '../src/directory/data.js';
import { launchBrowser, screenshot, sidewaysBoxes, smallestTextHeight } from './harness/browser.js';
import { indexLetter } from '../src/site/pages/glossary.js';
import { startFakeIdp, type FakeIdp } from './harness/fakeIdp.js';
import { startTestService, type TestService } from './harness/service.js';

const data = loadDirectoryData();
const usd = (n: number) => `$${n.toLocaleString('en-US')}`;

describe('directory pages', () => {
  let browser: Browser;
  let idp: FakeIdp;
  let svc: TestService;
  let site: string;
  let threadId: string;

  beforeAll(async () => {
    [browser, idp] = await Promise.all([launchBrowser(), startFakeIdp()]);
    svc = await startTestService({ env: idp.env });
    site = svc.urls.site!;
    const token = await idp.token({ sub: 'page-author', email: 'author@example.com', name: 'Priya' });
    const post = (body: unknown) =>
      fetch(`${site}/api/community`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      }).then((r) => r.json() as Promise<any>);
    await post({ channel: 'long-distance-caregiving', action: 'join' });
    threadId = (
      await post({
        channel: 'long-distance-caregiving',
        action: 'thread',
        title: 'Checking in from 800 miles away',
        body: 'What do you use to keep track of visits?\n\nWe use a shared notebook <and> a weekly call.',
      })
    ).thread.id;
    await post({ channel: 'long-distance-caregiving', action: 'comment', threadId, body: 'A group chat with the aides works for us.' });
  });
  afterAll(async () => {
    await browser?.close();
    await svc?.stop();
    await idp?.stop();
  });

  /**
   * Opens `path` with JavaScript off; the test fails on any console error (CSP violations included).
   * An error page (`status`) logs exactly one error, Chromium's note on the document's own status.
   */
  async function visit(path: string, shot: string, act?: (page: Page) => Promise<void>, status = 200) {
    const context = await browser.newContext({ javaScriptEnabled: false, viewport: { width: 1024, height: 800 } });
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('console', (msg) => {
      if (msg.type() === 'error') errors.push(msg.text());
    });
    page.on('pageerror', (err) => errors.push(err.message));
    page.on('requestfailed', (req) => errors.push(`request failed: ${req.url()}`));
    try {
      const response = await page.goto(`${site}${path}`);
      if (act) await act(page);
      await screenshot(page, `site-${shot}`);
      const a11y = await page.evaluate(() => {
        const doc = (globalThis as any).document;
        return {
          lang: doc.documentElement.lang,
          h1: doc.querySelectorAll('h1').length,
          main: doc.querySelectorAll('main').length,
          unlabelled: [...doc.querySelectorAll('input:not([type=hidden]), select')].filter((el: any) => !el.labels?.length).length,
          stylesheets: doc.querySelectorAll('link[rel=stylesheet]').length,
          scripts: doc.querySelectorAll('script').length,
          styleSheetsLoaded: doc.styleSheets.length,
        };
      });
      expect(a11y, path).toEqual({ lang: 'en', h1: 1, main: 1, unlabelled: 0, stylesheets: 1, scripts: 0, styleSheetsLoaded: 1 });
      expect(errors, path).toEqual(
        status === 200 ? [] : [expect.stringMatching(new RegExp(`^Failed to load resource: the server responded with a status of ${status} `))],
      );
      return { page, status: response!.status(), headers: response!.headers(), text: await page.locator('main').innerText() };
    } finally {
      await context.close();
    }
  }

  it('when the home page is opened, then it offers search, categories, channels, the calculator and the newsletter', async () => {
    const { status, headers, text } = await visit('/', 'home');
    expect(status).toBe(200);
    expect(headers['content-security-policy']).toBe(
      "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
    );
    expect(headers['x-content-type-options']).toBe('nosniff');
    expect(headers.vary).toBe('Accept, Accept-Encoding');
    for (const words of [
      'What are you looking for?',
      'Browse by need',
      'Dementia',
      'Talk with other caregivers',
      'Long-term-care cost calculator',
      'Newsletter',
    ])
      expect(text).toContain(words);
  });

  it('when a person searches from the home page, then results link to resources, channels and glossary terms', async () => {
    const { page, text } = await visit('/', 'resources-search', async (p) => {
      await p.getByLabel('What are you looking for?').fill('respite');
      await Promise.all([p.waitForURL(/\/resources\?q=respite/), p.getByRole('button', { name: 'Search' }).click()]);
    });
    expect(page.url()).toContain('/resources?q=respite');
    expect(text).toMatch(/\d+ results? for “respite”/);
    expect(text).toContain('Respite');
  });

  it('when resources are browsed by category, then only that category is listed; a bad category is 400 naming it', async () => {
    const { text } = await visit('/resources?category=veterans', 'resources-category');
    const veterans = data.resources.filter((r) => r.category === 'veterans');
    for (const r of veterans) expect(text).toContain(r.name);
    expect(text).not.toContain(data.resources.find((r) => r.category === 'legal')!.name);
    const bad = await fetch(`${site}/resources?category=astrology`);
    expect(bad.status).toBe(400);
    expect(await bad.text()).toContain('category must be one of');
  });

  it('when a resource page is opened, then its phone, website, hours and source are shown', async () => {
    const r = data.resources.find((x) => x.id === 'eldercare-locator')!;
    const { text } = await visit(`/resources/${r.id}`, 'resource');
    for (const fact of [r.name, r.phone!, r.website, r.hours!, r.source]) expect(text).toContain(fact);
    expect(await (await fetch(`${site}/resources/${r.id}`)).text()).toContain('<a href="tel:+18006771116">1-800-677-1116</a>');
  });

  it('when the channels and a channel page are opened, then the channel shows its threads with counts', async () => {
    const list = await visit('/channels', 'channels');
    for (const c of data.channels) expect(list.text).toContain(c.name);
    const { text } = await visit('/channels/long-distance-caregiving', 'channel');
    expect(text).toContain('Checking in from 800 miles away');
    expect(text).toContain('by Priya');
    expect(text).toContain('1 comment;');
    expect(text).toMatch(/Members\s+1/);
  });

  it('when a thread page is opened, then the body and comments are shown as text, escaped', async () => {
    const { text, status } = await visit(`/channels/long-distance-caregiving/threads/${threadId}`, 'thread');
    expect(status).toBe(200);
    expect(text).toContain('We use a shared notebook <and> a weekly call.');
    expect(text).toContain('A group chat with the aides works for us.');
    expect(text).toContain('Comments (1)');
  });

  it('when the calculator form is filled in and sent, then it shows what the MCP tool computes', async () => {
    const costs = loadCostData();
    const { text, page } = await visit('/calculator', 'calculator', async (p) => {
      await p.getByLabel('Kind of care').selectOption('home_health_aide');
      await p.getByLabel('State').selectOption('OH');
      await p.getByLabel('Years of care').fill('3');
      await Promise.all([p.waitForURL(/careType=home_health_aide/), p.getByRole('button', { name: 'Estimate the cost' }).click()]);
    });
    expect(page.url()).toContain('state=OH');
    const tool = await fetch(`${site}/api/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'calculate_long_term_care_cost', arguments: { careType: 'home_health_aide', state: 'OH', years: 3 } },
      }),
    }).then((r) => r.json() as Promise<any>);
    const est = JSON.parse(tool.result.content[0].text);
    expect(text).toContain(`Home health aide in Ohio`);
    for (const n of [est.monthly, est.annual, est.total, ...est.perYear.map((y: any) => y.annual)]) expect(text).toContain(usd(n));
    expect(text).toContain(costs.source.name);
  });

  it('when the calculator projects several years, then a labelled chart beside the table, and each figure with its survey year', async () => {
    let chart: any;
    const { text } = await visit('/calculator?careType=nursing_home_private&state=AK&years=5', 'calculator-chart', async (p) => {
      chart = await p.evaluate(() => {
        const doc = (globalThis as any).document;
        const svg = doc.querySelector('main svg');
        const named = (svg?.getAttribute('aria-labelledby') ?? '').split(' ').map((id: string) => doc.getElementById(id));
        return {
          role: svg?.getAttribute('role'),
          named: named.map((n: any) => [n?.tagName, n?.parentNode === svg, n?.textContent]),
          bars: svg?.querySelectorAll('rect').length,
          styled: doc.querySelectorAll('main [style], main style').length,
          width: svg?.getBoundingClientRect().width,
        };
      });
    });
    expect(chart).toMatchObject({ role: 'img', bars: 5, styled: 0 });
    expect(chart.named).toEqual([
      ['title', true, 'Cost by year: nursing home, private room in Alaska'],
      [
        'desc',
        true,
        expect.stringMatching(
          /^Bar chart of the yearly cost over 5 years, from \$364,452 in year 1 to \$410,194 in year 5, 3% more each year, worked out from the 2024 survey median/,
        ),
      ],
    ]);
    expect(chart.width).toBeGreaterThan(300);
    expect(text).toContain('$30,371 per month, Alaska median, survey year 2024');
    expect(text).toContain('$10,798 per month, national median, survey year 2025');
    const mdText = await (await fetch(`${site}/api/md?path=${encodeURIComponent('/calculator?careType=nursing_home_private&state=AK&years=5')}`)).text();
    expect(mdText).not.toContain('<svg');
    expect(mdText).toContain('| 5 | $410,194 |');
    expect(mdText).toContain('survey year 2024');
  });

  it('when the calculator gets a bad value, then 400 and the form names the field', async () => {
    const { status, text } = await visit('/calculator?careType=home_health_aide&years=99', 'calculator-error', undefined, 400);
    expect(status).toBe(400);
    expect(text).toContain('years must be between 1 and 30');
  });

  it('when the glossary is opened, then every term is there with its anchor', async () => {
    const { text } = await visit('/glossary', 'glossary');
    for (const g of data.glossary) expect(text).toContain(g.term);
  });

  it('when a letter of the glossary index is followed, then the page lands on that letter and each term is filed under its first letter', async () => {
    const sorted = [...data.glossary].sort((a, b) => a.term.localeCompare(b.term, 'en'));
    const firstM = sorted.find((g) => indexLetter(g.term) === 'M')!;
    await visit('/glossary', 'glossary-index', async (page) => {
      await page.getByRole('link', { name: 'M', exact: true }).click();
      expect(new URL(page.url()).hash).toBe('#letter-m');
      const letters = await page.locator('main h2[id^="letter-"]').allInnerTexts();
      expect(letters).toContain('M');
      expect(letters).toEqual([...letters].sort());
      expect(await page.locator('#letter-m + h3').innerText()).toBe(firstM.term);
      // Every term sits under its own letter: the nearest letter heading before it is its letter.
      const filed = await page.evaluate(() => {
        const doc = (globalThis as any).document;
        let letter = '';
        const out: Record<string, string> = {};
        for (const h of doc.querySelectorAll('main h2, main h3')) {
          if (h.tagName === 'H2') letter = h.id;
          else out[h.id] = letter;
        }
        return out;
      });
      for (const g of data.glossary) expect(filed[g.id], g.term).toBe(`letter-${indexLetter(g.term) === '#' ? 'other' : indexLetter(g.term).toLowerCase()}`);
    });
  });

  it('when a page does not exist, then a 404 page', async () => {
    const { status, text } = await visit('/resources/no-such-resource', 'not-found', undefined, 404);
    expect(status).toBe(404);
    expect(text).toContain('Page not found');
  });

  it('when the pages are opened on a phone (375 px), then each fits with nothing to swipe sideways, and the cost chart reads at a normal small size', async () => {
    const context = await browser.newContext({ javaScriptEnabled: false, viewport: { width: 375, height: 812 } });
    const page = await context.newPage();
    const paths = [
      '/',
      '/resources?q=respite+care',
      '/resources?category=veterans',
      `/resources/${data.resources[0]!.id}`,
      '/channels',
      '/channels/long-distance-caregiving',
      `/channels/long-distance-caregiving/threads/${threadId}`,
      '/calculator',
      '/calculator?careType=nursing_home_private&state=AK&years=5',
      '/glossary',
    ];
    const problems: Record<string, { width: string; sideways: string[] }> = {};
    for (const path of paths) {
      await page.goto(`${site}${path}`);
      const width = await page.evaluate(() => document.documentElement.scrollWidth);
      problems[path] = { width: width <= 375 ? 'fits' : `${width} px`, sideways: await sidewaysBoxes(page) };
      if (path.startsWith('/calculator?')) {
        await screenshot(page, 'site-375-calculator-chart');
        // The chart is scaled to the phone; its figures still read at a normal small size.
        expect(await smallestTextHeight(page, 'svg.chart-svg text')).toBeGreaterThanOrEqual(12);
      }
    }
    await context.close();
    // Every page first, then one comparison, so a failure lists every page that needs work.
    expect(problems).toEqual(Object.fromEntries(paths.map((path) => [path, { width: 'fits', sideways: [] }])));
  });

  it('when the stylesheet and icon are fetched, then one cacheable stylesheet and an SVG icon', async () => {
    const css = await fetch(`${site}/styles.css`);
    expect(css.status).toBe(200);
    expect(css.headers.get('content-type')).toMatch(/^text\/css/);
    expect(css.headers.get('cache-control')).toMatch(/max-age/);
    const icon = await fetch(`${site}/favicon.svg`);
    expect(icon.headers.get('content-type')).toBe('image/svg+xml');
  });
});

describe('markdown for agents', () => {
  let svc: TestService;
  let site: string;
  beforeAll(async () => {
    svc = await startTestService();
    site = svc.urls.site!;
  });
  afterAll(async () => svc?.stop());

  const md = async (query: string, headers: Record<string, string> = {}) => {
    const res = await fetch(`${site}/api/md${query}`, { headers });
    return { status: res.status, headers: res.headers, text: await res.text() };
  };

  it('when a page is asked for with Accept: text/markdown, then markdown of the same page with Vary', async () => {
    const res = await fetch(`${site}/resources/eldercare-locator`, { headers: { accept: 'text/markdown' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/markdown; charset=utf-8');
    expect(res.headers.get('vary')).toBe('Accept, Accept-Encoding');
    const text = await res.text();
    expect(text.startsWith('# Eldercare Locator\n')).toBe(true);
    const html = await fetch(`${site}/resources/eldercare-locator`, { headers: { accept: 'text/html' } });
    expect(html.headers.get('content-type')).toMatch(/^text\/html/);
    expect(html.headers.get('vary')).toBe('Accept, Accept-Encoding');
    expect(html.headers.get('etag')).not.toBe(res.headers.get('etag'));
  });

  it('when /api/md is given a path, a header or nothing, then the matching page as markdown', async () => {
    const byQuery = await md('?path=/glossary');
    expect(byQuery.status).toBe(200);
    expect(byQuery.headers.get('vary')).toBe('Accept, Accept-Encoding');
    expect(byQuery.text.startsWith('# Care-planning glossary')).toBe(true);
    const byHeader = await md('', { 'x-md-original-path': '/channels' });
    expect(byHeader.text.startsWith('# Community channels')).toBe(true);
    const both = await md('?path=/glossary', { 'x-md-original-path': '/channels' });
    expect(both.text.startsWith('# Care-planning glossary')).toBe(true);
    const home = await md('');
    expect(home.text.startsWith('# Care resources for family caregivers')).toBe(true);
    const absolute = await md(`?path=${encodeURIComponent(`${svc.config.siteUrl}/channels`)}`);
    expect(absolute.status).toBe(200);
  });

  it('when /api/md names no page, another host or a bad query, then ApiError 404 or 400 naming the problem', async () => {
    const missing = await md('?path=/resources/no-such-thing');
    expect(missing.status).toBe(404);
    const body = JSON.parse(missing.text);
    expect(body).toMatchObject({ code: 'NOT_FOUND', error: { code: 'NOT_FOUND' }, message: 'No page at /resources/no-such-thing' });
    expect(missing.headers.get('vary')).toBe('Accept, Accept-Encoding');
    expect((await md('?path=/api/newsletter')).status).toBe(404);
    const elsewhere = await md(`?path=${encodeURIComponent('https://evil.example/resources')}`);
    expect(elsewhere.status).toBe(400);
    expect(JSON.parse(elsewhere.text).message).toMatch(/path must be a path on this site/);
    const badCalc = await md(`?path=${encodeURIComponent('/calculator?careType=spa_days')}`);
    expect(badCalc.status).toBe(400);
    expect(JSON.parse(badCalc.text)).toMatchObject({ code: 'VALIDATION_FAILED', message: expect.stringMatching(/careType must be one of/) });
  });

  it('when an unencoded target query follows path, then it belongs to the target page', async () => {
    const res = await md('?path=/calculator?careType=assisted_living&state=TX&years=2');
    expect(res.status).toBe(200);
    expect(res.text).toContain('## Assisted living community in Texas');
  });

  it('when HTML and markdown of each kind of page are compared, then they carry the same facts', async () => {
    const both = async (path: string) => {
      const html = await (await fetch(`${site}${path}`)).text();
      const mdText = (await md(`?path=${encodeURIComponent(path)}`)).text;
      const visible = html
        .replace(/<[^>]+>/g, ' ')
        .replace(/&amp;/g, '&')
        .replace(/&#39;/g, "'")
        .replace(/&quot;/g, '"');
      const plain = mdText.replace(/\\([\\`*[\]<>|~_#+=.)-])/g, '$1');
      return { visible, plain };
    };
    for (const r of data.resources.slice(0, 5)) {
      const { visible, plain } = await both(`/resources/${r.id}`);
      for (const fact of [r.name, r.website, r.source, ...(r.phone ? [r.phone] : []), ...(r.hours ? [r.hours] : [])]) {
        expect(visible, `${r.id} html`).toContain(fact);
        expect(plain, `${r.id} md`).toContain(fact);
      }
    }
    const calc = await both('/calculator?careType=nursing_home_private&state=NY&years=4');
    for (const figure of [...calc.visible.matchAll(/\$[\d,]+/g)].map((m) => m[0])) expect(calc.plain).toContain(figure);
    const glossary = await both('/glossary');
    for (const g of data.glossary) {
      expect(glossary.visible).toContain(g.term);
      expect(glossary.plain).toContain(g.term);
    }
    const channels = await both('/channels');
    for (const c of data.channels) expect(channels.plain).toContain(c.name);
  });
});
