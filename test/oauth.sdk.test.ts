// The official MCP SDK client's OAuth support against the workspace endpoint: from a bare 401 it
// follows WWW-Authenticate to the resource metadata, registers, sends the caregiver to consent
// (clicked in real headless Chromium), exchanges the code and calls tools.
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, newPage } from './harness/browser.js';
import { caregiverWithKey } from './harness/identity.js';
import { startTestService, type TestService } from './harness/service.js';

let svc: TestService;
let browser: Browser;
let callback: Server;
let redirectUrl: string;

beforeAll(async () => {
  callback = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('You can close this window.'));
  callback.listen(0, '127.0.0.1');
  await once(callback, 'listening');
  redirectUrl = `http://127.0.0.1:${(callback.address() as AddressInfo).port}/oauth/callback`;
  [svc, browser] = await Promise.all([startTestService({}), launchBrowser()]);
});
afterAll(async () => {
  await browser?.close();
  await svc?.stop();
  await new Promise((resolve) => callback?.close(resolve));
});

/** What a desktop MCP client keeps between runs, kept in memory. */
class MemoryOAuthProvider implements OAuthClientProvider {
  information?: OAuthClientInformationMixed;
  saved?: OAuthTokens;
  verifier?: string;
  authorizationUrl?: URL;
  constructor(readonly redirectUrl: string) {}
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'SDK Assistant',
      redirect_uris: [this.redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }
  clientInformation() {
    return this.information;
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.information = info;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier!;
  }
}

describe('oauth - the MCP SDK client', () => {
  it('when the SDK meets a bare 401, then it discovers, registers, gets consent in a browser and calls tools with the token', async () => {
    const email = 'sdk@example.com';
    await caregiverWithKey(svc, email, { firstName: 'Ada', lastName: 'Sdk' });
    const mcpUrl = new URL(`${svc.config.appUrl}/api/mcp`);
    const provider = new MemoryOAuthProvider(redirectUrl);

    const first = new Client({ name: 'sdk-oauth-test', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider });
    await expect(first.connect(transport)).rejects.toBeInstanceOf(UnauthorizedError);
    expect(provider.information?.client_id).toBeTruthy();
    const authorizationUrl = provider.authorizationUrl!;
    expect(authorizationUrl.origin).toBe(new URL(svc.config.authUrl).origin);
    expect(authorizationUrl.searchParams.get('code_challenge_method')).toBe('S256');
    expect(authorizationUrl.searchParams.get('resource')).toBe(mcpUrl.href);
    expect(authorizationUrl.searchParams.get('scope')).toBe('profile:read care_circle:read care_circle:write');

    const { page, errors } = await newPage(browser);
    await page.goto(authorizationUrl.href);
    await page.waitForURL(/\/dev\/login/);
    await page.fill('#email', email);
    await page.click('button[type=submit]');
    await page.waitForSelector('#allow');
    expect(await page.textContent('#client-name')).toBe('SDK Assistant');
    await page.check('#scope-profile-read');
    await page.check('#scope-care-circle-read');
    await Promise.all([page.waitForURL((u) => u.href.startsWith(redirectUrl)), page.click('#allow')]);
    const code = new URL(page.url()).searchParams.get('code')!;
    expect(errors, errors.join('\n')).toEqual([]);
    await page.context().close();

    await transport.finishAuth(code);
    expect(provider.saved?.token_type).toBe('Bearer');
    expect(provider.saved?.refresh_token).toBeTruthy();

    const client = new Client({ name: 'sdk-oauth-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider }));
    const tools = await client.listTools();
    expect(tools.tools.map((t) => t.name)).toEqual(expect.arrayContaining(['ping', 'get_user_profile', 'list_loved_ones', 'list_care_events']));
    const ping = await client.callTool({ name: 'ping', arguments: {} });
    expect(JSON.stringify(ping.content)).toContain('via=oauth');
    const loved = await client.callTool({ name: 'list_loved_ones', arguments: {} });
    expect(JSON.stringify(loved.content)).toContain('Ada Sdk');
    await client.close();
  });
});
