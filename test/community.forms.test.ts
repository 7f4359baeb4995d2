// The community for people, in headless Chromium: a visitor signs in from a channel page, chooses
// the name others see, joins, starts a thread, replies and leaves through plain forms, under the
// community API's rules; refused forms come back with what was typed and the reason by the field.
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { newPage, screenshot, useServiceWithBrowser } from './harness/browser.js';
import { COMMUNITY_COLLECTIONS } from '../src/community/store.js';
import { devIdToken, signIn } from './harness/identity.js';

const CHANNEL = 'long-distance-caregiving';
const run = useServiceWithBrowser({ nats: true });

const site = () => run.svc.config.siteUrl;
/** A channel page as the signed-in person gets it, as text without markup. */
const channelText = async (cookie: string) => (await (await fetch(`${site()}/channels/${CHANNEL}`, { headers: { cookie } })).text()).replace(/<[^>]+>/g, '');
const threadsViaApi = async () =>
  (await (await fetch(`${site()}/api/community?channel=${CHANNEL}`)).json()) as {
    memberCount: number;
    threads: { id: string; title: string; authorName: string; commentCount: number }[];
  };

async function signInFromChannel(page: Page, email: string, name: string): Promise<void> {
  await page.goto(`${site()}/channels/${CHANNEL}`);
  await page.getByRole('link', { name: 'Sign in', exact: true }).click();
  await page.waitForURL(/\/dev\/login/);
  await page.fill('#email', email);
  await page.fill('#name', name);
  await page.click('button[type=submit]');
  await page.waitForURL((url) => url.href.startsWith(`${site()}/channels/${CHANNEL}`));
}

describe('community forms in a browser', () => {
  it('when a person signs in on a channel page, then they choose a name once, join, start a thread, reply and leave, and others see only the chosen name', async () => {
    const { page, errors } = await newPage(run.browser);
    await signInFromChannel(page, 'forms@example.com', 'Marisol Sign-In-Name');
    await screenshot(page, 'community-join');

    // Joining asks for the name shown to others, empty rather than prefilled with the sign-in name.
    const nameInput = page.getByLabel('Name shown to others');
    expect(await nameInput.inputValue()).toBe('');
    await nameInput.fill('forms@example.com');
    await page.getByRole('button', { name: 'Join this channel' }).click();
    expect(await page.locator('.field-error').innerText()).toContain('rather than an email address');
    await page.getByLabel('Name shown to others').fill('Daughter in Ohio');
    await Promise.all([page.waitForURL(/#take-part$/), page.getByRole('button', { name: 'Join this channel' }).click()]);
    expect(await page.locator('main').innerText()).toContain('Others see you as Daughter in Ohio');
    expect(await page.getByLabel('Name shown to others').count()).toBe(0);

    // A blank title (spaces pass the browser's own check) is refused by the field, and the body typed is kept.
    await page.getByLabel('Title').fill('   ');
    await page.getByLabel('What would you like to ask or share?').fill('How do you keep track of calls with the pharmacy?');
    await page.getByRole('button', { name: 'Start thread' }).click();
    expect(await page.locator('.field-error').innerText()).toContain('Please give your thread a title');
    expect(await page.getByLabel('What would you like to ask or share?').inputValue()).toBe('How do you keep track of calls with the pharmacy?');
    await screenshot(page, 'community-thread-error');

    await page.getByLabel('Title').fill('Pharmacy calls from far away');
    await Promise.all([page.waitForURL(/\/threads\//), page.getByRole('button', { name: 'Start thread' }).click()]);
    expect(await page.locator('h1').innerText()).toBe('Pharmacy calls from far away');
    await page.getByLabel('Your reply').fill('Answering my own question: a shared notebook <b>works</b>.');
    await Promise.all([page.waitForURL(/#comments$/), page.getByRole('button', { name: 'Post reply' }).click()]);
    const main = await page.locator('main').innerText();
    expect(main).toContain('a shared notebook <b>works</b>.');
    expect(main).toContain('Comments (1)');
    await screenshot(page, 'community-thread');

    const listed = (await threadsViaApi()).threads.find((t) => t.title === 'Pharmacy calls from far away');
    expect(listed).toMatchObject({ authorName: 'Daughter in Ohio', commentCount: 1 });
    expect(JSON.stringify(await threadsViaApi())).not.toContain('Marisol');

    await page.goto(`${site()}/channels/${CHANNEL}`);
    const before = (await threadsViaApi()).memberCount;
    await page.getByRole('button', { name: 'Leave this channel' }).click();
    await page.waitForURL(`${site()}/channels/${CHANNEL}`);
    expect((await threadsViaApi()).memberCount).toBe(before - 1);
    expect(await page.getByRole('button', { name: 'Join this channel' }).count()).toBe(1);
    // The two refused forms answered 400, which Chromium notes; nothing else went wrong.
    expect(errors).toEqual([expect.stringContaining('status of 400'), expect.stringContaining('status of 400')]);
    await page.context().close();
  });

  it('when the API posts for a person who chose a name on the site, then the chosen name is shown', async () => {
    const { page } = await newPage(run.browser);
    await signInFromChannel(page, 'both@example.com', 'Both Ways Real Name');
    await page.getByLabel('Name shown to others').fill('Son in Texas');
    await Promise.all([page.waitForURL(/#take-part$/), page.getByRole('button', { name: 'Join this channel' }).click()]);
    await page.context().close();
    const token = await devIdToken(run.svc, 'both@example.com', 'Both Ways Real Name');
    const res = await fetch(`${site()}/api/community`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ channel: CHANNEL, action: 'thread', title: 'From my assistant', body: 'Posted through the API.' }),
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { thread: { authorName: string } }).thread.authorName).toBe('Son in Texas');
  });

  it('when the name typed is an email address in disguise, then the form refuses each and asks for a name', async () => {
    const cookie = await signIn(run.svc, 'disguise@example.com', 'Disguise Sign-In-Name');
    const join = (displayName: string) =>
      fetch(`${site()}/channels/${CHANNEL}/actions`, {
        method: 'POST',
        redirect: 'manual',
        headers: { cookie, origin: new URL(site()).origin, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ action: 'join', displayName }),
      });
    for (const name of ['ana＠example.com', 'ana @ example.com', 'ana@example．com', 'ana@localhost', 'ana﹫example.com']) {
      const res = await join(name);
      expect(res.status, name).toBe(400);
      expect(await res.text(), name).toContain('rather than an email address');
    }
    const chosen = await join('Ｎｅｐｈｅｗ in Maine');
    expect(chosen.status).toBe(303);
    expect(await channelText(cookie)).toContain('Others see you as Nephew in Maine');
  });

  it('when a stored chosen name looks like an email address, then it is never shown and the person is asked to choose again', async () => {
    const cookie = await signIn(run.svc, 'legacy-name@example.com');
    const me = (await (await fetch(`${run.svc.urls.app}/api/auth/me`, { headers: { cookie } })).json()) as { uid: string };
    await run.svc.store.db
      .collection<{ _id: string; displayName: string; chosenAt: Date }>(COMMUNITY_COLLECTIONS.profiles)
      .insertOne({ _id: me.uid, displayName: 'legacy＠example.com', chosenAt: new Date() });
    const before = await channelText(cookie);
    expect(before).not.toContain('legacy＠example.com');
    expect(before).toContain('Name shown to others');
    const res = await fetch(`${site()}/channels/${CHANNEL}/actions`, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie, origin: new URL(site()).origin, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ action: 'join', displayName: 'Granddaughter' }),
    });
    expect(res.status).toBe(303);
    expect(await channelText(cookie)).toContain('Others see you as Granddaughter');
  });

  it('when a form is posted from another origin or without a sign-in, then nothing is written', async () => {
    const before = await threadsViaApi();
    const form = new URLSearchParams({ action: 'thread', title: 'Forged', body: 'Forged body', displayName: 'Forger' });
    const foreign = await fetch(`${site()}/channels/${CHANNEL}/actions`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: 'https://evil.example' },
      body: form,
      redirect: 'manual',
    });
    expect(foreign.status).toBe(403);
    const signedOut = await fetch(`${site()}/channels/${CHANNEL}/actions`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: new URL(site()).origin },
      body: form,
      redirect: 'manual',
    });
    expect(signedOut.status).toBe(401);
    const html = await signedOut.text();
    expect(html).toContain('Your sign-in has ended');
    expect(html).toContain('Forged body');
    expect((await threadsViaApi()).threads.length).toBe(before.threads.length);
  });
});
