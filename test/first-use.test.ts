// What a new person notices on their first days with carecircle, over real HTTP: the site and the
// app link to each other, channel pages speak to people (no raw requests, dates in words in their
// zone, no doubled full stop after a chosen name), Settings lists time zones by region under their
// current names and says in plain words what each assistant did.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WORKSPACE_COLLECTIONS } from '../src/family/records.js';
import { caregiverWithKey, devIdToken } from './harness/identity.js';
import { callTool, connectedApp } from './oauth.fixtures.js';
import { startTestService, type TestService } from './harness/service.js';

const CHANNEL = 'long-distance-caregiving';

describe('first use - the site, the app and the words between them', () => {
  let svc: TestService;
  let person: Awaited<ReturnType<typeof caregiverWithKey>>;
  let threadPath: string;
  let threadCreatedAt: string;

  const page = async (base: string, path: string, cookie?: string) => {
    const res = await fetch(`${base}${path}`, { headers: { accept: 'text/html', ...(cookie ? { cookie } : {}) } });
    expect(res.status, path).toBe(200);
    return res.text();
  };
  const app = (path: string) => page(svc.urls.app!, path, person.cookie);
  const saveZone = (timeZone: string) =>
    fetch(`${svc.urls.app}/settings/time-zone`, {
      method: 'POST',
      headers: { cookie: person.cookie, origin: new URL(svc.config.appUrl).origin, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ timeZone }).toString(),
      redirect: 'manual',
    });

  beforeAll(async () => {
    svc = await startTestService();
    person = await caregiverWithKey(svc, 'david@example.com');
    // David chooses "David O." as the name others see, and starts a thread.
    const token = await devIdToken(svc, 'david@example.com');
    const post = (body: unknown) =>
      fetch(`${svc.urls.site}/api/community`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      }).then((r) => r.json() as Promise<any>);
    await post({ channel: CHANNEL, action: 'join', displayName: 'David O.' });
    const thread = (await post({ channel: CHANNEL, action: 'thread', title: 'Weekend visits', body: 'Who drives on Sundays?' })).thread;
    threadPath = `/channels/${CHANNEL}/threads/${thread.id}`;
    threadCreatedAt = thread.createdAt;
  });
  afterAll(() => svc?.stop());

  it('when a visitor reads the site, then its header links to signing in to the family app at APP_URL', async () => {
    const html = await page(svc.urls.site!, '/');
    const header = html.slice(html.indexOf('<header'), html.indexOf('</header>'));
    expect(header).toContain(`href="${svc.config.appUrl}/signin"`);
  });

  it('when a caregiver uses the app, then every page links to the site’s directory, community and calculator at SITE_URL', async () => {
    for (const path of ['/', '/settings', '/family']) {
      const html = await app(path);
      const footer = html.slice(html.indexOf('<footer'));
      for (const part of ['/resources', '/channels', '/calculator']) expect(footer, path).toContain(`href="${svc.config.siteUrl}${part}"`);
    }
  });

  it('when a person opens the channel pages, then they show no raw HTTP, while their markdown for agents still does', async () => {
    for (const path of ['/channels', `/channels/${CHANNEL}`, threadPath]) {
      for (const cookie of [undefined, person.cookie]) {
        const html = await page(svc.urls.site!, path, cookie);
        expect(html, `${path}${cookie ? ', signed in' : ''}`).not.toMatch(/POST |Authorization|Bearer|ID token/);
      }
      const md = await fetch(`${svc.urls.site}/api/md?path=${encodeURIComponent(path)}`).then((r) => r.text());
      expect(md, path).toContain(`POST ${svc.config.siteUrl}/api/community`);
      expect(md, path).toContain('Authorization: Bearer <ID token>');
    }
  });

  it('when a signed-in member named "David O." reads a channel, then the name ends the sentence with one full stop', async () => {
    const html = await page(svc.urls.site!, `/channels/${CHANNEL}`, person.cookie);
    expect(html).toContain('Others see you as <strong>David O.</strong></p>');
    expect(html).not.toMatch(/David O\.(<\/strong>)?\./);
    // The thread's own summary, for search engines and link previews, too.
    const thread = await page(svc.urls.site!, threadPath);
    expect(thread).toMatch(/started by David O\.["<]/);
    expect(thread).not.toMatch(/David O\.\./);
  });

  it('when a thread is read, then its dates are in words: in the reader’s zone when signed in, else UTC', async () => {
    const words = (zone: string) =>
      new Intl.DateTimeFormat('en-US', { timeZone: zone, month: 'long', day: 'numeric', year: 'numeric' }).format(new Date(threadCreatedAt));
    const iso = threadCreatedAt.slice(0, 10);

    const visitor = await page(svc.urls.site!, threadPath);
    expect(visitor).toContain(`Started by David O. on ${words('UTC')} in`);
    expect(visitor).not.toContain(iso);

    expect((await saveZone('Pacific/Kiritimati')).status).toBe(303);
    const member = await page(svc.urls.site!, threadPath, person.cookie);
    expect(member).toContain(`Started by David O. on ${words('Pacific/Kiritimati')} in`);
    const list = await page(svc.urls.site!, `/channels/${CHANNEL}`, person.cookie);
    expect(list).toContain(`started ${words('Pacific/Kiritimati')}`);
    expect(list).not.toContain(iso);
  });

  it('when a person picks a time zone, then the list is grouped by region, under current names, with UTC offsets', async () => {
    const html = await app('/settings');
    const select = html.slice(html.indexOf('<select id="time-zone-select"'), html.indexOf('</select>'));
    expect(select).toContain('<optgroup label="Asia">');
    expect(select).toContain('<optgroup label="Europe">');
    expect(select).toContain('<option value="Asia/Kolkata">Kolkata (UTC+05:30)</option>');
    expect(select).toContain('<option value="Europe/Kyiv">Kyiv (UTC+02:00)</option>');
    expect(select).toMatch(/<option value="America\/Argentina\/Buenos_Aires">Buenos Aires, Argentina \(UTC−03:00\)<\/option>/);
    expect(select).not.toMatch(/Asia\/Calcutta|Europe\/Kiev|America\/Buenos_Aires"/);
  });

  it('when a stored zone has an older name, then Settings shows and selects its current name, and saving it keeps the current name', async () => {
    await svc.store.db.collection(WORKSPACE_COLLECTIONS.users).updateOne({ email: 'david@example.com' }, { $set: { timeZone: 'Europe/Kiev' } });
    let html = await app('/settings');
    expect(html).toContain('<strong id="current-zone">Europe/Kyiv</strong>');
    expect(html).toContain('<option value="Europe/Kyiv" selected>');

    expect((await saveZone('Asia/Calcutta')).status).toBe(303);
    const user = await svc.store.db.collection<{ timeZone?: string }>(WORKSPACE_COLLECTIONS.users).findOne({ email: 'david@example.com' });
    expect(user?.timeZone).toBe('Asia/Kolkata');
    html = await app('/settings');
    expect(html).toContain('<option value="Asia/Kolkata" selected>');

    // A zone outside the list stays selectable as it is.
    expect((await saveZone('Etc/GMT+5')).status).toBe(303);
    html = await app('/settings');
    expect(html).toContain('<option value="Etc/GMT+5" selected>');
  });

  it('when an assistant used an API key and a connected app, then Settings says what each did and names the key and the app', async () => {
    const viaKey = await fetch(`${svc.urls.app}/api/mcp`, {
      method: 'POST',
      headers: { authorization: `Bearer ${person.apiKey}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify([
        { jsonrpc: '2.0', method: 'notifications/initialized' },
        { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'list_care_events', arguments: { lovedOneId: person.lovedOneId } } },
      ]),
    });
    expect(viaKey.status).toBe(200);
    const { tokens } = await connectedApp(svc, 'david@example.com', ['care_circle:read']);
    expect((await callTool(svc, tokens.access_token, 'list_loved_ones')).status).toBe(200);

    await expect
      .poll(
        async () => {
          const html = await app('/settings');
          return html.slice(html.indexOf('<table id="activity"'), html.indexOf('</table>', html.indexOf('<table id="activity"')));
        },
        { timeout: 5_000 },
      )
      .toMatch(/Listed loved ones.*Connected app ‘Test Assistant’.*Listed care events.*API key ‘test’ \(…[0-9a-f]{4}\)/s);
    const html = await app('/settings');
    const activity = html.slice(html.indexOf('<table id="activity"'), html.indexOf('</table>', html.indexOf('<table id="activity"')));
    expect(activity).not.toMatch(/tools\/call|notifications\/initialized|api-key|oauth/);
  });
});
