// Editing with care, connecting an assistant, and times, words and ids for people, in headless
// Chromium and over HTTP against a real service: confirmations before revoking and removing, a
// reload that mints nothing, the duplicate flag, the person's time zone, no internal ids on
// screen, attachments for the family only, and error messages written for caregivers.
import nodemailer from 'nodemailer';
import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { BRIDGE_PLACEHOLDER } from '../src/app/connect.js';
import { PlansStore } from '../src/family/plans.js';
import { FamilyShares } from '../src/ingest/familyShare.js';
import { KeyStore } from '../src/keys/keys.js';
import { SandboxService } from '../src/sandbox/service.js';
import { screenshot, signInWithBrowser, useServiceWithBrowser } from './harness/browser.js';
import { careEvents, family, onboard, postEvent, shareWith, TEST_DATA_KEY, visit, type Family } from './ingest.fixtures.js';

const run = useServiceWithBrowser({ nats: true, env: { DATA_KEY: TEST_DATA_KEY } });

/** Internal ids as the stores mint them: a prefix, an underscore and 20 base32 characters. */
const INTERNAL_ID = /\b(lo|ws|key|mail|evt|lnk|inst)_[a-z2-7]{20}\b/;
const app = (path: string) => `${run.svc.config.appUrl}${path}`;
const origin = () => new URL(run.svc.config.appUrl).origin;
const get = (fam: { cookie: string }, path: string, extra: Record<string, string> = {}) =>
  fetch(app(path), { headers: { cookie: fam.cookie, ...extra }, redirect: 'manual' });
const post = (fam: { cookie: string }, path: string, form: Record<string, string>, headers: Record<string, string> = {}) =>
  fetch(app(path), {
    method: 'POST',
    headers: { cookie: fam.cookie, origin: origin(), 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(form).toString(),
    redirect: 'manual',
  });
const textOf = (html: string) =>
  html
    .replace(/<[^>]+>/g, ' ')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&')
    .replace(/\s+/g, ' ');

async function phonePage(timezoneId: string): Promise<{ page: Page; errors: string[] }> {
  const context = await run.browser.newContext({ timezoneId, viewport: { width: 375, height: 812 }, permissions: ['clipboard-read', 'clipboard-write'] });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('console', (msg) => void (msg.type() === 'error' && errors.push(msg.text())));
  page.on('pageerror', (err) => errors.push(err.message));
  return { page, errors };
}

describe('editing with care, in Chromium', () => {
  it('when a caregiver mints, reloads, copies a configuration, revokes and removes a key, then one key was minted, each step asked first, and times are in their zone', async () => {
    const { page, errors } = await phonePage('America/Chicago');
    await signInWithBrowser(page, app('/onboarding'), 'keys.editor@example.com');
    await page.fill('#familyName', 'The Editor Family');
    await page.fill('#firstName', 'Rosa');
    await page.fill('#lastName', 'Lopez');
    await Promise.all([page.waitForURL(app('/')), page.click('main button[type=submit]')]);

    // The browser's zone became the person's on their first pages; Settings shows and changes it.
    await expect.poll(async () => (await run.svc.store.db.collection('users').findOne({ email: 'keys.editor@example.com' }))?.timeZone).toBe('America/Chicago');

    await page.goto(app('/settings'));
    expect(await page.textContent('#current-zone')).toBe('America/Chicago');
    await page.fill('#key-name', 'Laptop');
    await Promise.all([page.waitForURL(app('/settings/connect')), page.click('form[action="/settings/keys"] button')]);
    expect(page.url()).not.toContain('sk-svc');
    const apiKey = (await page.textContent('#new-key'))!.trim();
    expect(apiKey).toMatch(/^sk-svc-[0-9a-f]{64}$/);
    for (const id of ['claude-desktop', 'cursor', 'vscode', 'zed', 'remote']) {
      const config = (await page.textContent(`#config-${id}`))!;
      expect(config, id).toContain(apiKey);
      expect(config, id).toContain(run.svc.config.appUrl);
    }
    expect(JSON.parse((await page.textContent('#config-claude-desktop'))!)).toEqual({
      mcpServers: {
        carecircle: { command: 'node', args: [BRIDGE_PLACEHOLDER], env: { CARECIRCLE_URL: run.svc.config.appUrl, CARECIRCLE_API_KEY: apiKey } },
      },
    });
    expect(JSON.parse((await page.textContent('#config-vscode'))!)).toEqual({
      servers: { carecircle: { type: 'http', url: `${run.svc.config.appUrl}/api/mcp`, headers: { Authorization: `Bearer ${apiKey}` } } },
    });
    expect(await page.textContent('#oauth')).toContain('OAuth');
    // With script on, the copy buttons show and copy; without it they stay hidden (checked over HTTP below).
    await page.click('button[data-copy="config-cursor"]');
    expect(JSON.parse(await page.evaluate(() => navigator.clipboard.readText()))).toEqual({
      mcpServers: { carecircle: { url: `${run.svc.config.appUrl}/api/mcp`, headers: { Authorization: `Bearer ${apiKey}` } } },
    });
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(375);
    await screenshot(page, 'connect-assistant-375');

    // A reload shows the key no more and mints nothing.
    await page.reload();
    expect(await page.locator('#new-key').count()).toBe(0);
    expect(await page.content()).not.toContain(apiKey);
    await page.goto(app('/settings'));
    expect(await page.locator('#keys tbody tr').count()).toBe(1);
    expect(await page.textContent('#keys')).toMatch(/Mon|Tue|Wed|Thu|Fri|Sat|Sun/);
    expect(await page.textContent('#keys')).toMatch(/\d{1,2}:\d{2} [ap]m (CST|CDT)/);

    const label = `key ‘Laptop’ (…${apiKey.slice(-4)})`;
    await Promise.all([page.waitForURL(/\/revoke$/), page.click(`#keys a:has-text("Revoke ${label}")`)]);
    expect(await page.textContent('#confirm button')).toBe(`Revoke ${label}`);
    await screenshot(page, 'revoke-confirm-375');
    expect((await new KeyStore(run.svc.store.db, run.svc.credentials).findByPlaintext(apiKey))?.status).toBe('active'); // asking revoked nothing
    await Promise.all([page.waitForURL(/\/settings(#mcp-api-keys)?$/), page.click('#confirm button')]);
    expect(await page.textContent('#keys')).toContain('revoked');
    expect((await new KeyStore(run.svc.store.db, run.svc.credentials).findByPlaintext(apiKey))?.status).toBe('revoked');
    await Promise.all([page.waitForURL(/\/settings(#mcp-api-keys)?$/), page.click(`#keys button:has-text("Remove ${label}")`)]);
    expect(await page.locator('#keys').count()).toBe(0);

    await page.selectOption('#time-zone-select', 'Asia/Tokyo');
    await Promise.all([page.waitForURL(/\/settings(#time-zone)?$/), page.click('form[action="/settings/time-zone"] button')]);
    expect(await page.textContent('#current-zone')).toBe('Asia/Tokyo');
    await screenshot(page, 'settings-375');
    expect(errors, errors.join('\n')).toEqual([]);
  });

  it('when a caregiver adds a loved one twice, edits one and removes the other, then the duplicate is flagged and removal asks first', async () => {
    const { page, errors } = await phonePage('Europe/Berlin');
    await signInWithBrowser(page, app('/onboarding'), 'loved.editor@example.com');
    await page.fill('#familyName', 'The Garcia Family');
    await page.fill('#firstName', 'Rosa');
    await page.fill('#lastName', 'Lopez');
    await Promise.all([page.waitForURL(app('/')), page.click('main button[type=submit]')]);

    await page.fill('#firstName', '  rosa ');
    await page.fill('#lastName', 'LOPEZ');
    await Promise.all([page.waitForURL(/\/workspace\/loved-ones$/), page.click('form[action="/workspace/loved-ones"] button')]);
    expect(await page.textContent('#duplicate')).toContain('Rosa Lopez is already in your workspace');
    await screenshot(page, 'duplicate-loved-one-375');
    await page.goto(app('/'));
    expect(await page.locator('a.loved-one').count()).toBe(1);
    await page.fill('#firstName', 'Rosa');
    await page.fill('#lastName', 'Lopez');
    await page.click('form[action="/workspace/loved-ones"] button');
    await Promise.all([page.waitForURL(app('/')), page.click('#create-anyway')]);
    expect(await page.locator('a.loved-one').count()).toBe(2);

    await Promise.all([page.waitForURL(/\/edit$/), page.click('a:has-text("Edit Rosa Lopez") >> nth=1')]);
    await page.fill('#firstName', 'Rosalind');
    await Promise.all([page.waitForURL(app('/')), page.click('main button[type=submit]')]);
    expect(await page.textContent('main')).toContain('Rosalind Lopez');

    await Promise.all([page.waitForURL(/\/remove$/), page.click('a:has-text("Remove Rosalind Lopez")')]);
    expect(await page.textContent('#what-goes')).toContain('0 entries');
    await screenshot(page, 'remove-loved-one-375');
    await Promise.all([page.waitForURL(app('/')), page.click('#remove')]);
    expect(await page.locator('a.loved-one').count()).toBe(1);
    expect(await page.textContent('main')).not.toContain('Rosalind');

    await page.click('a:has-text("Rename the workspace")');
    await page.fill('#familyName', 'The Garcia-Lopez Family');
    await Promise.all([page.waitForURL(app('/')), page.click('main button[type=submit]')]);
    expect(await page.textContent('h1')).toBe('The Garcia-Lopez Family');
    // No internal id anywhere a person reads.
    expect(await page.innerText('body')).not.toMatch(INTERNAL_ID);
    await page.click('button[data-copy^="inbox-address"]');
    expect(await page.evaluate(() => navigator.clipboard.readText())).toMatch(
      new RegExp(`^rosa-lopez-[a-z2-7]{8}@${run.svc.config.inboxDomain.replace(/\./g, '\\.')}$`),
    );
    await screenshot(page, 'workspace-375');
    expect(errors, errors.join('\n')).toEqual([]);
  });
});

describe('editing with care, over HTTP', () => {
  let fam: Family;
  beforeAll(async () => {
    fam = await family(run.svc.store.db, run.svc.credentials, run.svc.config);
  });

  it('when a loved one with events, mail and an agency link is removed, then the page counts them first and afterwards all are gone', async () => {
    const partner = await onboard(run.svc.store.db, run.svc.credentials, 'Sunrise Home Care');
    await shareWith(run.svc, partner, 'rose-1', fam);
    expect((await postEvent(run.svc.urls.pipe!, partner, visit(partner, 'rose-1'))).status).toBe(202);
    await expect.poll(() => careEvents(run.svc.store.db).countDocuments({ lovedOneId: fam.lovedOneId }), { timeout: 15_000 }).toBe(1);
    const address = (await run.svc.store.db.collection('loved_ones').findOne({ _id: fam.lovedOneId as never }))!.inboxAddress as string;
    await nodemailer.createTransport({ host: '127.0.0.1', port: Number(new URL(run.svc.urls.smtp!).port), secure: false, ignoreTLS: true }).sendMail({
      from: 'clinic@sender.example',
      to: address,
      subject: 'Lab results',
      text: 'Ready.',
      attachments: [{ filename: 'résultats.pdf', content: Buffer.from('%PDF-1.4 lab') }],
    });
    const item = (await run.svc.store.db.collection('inbox_items').findOne({ lovedOneId: fam.lovedOneId }))!;
    const attachmentPath = `/inbox/${fam.lovedOneId}/attachments/${String(item._id)}/0`;

    // The family downloads it; anyone else gets the 404 of an attachment that does not exist.
    const download = await get(fam, attachmentPath);
    expect(download.status).toBe(200);
    expect(download.headers.get('content-disposition')).toBe(`attachment; filename="r_sultats.pdf"; filename*=UTF-8''r%C3%A9sultats.pdf`);
    expect(Buffer.from(await download.arrayBuffer()).toString()).toBe('%PDF-1.4 lab');
    const outsider = await family(run.svc.store.db, run.svc.credentials, run.svc.config);
    expect((await get(outsider, attachmentPath)).status).toBe(404);
    expect((await fetch(app(attachmentPath))).status).toBe(404);
    const inbox = textOf(await (await get(fam, `/inbox/${fam.lovedOneId}`)).text());
    expect(inbox).toContain('résultats.pdf');
    expect(inbox).not.toMatch(INTERNAL_ID);

    // An appointment and a task, with their history rows.
    const plans = new PlansStore(run.svc.store.db, Date.now, run.svc.timelines);
    const where = { workspaceId: fam.workspaceId, lovedOneId: fam.lovedOneId };
    const by = { uid: fam.uid, name: 'Rose', via: 'app' as const };
    const soon = new Date(Date.now() + 86_400_000);
    await plans.addAppointment(where, { title: 'Dentist', start: soon, end: new Date(soon.getTime() + 3_600_000), timeZone: 'UTC' }, by);
    await plans.addTask(where, { title: 'Groceries', due: soon, timeZone: 'UTC' }, by);

    const confirm = await get(fam, `/workspace/loved-ones/${fam.lovedOneId}/remove`);
    const words = textOf(await confirm.text());
    expect(words).toContain('their appointments and shared tasks, with their history');
    // Two agency events, and the appointment filed on the timeline.
    expect(words).toContain('3 entries on their timeline');
    expect(words).toContain('1 message in their inbox');
    expect(words).toContain('1 link to a home-care agency');
    // From another site, or by someone else, nothing is removed.
    expect((await post(fam, `/workspace/loved-ones/${fam.lovedOneId}/remove`, {}, { origin: 'https://evil.example' })).status).toBe(403);
    expect((await post(outsider, `/workspace/loved-ones/${fam.lovedOneId}/remove`, {})).status).toBe(404);
    expect(await careEvents(run.svc.store.db).countDocuments({ lovedOneId: fam.lovedOneId })).toBe(3);

    expect((await post(fam, `/workspace/loved-ones/${fam.lovedOneId}/remove`, {})).status).toBe(303);
    expect(await run.svc.store.db.collection('loved_ones').countDocuments({ _id: fam.lovedOneId as never })).toBe(0);
    expect(await careEvents(run.svc.store.db).countDocuments({ lovedOneId: fam.lovedOneId })).toBe(0);
    expect(await run.svc.store.db.collection('inbox_items').countDocuments({ lovedOneId: fam.lovedOneId })).toBe(0);
    for (const kept of ['plan_appointments', 'plan_tasks'])
      expect(await run.svc.store.db.collection(kept).countDocuments({ lovedOneId: fam.lovedOneId }), kept).toBe(0);
    expect(await run.svc.store.db.collection('plan_changes').countDocuments({ workspaceId: fam.workspaceId })).toBe(0);
    expect((await get(fam, attachmentPath)).status).toBe(404);
    expect(await new FamilyShares(run.svc.store.db, run.svc.credentials).binding(partner.institutionId, 'rose-1')).toBeNull();
    expect(await new FamilyShares(run.svc.store.db, run.svc.credentials).countLinksTo(fam.workspaceId, fam.lovedOneId)).toBe(0);
  });

  it('when the JSON API is asked for a second loved one of the same name, then it answers 409 unless allowDuplicate is sent', async () => {
    const famApi = await family(run.svc.store.db, run.svc.credentials, run.svc.config);
    const call = (body: unknown) =>
      fetch(app('/api/workspace/loved-ones'), {
        method: 'POST',
        headers: { cookie: famApi.cookie, origin: origin(), 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const dup = await call({ firstName: 'ROSE', lastName: ' test ' });
    expect(dup.status).toBe(409);
    expect(((await dup.json()) as { message: string }).message).toBe('Rose Test is already in this workspace');
    expect((await call({ firstName: 'Rose', lastName: 'Test', allowDuplicate: true })).status).toBe(201);
  });

  it('when a key is minted by a form post, then it waits on the server for one page, never in the URL', async () => {
    const fam2 = await family(run.svc.store.db, run.svc.credentials, run.svc.config);
    const minted = await post(fam2, '/settings/keys', { name: 'Phone' });
    expect(minted.status).toBe(303);
    expect(minted.headers.get('location')).toBe('/settings/connect');
    const flash = minted.headers.get('set-cookie')!.split(';')[0]!;
    const first = await (await get({ cookie: `${fam2.cookie}; ${flash}` }, '/settings/connect')).text();
    expect(first).toMatch(/sk-svc-[0-9a-f]{64}/);
    // Copy buttons are hidden until the script shows them: without script the text is there to select.
    expect(first).toMatch(/<button type="button" class="secondary" data-copy="config-zed" hidden/);
    const again = await (await get({ cookie: `${fam2.cookie}; ${flash}` }, '/settings/connect')).text();
    expect(again).not.toMatch(/sk-svc-[0-9a-f]{64}/);
    expect(again).toContain('PASTE-YOUR-KEY-HERE');
    // Another person holding the cookie sees nothing either.
    const other = await family(run.svc.store.db, run.svc.credentials, run.svc.config);
    const third = await post(fam2, '/settings/keys', { name: 'Tablet' });
    const flash3 = third.headers.get('set-cookie')!.split(';')[0]!;
    expect(await (await get({ cookie: `${other.cookie}; ${flash3}` }, '/settings/connect')).text()).not.toMatch(/sk-svc-[0-9a-f]{64}/);
    const keys = (await (await get(fam2, '/api/keys')).json()) as { keys: unknown[] };
    expect(keys.keys).toHaveLength(2);
  });

  it('when a form is wrong, then the page says what to do in plain words', async () => {
    const fam3 = await family(run.svc.store.db, run.svc.credentials, run.svc.config);
    const empty = await post(fam3, '/workspace/loved-ones', { firstName: ' ', lastName: '' });
    expect(empty.status).toBe(400);
    const text = textOf(await empty.text());
    expect(text).toContain('Please enter the first name.');
    expect(text).toContain('Please enter the last name.');
    expect(text).not.toMatch(/is required|firstName/);
    const long = textOf(await (await post(fam3, '/workspace/name', { familyName: 'x'.repeat(121) })).text());
    expect(long).toContain('The family name can be at most 120 characters.');
    const zone = await post(fam3, '/settings/time-zone', { timeZone: 'Mars/Olympus' });
    expect(zone.status).toBe(400);
    expect(textOf(await zone.text())).toContain('Please choose a time zone from the list.');
  });

  it('when a stranger opens the app or a sandbox claim link, then the page says what carecircle is, which workspace, and which email claims it', async () => {
    const signedOut = textOf(await (await fetch(app('/'))).text());
    expect(signedOut).toContain('carecircle helps a family look after someone they love');
    const sandbox = await new SandboxService(run.svc.store.db, run.svc.credentials, run.svc.config.inboxDomain, run.svc.timelines).create({
      lovedOneFirstName: 'Eleanor',
      lovedOneLastName: 'Vance',
      primaryCaregiverEmail: 'claire.vance@example.com',
      familyMemberEmails: [],
    });
    const claim = textOf(await (await fetch(app(`/onboarding/claim?workspace=${sandbox.workspace._id}`))).text());
    expect(claim).toContain('“The Vance Family (sandbox)”');
    expect(claim).toContain('signing in with claire.vance@example.com');
    expect(claim).not.toMatch(INTERNAL_ID);
  });

  it('when a signed-in person opens each app page, then no internal id is on screen', async () => {
    const fam4 = await family(run.svc.store.db, run.svc.credentials, run.svc.config);
    await post(fam4, '/settings/keys', { name: 'Desk' });
    const lo = fam4.lovedOneId;
    for (const path of [
      '/',
      '/settings',
      '/settings/connect',
      '/workspace/name',
      `/workspace/loved-ones/${lo}/edit`,
      `/workspace/loved-ones/${lo}/remove`,
      `/care/${lo}`,
      `/care/${lo}/medications`,
      `/care/${lo}/vitals`,
      `/inbox/${lo}`,
    ]) {
      const res = await get(fam4, path);
      expect(res.status, path).toBe(200);
      const visible = textOf((await res.text()).replace(/<head>[\s\S]*<\/head>/, ''));
      expect(visible, path).not.toMatch(INTERNAL_ID);
    }
  });
});
