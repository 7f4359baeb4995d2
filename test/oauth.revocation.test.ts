// Token revocation at /oauth/revoke (RFC 7009): a JWT access token stops working on its next
// request at every gateway, a refresh token ends the connection, and the endpoint's refusals.
import * as oauth from 'oauth4webapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from './harness/service.js';
import { callTool, connectedApp, insecure, register } from './oauth.fixtures.js';

let svc: TestService;
/** A second, separate deployment process on the same database: another gateway and worker. */
let other: TestService;

beforeAll(async () => {
  svc = await startTestService();
  other = await startTestService({ mongoUrl: svc.mongoUrl, env: { APP_URL: svc.config.appUrl, AUTH_URL: svc.config.authUrl } });
});
afterAll(async () => {
  await other?.stop();
  await svc?.stop();
});

/** The same tool call sent to the other process's app listener (same public URLs, other port). */
async function callOther(token: string) {
  const res = await fetch(`${other.urls.app}/api/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'ping', arguments: {} } }),
  });
  return { status: res.status, wwwAuthenticate: res.headers.get('www-authenticate'), json: (await res.json()) as any };
}

const revoke = (clientId: string, token: string, extra: Record<string, string> = {}, headers: Record<string, string> = {}) =>
  fetch(`${svc.config.authUrl}/oauth/revoke`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams({ token, client_id: clientId, ...extra }),
  });

describe('oauth - revocation (RFC 7009)', () => {
  it('when an app revokes its JWT access token, then 200 and the next request with it is 401 invalid_token on every gateway', async () => {
    const { as, reg, tokens } = await connectedApp(svc, 'revoke-at@example.com');
    expect((await callTool(svc, tokens.access_token, 'ping')).status).toBe(200);
    expect((await callOther(tokens.access_token)).status).toBe(200);

    const res = await oauth.revocationRequest(as, reg.client, oauth.None(), tokens.access_token, {
      additionalParameters: { token_type_hint: 'access_token' },
      ...insecure,
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');

    for (const answer of [await callTool(svc, tokens.access_token, 'ping'), await callOther(tokens.access_token)]) {
      expect(answer.status).toBe(401);
      expect(answer.wwwAuthenticate).toContain('error="invalid_token"');
      expect(answer.json.error).toMatchObject({ code: -32001, message: 'This access token was revoked' });
    }
    // Only that token: the connection stands, so a refreshed token works.
    const refreshed = await oauth.processRefreshTokenResponse(
      as,
      reg.client,
      await oauth.refreshTokenGrantRequest(as, reg.client, oauth.None(), tokens.refresh_token!, {
        additionalParameters: { resource: `${svc.config.appUrl}/api/mcp` },
        ...insecure,
      }),
    );
    expect((await callTool(svc, refreshed.access_token, 'ping')).status).toBe(200);
  });

  it('when another client names the token, then 200 (RFC 7009) and the token keeps working', async () => {
    const { tokens } = await connectedApp(svc, 'revoke-foreign@example.com');
    const stranger = (await register(svc)).registered!;
    expect((await revoke(stranger.client.client_id, tokens.access_token)).status).toBe(200);
    expect((await callTool(svc, tokens.access_token, 'ping')).status).toBe(200);
  });

  it('when the token is unknown, forged or already revoked, then 200 and nothing else happens', async () => {
    const { reg, tokens } = await connectedApp(svc, 'revoke-twice@example.com');
    const [h, p] = tokens.access_token.split('.');
    for (const token of ['not-a-token', `${h}.${p}.${Buffer.from('forged').toString('base64url')}`, tokens.access_token, tokens.access_token]) {
      const res = await revoke(reg.client.client_id, token);
      expect(res.status, token).toBe(200);
      expect(await res.text()).toBe('');
    }
  });

  it('when the refresh token is revoked, then the connection ends: its access token and refresh token both stop', async () => {
    const { as, reg, tokens } = await connectedApp(svc, 'revoke-rt@example.com');
    expect((await revoke(reg.client.client_id, tokens.refresh_token!, { token_type_hint: 'refresh_token' })).status).toBe(200);
    expect((await callOther(tokens.access_token)).status).toBe(401);
    const again = await oauth.refreshTokenGrantRequest(as, reg.client, oauth.None(), tokens.refresh_token!, {
      additionalParameters: { resource: `${svc.config.appUrl}/api/mcp` },
      ...insecure,
    });
    expect(((await again.json()) as { error: string }).error).toBe('invalid_grant');
  });

  it('when the request is malformed or the client unknown, then the RFC error codes', async () => {
    const { reg, tokens } = await connectedApp(svc, 'revoke-bad@example.com');
    const error = async (res: Response) => ({ status: res.status, error: ((await res.json()) as { error: string }).error });
    expect(await error(await revoke('no-such-client', tokens.access_token))).toEqual({ status: 401, error: 'invalid_client' });
    expect(
      await error(
        await fetch(`${svc.config.authUrl}/oauth/revoke`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({ client_id: reg.client.client_id }),
        }),
      ),
    ).toEqual({ status: 400, error: 'invalid_request' });
    expect(
      await error(
        await fetch(`${svc.config.authUrl}/oauth/revoke`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({ token: tokens.access_token }),
        }),
      ),
    ).toEqual({ status: 400, error: 'invalid_request' });
    expect(
      await error(
        await fetch(`${svc.config.authUrl}/oauth/revoke`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ token: tokens.access_token, client_id: reg.client.client_id }),
        }),
      ),
    ).toEqual({ status: 400, error: 'invalid_request' });
    expect(await error(await revoke(reg.client.client_id, tokens.access_token, {}, { origin: 'https://evil.example' }))).toEqual({
      status: 400,
      error: 'invalid_request',
    });
    expect((await callTool(svc, tokens.access_token, 'ping')).status).toBe(200);
  });
});
