// Settings → MCP API keys in real headless Chromium, and the key used by the MCP SDK client.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { describe, expect, it } from 'vitest';
import { newPage, screenshot, useServiceWithBrowser } from './harness/browser.js';

const run = useServiceWithBrowser({ nats: true });

async function connect(apiKey: string): Promise<Client> {
  const client = new Client({ name: 'settings-test', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${run.svc.urls.app}/api/mcp`), { requestInit: { headers: { authorization: `Bearer ${apiKey}` } } }),
  );
  return client;
}

describe('settings page - MCP API keys in a browser', () => {
  it('when a caregiver signs in, creates a workspace and mints a key, then the key works until revoked', async () => {
    const { page, errors } = await newPage(run.browser);
    await page.goto(`${run.svc.config.appUrl}/settings`);
    await page.click('#signin');
    await page.waitForURL(/\/dev\/login/);
    await screenshot(page, 'dev-sign-in');
    await page.fill('#email', 'browser@example.com');
    await page.fill('#name', 'Bea Browser');
    await page.click('button[type=submit]');
    await page.waitForURL(/\/settings$/);
    expect(await page.textContent('header')).toContain('browser@example.com');

    await page.goto(`${run.svc.config.appUrl}/onboarding`);
    await page.fill('#familyName', 'The Browser Family');
    await page.fill('#firstName', 'Grace');
    await page.fill('#lastName', 'Browser');
    await Promise.all([page.waitForURL(`${run.svc.config.appUrl}/`), page.click('main button[type=submit]')]);
    expect(await page.textContent('main')).toContain('Grace Browser');
    await screenshot(page, 'workspace');

    await page.goto(`${run.svc.config.appUrl}/settings`);
    await page.fill('#key-name', 'Desktop assistant');
    await page.click('form[action="/settings/keys"] button');
    const apiKey = (await page.textContent('#new-key'))!.trim();
    expect(apiKey).toMatch(/^sk-svc-[0-9a-f]{64}$/);
    await screenshot(page, 'settings-new-key');

    // Shown once: a fresh load lists the key by its last four characters only.
    await page.goto(`${run.svc.config.appUrl}/settings`);
    expect(await page.locator('#new-key').count()).toBe(0);
    expect(await page.content()).not.toContain(apiKey.slice(7));
    expect(await page.textContent('#keys')).toContain(`sk-svc-…${apiKey.slice(-4)}`);

    const client = await connect(apiKey);
    const loved = await client.callTool({ name: 'list_loved_ones', arguments: {} });
    expect(JSON.stringify(loved.content)).toContain('Grace Browser');

    // Audit rows are written off the reply path: a reload shows them shortly after.
    await expect
      .poll(
        async () => {
          await page.reload();
          return page.textContent('#activity');
        },
        { timeout: 5_000 },
      )
      .toContain('Listed loved ones');
    // In plain words, naming the key; the protocol's own notifications are not activity.
    const activity = (await page.textContent('#activity'))!;
    expect(activity).toContain('Connected');
    expect(activity).toContain(`API key ‘Desktop assistant’ (…${apiKey.slice(-4)})`);
    expect(activity).not.toMatch(/tools\/call|notifications\/initialized|api-key/);
    // Revoking asks first, naming the key on both buttons.
    const label = `Revoke key ‘Desktop assistant’ (…${apiKey.slice(-4)})`;
    await Promise.all([page.waitForURL(/\/revoke$/), page.click(`#keys a:has-text("${label}")`)]);
    expect(await page.textContent('#confirm button')).toContain(label);
    await screenshot(page, 'settings-revoke-confirm');
    await client.callTool({ name: 'ping', arguments: {} }); // not yet revoked
    await Promise.all([page.waitForURL(/\/settings(#mcp-api-keys)?$/), page.click('#confirm button')]);
    expect(await page.textContent('#keys')).toContain('revoked');
    await screenshot(page, 'settings-revoked');

    await expect(client.callTool({ name: 'ping', arguments: {} })).rejects.toThrow(/403|revoked/i);
    await client.close().catch(() => undefined);
    expect(errors, errors.join('\n')).toEqual([]);
  });
});
