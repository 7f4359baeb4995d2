// Settings → MCP API keys in real headless Chromium, and the key used by the MCP SDK client.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { recentActivity } from '../src/workspace/activity.js';
import { createWorkspaceWithBrowser, newPage, screenshot, useServiceWithBrowser } from './harness/browser.js';

const run = useServiceWithBrowser({ nats: true });
const app = (path: string) => `${run.svc.config.appUrl}${path}`;

async function connect(apiKey: string): Promise<Client> {
  const client = new Client({ name: 'settings-test', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${run.svc.urls.app}/api/mcp`), { requestInit: { headers: { authorization: `Bearer ${apiKey}` } } }),
  );
  return client;
}

/** On Settings, signed in: mint a key by its form and read the plaintext the next page shows once. */
async function mintKey(page: Page, name: string): Promise<string> {
  await page.goto(app('/settings'));
  await page.fill('#key-name', name);
  await page.click('form[action="/settings/keys"] button');
  return (await page.textContent('#new-key'))!.trim();
}

describe('settings page - MCP API keys in a browser', () => {
  it('when a caregiver signs in, creates a workspace and mints a key, then the key is shown once and afterwards listed by its last four characters', async () => {
    const { page, errors } = await newPage(run.browser);
    try {
      await page.goto(app('/settings'));
      await Promise.all([page.waitForURL(/\/dev\/login/), page.click('#signin')]);
      await screenshot(page, 'dev-sign-in');
      await page.fill('#email', 'browser@example.com');
      await page.fill('#name', 'Bea Browser');
      await Promise.all([page.waitForURL(/\/settings$/), page.click('button[type=submit]')]);
      expect(await page.textContent('header')).toContain('browser@example.com');

      await page.goto(app('/onboarding'));
      await page.fill('#familyName', 'The Browser Family');
      await page.fill('#firstName', 'Grace');
      await page.fill('#lastName', 'Browser');
      await Promise.all([page.waitForURL(app('/')), page.click('main button[type=submit]')]);
      expect(await page.textContent('main')).toContain('Grace Browser');
      await screenshot(page, 'workspace');

      const apiKey = await mintKey(page, 'Desktop assistant');
      expect(apiKey).toMatch(/^sk-svc-[0-9a-f]{64}$/);
      await screenshot(page, 'settings-new-key');

      // Shown once: a fresh load lists the key by its last four characters only.
      await page.goto(app('/settings'));
      expect(await page.locator('#new-key').count()).toBe(0);
      expect(await page.content()).not.toContain(apiKey.slice(7));
      expect(await page.textContent('#keys')).toContain(`sk-svc-…${apiKey.slice(-4)}`);
      expect(errors, errors.join('\n')).toEqual([]);
    } finally {
      await page.context().close();
    }
  });

  it('when an assistant uses a key and the caregiver revokes it, then Settings names the key in its activity, asks before revoking, and the key stops working', async () => {
    const { page, errors } = await newPage(run.browser);
    const client = { current: null as Client | null };
    try {
      const email = 'revoker@example.com';
      await createWorkspaceWithBrowser(page, run.svc.config.appUrl, email, { familyName: 'The Revoker Family', firstName: 'Hal', lastName: 'Revoker' });
      const apiKey = await mintKey(page, 'Desktop assistant');
      client.current = await connect(apiKey);
      const loved = await client.current.callTool({ name: 'list_loved_ones', arguments: {} });
      expect(JSON.stringify(loved.content)).toContain('Hal Revoker');

      // Audit rows are written off the reply path: wait for the store to hold both, then load Settings once.
      const uid = (await run.svc.store.db.collection<{ _id: string; email: string }>('users').findOne({ email }))!._id;
      const stored = async () => (await recentActivity(run.svc.timelines, uid, 50)).map((row) => row.tool ?? row.method);
      await expect.poll(stored, { timeout: 15_000 }).toEqual(expect.arrayContaining(['initialize', 'list_loved_ones']));
      await page.goto(app('/settings'));
      // In plain words, naming the key; the protocol's own notifications are not activity.
      const activity = (await page.textContent('#activity'))!;
      expect(activity).toContain('Listed loved ones');
      expect(activity).toContain('Connected');
      expect(activity).toContain(`API key ‘Desktop assistant’ (…${apiKey.slice(-4)})`);
      expect(activity).not.toMatch(/tools\/call|notifications\/initialized|api-key/);

      // Revoking asks first, naming the key on both buttons.
      const label = `Revoke key ‘Desktop assistant’ (…${apiKey.slice(-4)})`;
      await Promise.all([page.waitForURL(/\/revoke$/), page.click(`#keys a:has-text("${label}")`)]);
      expect(await page.textContent('#confirm button')).toContain(label);
      await screenshot(page, 'settings-revoke-confirm');
      await client.current.callTool({ name: 'ping', arguments: {} }); // not yet revoked
      await Promise.all([page.waitForURL(/\/settings(#mcp-api-keys)?$/), page.click('#confirm button')]);
      expect(await page.textContent('#keys')).toContain('revoked');
      await screenshot(page, 'settings-revoked');

      await expect(client.current.callTool({ name: 'ping', arguments: {} })).rejects.toThrow(/403|revoked/i);
      expect(errors, errors.join('\n')).toEqual([]);
    } finally {
      await client.current?.close().catch(() => undefined);
      await page.context().close();
    }
  });
});
