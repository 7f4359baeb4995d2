// OAuth 2.1 end to end: oauth4webapi as the client, consent clicked in real headless Chromium,
// tool calls allowed and refused by scope, refresh rotation, reuse detection, revocation, and
// Settings → Connected apps.
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as oauth from 'oauth4webapi';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, newPage, screenshot } from './harness/browser.js';
import { appCall, caregiverWithKey } from './harness/identity.js';
import { startTestService, type TestService } from './harness/service.js';
import { authorizationRequest, authorizeOverHttp, callTool, connectedApp, discover, insecure, Jar, register, type Registered } from './oauth.fixtures.js';

let svc: TestService;
let browser: Browser;
const resource = () => `${svc.config.appUrl}/api/mcp`;

beforeAll(async () => {
  [svc, browser] = await Promise.all([startTestService({ nats: true }), launchBrowser()]);
});
afterAll(async () => {
  await browser?.close();
  await svc?.stop();
});

/** The app's redirect URI: a real loopback listener, as a desktop MCP client runs one. */
async function callbackServer(): Promise<{ redirectUri: string; close: () => Promise<void> }> {
  const server = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('back in the app'));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return { redirectUri: `http://127.0.0.1:${port}/callback`, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

async function signInAtDevIdp(page: Page, email: string) {
  await page.waitForURL(/\/dev\/login/);
  await page.fill('#email', email);
  await page.click('button[type=submit]');
}

const refresh = (as: oauth.AuthorizationServer, reg: Registered, token: string, scope?: string) =>
  oauth.refreshTokenGrantRequest(as, reg.client, oauth.None(), token, {
    additionalParameters: { resource: resource(), ...(scope ? { scope } : {}) },
    ...insecure,
  });

describe('oauth - the full flow with a real browser', () => {
  it('when a caregiver approves only profile:read in Chromium, then the app gets exactly that scope, refreshes by rotation, and a reused refresh token revokes the grant', async () => {
    const email = 'flow@example.com';
    const { cookie } = await caregiverWithKey(svc, email);

    // Discovery as an MCP client does it: protected-resource metadata, then the authorization server.
    const { as, resource: prm } = await discover(svc);
    expect(prm.resource).toBe(resource());
    expect(prm.scopes_supported).toEqual(['profile:read', 'care_circle:read', 'care_circle:write']);
    expect(as.issuer).toBe(svc.config.authUrl);
    expect(as).toMatchObject({
      authorization_endpoint: `${svc.config.authUrl}/oauth/authorize`,
      token_endpoint: `${svc.config.authUrl}/oauth/token`,
      registration_endpoint: `${svc.config.authUrl}/oauth/register`,
      revocation_endpoint: `${svc.config.authUrl}/oauth/revoke`,
      jwks_uri: `${svc.config.authUrl}/.well-known/jwks.json`,
      code_challenge_methods_supported: ['S256'],
      response_types_supported: ['code'],
      authorization_response_iss_parameter_supported: true,
      token_endpoint_auth_methods_supported: ['none'],
    });
    expect(as.grant_types_supported).toEqual(expect.arrayContaining(['authorization_code', 'refresh_token']));

    const app = await callbackServer();
    const registration = await register(svc, { client_name: 'Browser Assistant' }, app.redirectUri);
    expect(registration.status).toBe(201);
    expect(registration.body).toMatchObject({ token_endpoint_auth_method: 'none', application_type: 'native' });
    expect(registration.body.client_secret).toBeUndefined();
    const reg = registration.registered!;

    const req = await authorizationRequest(as, reg, { resource: resource() });
    const { page, errors } = await newPage(browser);
    await page.goto(req.url.href);
    await signInAtDevIdp(page, email);
    await page.waitForSelector('#allow');
    expect(await page.textContent('#client-name')).toBe('Browser Assistant');
    // Nothing is ticked for the caregiver: each scope is an explicit choice.
    expect(await page.isChecked('#scope-profile-read')).toBe(false);
    expect(await page.isChecked('#scope-care-circle-read')).toBe(false);
    expect(await page.textContent('main')).toContain('loved ones in your workspace');
    await page.check('#scope-profile-read');
    await screenshot(page, 'oauth-consent');
    await Promise.all([page.waitForURL((u) => u.href.startsWith(reg.redirectUri)), page.click('#allow')]);
    const callback = new URL(page.url());
    expect(errors, errors.join('\n')).toEqual([]);

    // RFC 9207: the issuer comes back with the code; oauth4webapi checks it and the state.
    expect(callback.searchParams.get('iss')).toBe(svc.config.authUrl);
    const params = oauth.validateAuthResponse(as, reg.client, callback, req.state);
    const tokenRes = await oauth.authorizationCodeGrantRequest(as, reg.client, oauth.None(), params, reg.redirectUri, req.verifier, {
      additionalParameters: { resource: resource() },
      ...insecure,
    });
    expect(((await tokenRes.clone().json()) as { token_type: string }).token_type).toBe('Bearer');
    const tokens = await oauth.processAuthorizationCodeResponse(as, reg.client, tokenRes);
    expect(tokens.scope).toBe('profile:read');
    expect(tokens.expires_in).toBe(3600);
    expect(tokens.refresh_token).toBeTruthy();

    // An RFC 9068 access token for the workspace endpoint, verifiable with the published keys.
    const claims = await oauth.validateJwtAccessToken(
      as,
      new Request(resource(), { headers: { authorization: `Bearer ${tokens.access_token}` } }),
      resource(),
      insecure,
    );
    expect(claims).toMatchObject({ iss: svc.config.authUrl, aud: resource(), client_id: reg.client.client_id, scope: 'profile:read' });

    // Allowed and refused by scope.
    const ping = await callTool(svc, tokens.access_token, 'ping');
    expect(ping.status).toBe(200);
    expect(ping.json.result.content[0].text).toMatch(/via=oauth$/);
    const profile = await callTool(svc, tokens.access_token, 'get_user_profile');
    expect(profile.status).toBe(200);
    expect(profile.json.result.content[0].text).toContain(email);
    for (const tool of ['list_loved_ones', 'list_care_events']) {
      const refused = await callTool(svc, tokens.access_token, tool);
      expect(refused.status).toBe(403);
      expect(refused.wwwAuthenticate).toContain('error="insufficient_scope", scope="care_circle:read"');
      expect(refused.json.error.message).toContain('care_circle:read');
    }
    // Audit rows are written off the reply path: they show shortly after.
    await expect
      .poll(async () => (await appCall(svc, cookie, 'GET', '/api/activity')).json.activity.filter((a: { via: string }) => a.via === 'oauth').length, {
        timeout: 5_000,
      })
      .toBeGreaterThanOrEqual(4);

    // A refresh rotates the refresh token and never widens the scope.
    const widened = await refresh(as, reg, tokens.refresh_token!, 'profile:read care_circle:read');
    expect(widened.status).toBe(400);
    expect(((await widened.json()) as { error: string }).error).toBe('invalid_scope');
    const second = await oauth.processRefreshTokenResponse(as, reg.client, await refresh(as, reg, tokens.refresh_token!));
    expect(second.refresh_token).toBeTruthy();
    expect(second.refresh_token).not.toBe(tokens.refresh_token);
    expect(second.scope).toBe('profile:read');
    expect((await callTool(svc, second.access_token, 'get_user_profile')).status).toBe(200);
    expect((await callTool(svc, second.access_token, 'list_loved_ones')).status).toBe(403);

    // Reusing the spent refresh token is theft or a bug: the whole grant goes.
    const reused = await refresh(as, reg, tokens.refresh_token!);
    expect(reused.status).toBe(400);
    expect(((await reused.json()) as { error: string }).error).toBe('invalid_grant');
    const afterReuse = await refresh(as, reg, second.refresh_token!);
    expect(((await afterReuse.json()) as { error: string }).error).toBe('invalid_grant');
    const revoked = await callTool(svc, second.access_token, 'ping');
    expect(revoked.status).toBe(401);
    expect(revoked.wwwAuthenticate).toContain(`resource_metadata="${svc.config.appUrl}/.well-known/oauth-protected-resource"`);
    expect(revoked.wwwAuthenticate).toContain('error="invalid_token"');
    await page.context().close();
    await app.close();
  });

  it('when the caregiver denies, then the app is sent back with access_denied, its state and the issuer', async () => {
    const { as } = await discover(svc);
    const app = await callbackServer();
    const reg = (await register(svc, {}, app.redirectUri)).registered!;
    const req = await authorizationRequest(as, reg, { resource: resource() });
    const { page, errors } = await newPage(browser);
    await page.goto(req.url.href);
    await signInAtDevIdp(page, 'deny@example.com');
    await page.waitForSelector('#deny');
    await Promise.all([page.waitForURL((u) => u.href.startsWith(reg.redirectUri)), page.click('#deny')]);
    const back = new URL(page.url());
    expect(back.searchParams.get('error')).toBe('access_denied');
    expect(back.searchParams.get('state')).toBe(req.state);
    expect(back.searchParams.get('iss')).toBe(svc.config.authUrl);
    expect(errors, errors.join('\n')).toEqual([]);
    await page.context().close();
    await app.close();
  });

  it('when the app revokes its refresh token (RFC 7009), then the grant goes with it and the access token gets 401', async () => {
    const { as, reg, tokens } = await connectedApp(svc, 'revoke@example.com', ['care_circle:read']);
    expect((await callTool(svc, tokens.access_token, 'list_loved_ones')).status).toBe(200);
    await oauth.processRevocationResponse(await oauth.revocationRequest(as, reg.client, oauth.None(), tokens.refresh_token!, insecure));
    const after = await callTool(svc, tokens.access_token, 'list_loved_ones');
    expect(after.status).toBe(401);
    expect(after.json.error.code).toBe(-32001);
    expect(((await (await refresh(as, reg, tokens.refresh_token!)).json()) as { error: string }).error).toBe('invalid_grant');
  });

  it('when a caregiver opens Settings, then Connected apps lists the app with its scopes and last use, and Revoke ends its access', async () => {
    const email = 'apps@example.com';
    await caregiverWithKey(svc, email);
    const { as, reg, tokens } = await connectedApp(svc, email, ['care_circle:read']);
    expect((await callTool(svc, tokens.access_token, 'list_loved_ones')).status).toBe(200);

    const { page, errors } = await newPage(browser);
    await page.goto(`${svc.config.appUrl}/settings`);
    await page.click('#signin');
    await signInAtDevIdp(page, email);
    await page.waitForURL(/\/settings$/);
    const row = page.locator('#connected-apps-list tbody tr');
    expect(await row.count()).toBe(1);
    expect(await row.textContent()).toContain('Test Assistant');
    expect(await row.locator('.scopes').textContent()).toContain('care_circle:read');
    expect(await row.locator('.scopes').textContent()).not.toContain('profile:read');
    expect(await row.locator('.last-used').textContent()).not.toBe('never');
    await screenshot(page, 'settings-connected-apps');

    // Revoking asks first, naming the app on the button.
    await Promise.all([page.waitForURL(/\/revoke$/), row.locator('a.danger').click()]);
    expect(await page.textContent('h1')).toBe("Revoke Test Assistant's access?");
    expect(await callTool(svc, tokens.access_token, 'list_loved_ones').then((r) => r.status)).toBe(200); // not yet revoked
    await Promise.all([page.waitForURL(/\/settings/), page.click('#confirm button.danger')]);
    expect(await page.locator('#connected-apps-list').count()).toBe(0);
    expect(await page.textContent('#connected-apps ~ p, section:has(#connected-apps)')).toContain('No apps connected yet');
    expect(errors, errors.join('\n')).toEqual([]);

    const after = await callTool(svc, tokens.access_token, 'list_loved_ones');
    expect(after.status).toBe(401);
    expect(((await (await refresh(as, reg, tokens.refresh_token!)).json()) as { error: string }).error).toBe('invalid_grant');
    await page.context().close();
  });

  it("when the site's authorization-server metadata is read, then it names the same issuer and endpoints as the authorization server's own", async () => {
    const mine = (await (await fetch(`${svc.config.authUrl}/.well-known/oauth-authorization-server`)).json()) as Record<string, unknown>;
    const site = (await (await fetch(`${svc.urls.site}/.well-known/oauth-authorization-server`)).json()) as Record<string, unknown>;
    for (const field of [
      'issuer',
      'authorization_endpoint',
      'token_endpoint',
      'registration_endpoint',
      'revocation_endpoint',
      'jwks_uri',
      'code_challenge_methods_supported',
      'scopes_supported',
      'token_endpoint_auth_methods_supported',
    ])
      expect(site[field], field).toEqual(mine[field]);
  });

  it('when the caregiver allows without ticking anything, then the consent page asks again instead of connecting', async () => {
    const { as } = await discover(svc);
    const reg = (await register(svc)).registered!;
    const req = await authorizationRequest(as, reg, { resource: resource() });
    const done = await authorizeOverHttp(svc, req.url, 'nothing@example.com', { approve: [] });
    expect(done.redirect).toBeUndefined();
    expect(done.status).toBe(400);
    expect(done.page).toContain('id="consent-problem"');
    expect(done.page).toContain('Tick at least one box');
  });

  it('when a native app authorizes again in the same browser, then consent shows again with the earlier choice ticked, and a narrower choice narrows even the old refresh token', async () => {
    const { as } = await discover(svc);
    const reg = (await register(svc)).registered!;
    const jar = new Jar();
    const exchangeCode = async (redirect: URL, req: { state: string; verifier: string }) =>
      oauth.processAuthorizationCodeResponse(
        as,
        reg.client,
        await oauth.authorizationCodeGrantRequest(
          as,
          reg.client,
          oauth.None(),
          oauth.validateAuthResponse(as, reg.client, redirect, req.state),
          reg.redirectUri,
          req.verifier,
          { additionalParameters: { resource: resource() }, ...insecure },
        ),
      );
    const firstReq = await authorizationRequest(as, reg, { resource: resource() });
    const first = await authorizeOverHttp(svc, firstReq.url, 'again@example.com', { approve: ['profile:read', 'care_circle:read'] }, jar);
    const firstTokens = await exchangeCode(first.redirect!, firstReq);
    expect(firstTokens.scope).toBe('profile:read care_circle:read');

    const secondReq = await authorizationRequest(as, reg, { resource: resource() });
    const second = await authorizeOverHttp(svc, secondReq.url, 'again@example.com', { approve: ['profile:read'] }, jar);
    expect(second.consentPages).toBe(1);
    expect(second.lastConsent).toMatch(/id="scope-profile-read" name="scope" value="profile:read" checked/);
    expect(second.lastConsent).toMatch(/id="scope-care-circle-read" name="scope" value="care_circle:read" checked/);
    expect((await exchangeCode(second.redirect!, secondReq)).scope).toBe('profile:read');

    const refreshed = await oauth.processRefreshTokenResponse(as, reg.client, await refresh(as, reg, firstTokens.refresh_token!));
    expect(refreshed.scope).toBe('profile:read');
    expect((await callTool(svc, refreshed.access_token, 'list_loved_ones')).status).toBe(403);
  });
});
