// The authorization server's refusals, each with its RFC error code, and the workspace endpoint's
// refusals of tokens it must not accept. Driven over plain HTTP (no browser needed).
import { SignJWT, importJWK, type JWK } from 'jose';
import * as oauth from 'oauth4webapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OAuthKeys } from '../src/oauth/keys.js';
import { resolveDataKey, SecretBox } from '../src/partner/secretBox.js';
import { createLogger } from '../src/log.js';
import { startTestService, type TestService } from './harness/service.js';
import { authorizationRequest, authorizeOverHttp, callTool, connectedApp, discover, insecure, register, type Registered } from './oauth.fixtures.js';

let svc: TestService;
let as: oauth.AuthorizationServer;
let reg: Registered;
const resource = () => `${svc.config.appUrl}/api/mcp`;

beforeAll(async () => {
  svc = await startTestService({ env: { RATE_OAUTH_REGISTER_PER_HOUR: '6' } });
  ({ as } = await discover(svc));
  reg = (await register(svc)).registered!;
});
afterAll(async () => {
  await svc?.stop();
});

/** A code for `reg`, approved by a caregiver, with the verifier that goes with it. */
async function code(email: string, params: Record<string, string> = {}) {
  const req = await authorizationRequest(as, reg, { resource: resource(), ...params });
  const done = await authorizeOverHttp(svc, req.url, email, { approve: ['profile:read'] });
  return { req, params: oauth.validateAuthResponse(as, reg.client, done.redirect!, req.state) };
}

async function tokenError(res: Response): Promise<{ status: number; error: string }> {
  const body = (await res.json()) as { error: string };
  return { status: res.status, error: body.error };
}

const exchange = (params: URLSearchParams, verifier: string, redirectUri = reg.redirectUri) =>
  oauth.authorizationCodeGrantRequest(as, reg.client, oauth.None(), params, redirectUri, verifier, {
    additionalParameters: { resource: resource() },
    ...insecure,
  });

describe('oauth - refusals with their RFC error codes', () => {
  it('when the code verifier does not match the challenge, then the token endpoint answers invalid_grant', async () => {
    const { params } = await code('pkce@example.com');
    expect(await tokenError(await exchange(params, oauth.generateRandomCodeVerifier()))).toEqual({ status: 400, error: 'invalid_grant' });
  });

  it('when the authorization asks for the plain PKCE method, then it is refused with invalid_request and no code', async () => {
    const req = await authorizationRequest(as, reg, {
      resource: resource(),
      code_challenge_method: 'plain',
      code_challenge: oauth.generateRandomCodeVerifier(),
    });
    const done = await authorizeOverHttp(svc, req.url, 'plain@example.com', { approve: ['profile:read'] });
    expect(done.redirect?.searchParams.get('error')).toBe('invalid_request');
    expect(done.redirect?.searchParams.get('code')).toBeNull();
    expect(done.redirect?.searchParams.get('state')).toBe(req.state);
    expect(done.redirect?.searchParams.get('iss')).toBe(svc.config.authUrl);
  });

  it('when the authorization carries no code challenge at all, then it is refused with invalid_request', async () => {
    const req = await authorizationRequest(as, reg, { resource: resource() });
    req.url.searchParams.delete('code_challenge');
    req.url.searchParams.delete('code_challenge_method');
    const done = await authorizeOverHttp(svc, req.url, 'nopkce@example.com', { approve: ['profile:read'] });
    expect(done.redirect?.searchParams.get('error')).toBe('invalid_request');
  });

  it('when the redirect URI is not the registered one, then the server shows invalid_redirect_uri and never redirects there', async () => {
    const req = await authorizationRequest(as, reg, { resource: resource(), redirect_uri: 'https://attacker.example/callback' });
    const done = await authorizeOverHttp(svc, req.url, 'redirect@example.com', { approve: ['profile:read'] });
    expect(done.redirect).toBeUndefined();
    expect(done.status).toBe(400);
    expect(done.page).toContain('<code id="error-code">invalid_redirect_uri</code>');
  });

  it('when the code is exchanged with another redirect URI than it was issued for, then invalid_grant', async () => {
    const { params, req } = await code('redirect2@example.com');
    expect(await tokenError(await exchange(params, req.verifier, 'http://127.0.0.1:47891/other'))).toEqual({ status: 400, error: 'invalid_grant' });
  });

  it('when a loopback redirect URI arrives on another port, then it matches (RFC 8252) and the code is issued', async () => {
    const req = await authorizationRequest(as, reg, { resource: resource(), redirect_uri: 'http://127.0.0.1:51234/callback' });
    const done = await authorizeOverHttp(svc, req.url, 'port@example.com', { approve: ['profile:read'] });
    expect(done.redirect?.origin).toBe('http://127.0.0.1:51234');
    expect(done.redirect?.searchParams.get('code')).toBeTruthy();
  });

  it('when a code is replayed, then invalid_grant, and the tokens from its first use are revoked with the grant', async () => {
    const { params, req } = await code('replay@example.com');
    const first = await oauth.processAuthorizationCodeResponse(as, reg.client, await exchange(params, req.verifier));
    expect((await callTool(svc, first.access_token, 'ping')).status).toBe(200);
    expect(await tokenError(await exchange(params, req.verifier))).toEqual({ status: 400, error: 'invalid_grant' });
    const after = await callTool(svc, first.access_token, 'ping');
    expect(after.status).toBe(401);
    expect(after.wwwAuthenticate).toContain('error="invalid_token"');
    expect(await tokenError(await oauth.refreshTokenGrantRequest(as, reg.client, oauth.None(), first.refresh_token!, insecure))).toEqual({
      status: 400,
      error: 'invalid_grant',
    });
  });

  it('when two requests spend one code at the same moment, then exactly one gets tokens', async () => {
    const { params, req } = await code('race@example.com');
    const results = await Promise.all(Array.from({ length: 6 }, () => exchange(params, req.verifier).then((r) => r.status)));
    expect(results.filter((s) => s === 200)).toHaveLength(1);
    expect(results.filter((s) => s === 400)).toHaveLength(5);
  });

  it('when a token is asked for another resource, then the authorization server answers invalid_target', async () => {
    const req = await authorizationRequest(as, reg, { resource: 'https://other.example/api' });
    const done = await authorizeOverHttp(svc, req.url, 'target@example.com', { approve: ['profile:read'] });
    expect(done.redirect?.searchParams.get('error')).toBe('invalid_target');
  });

  it('when a token signed by our own key names another audience, then the workspace endpoint answers 401 invalid_token with the resource metadata', async () => {
    const keys = new OAuthKeys(svc.store.db, svc.config.oauthKeyRotation, new SecretBox(resolveDataKey(svc.config, createLogger('silent'))));
    const signing = await keys.signingKeys();
    const jwk = signing.keys[0] as JWK;
    const { tokens } = await connectedApp(svc, 'audience@example.com');
    const claims = JSON.parse(Buffer.from(tokens.access_token.split('.')[1]!, 'base64url').toString('utf8')) as Record<string, unknown>;
    const key = await importJWK(jwk, 'ES256');
    const resign = (extra: Record<string, unknown>) =>
      new SignJWT({ ...claims, ...extra }).setProtectedHeader({ alg: 'ES256', kid: signing.kid, typ: 'at+jwt' }).sign(key);

    const foreign = await callTool(svc, await resign({ aud: 'https://other.example/api' }), 'ping');
    expect(foreign.status).toBe(401);
    expect(foreign.wwwAuthenticate).toContain('error="invalid_token"');
    expect(foreign.wwwAuthenticate).toContain(`resource_metadata="${svc.config.appUrl}/.well-known/oauth-protected-resource"`);
    expect(foreign.json.error.code).toBe(-32001);

    // The trailing-slash form of our own resource is the same endpoint.
    expect((await callTool(svc, await resign({ aud: `${resource()}/` }), 'ping')).status).toBe(200);

    const expired = await callTool(svc, await resign({ iat: Math.floor(Date.now() / 1000) - 7200, exp: Math.floor(Date.now() / 1000) - 3600 }), 'ping');
    expect(expired.status).toBe(401);
    expect(expired.wwwAuthenticate).toMatch(/error="invalid_token".*expired/);
  });

  it('when a token is forged with a key we never published, then 401 invalid_token', async () => {
    const { tokens } = await connectedApp(svc, 'forged@example.com');
    const [h, p] = tokens.access_token.split('.');
    const forged = `${h}.${p}.${Buffer.from('not a signature').toString('base64url')}`;
    const res = await callTool(svc, forged, 'ping');
    expect(res.status).toBe(401);
    expect(res.wwwAuthenticate).toContain('error="invalid_token"');
  });

  it('when a client registers a plain-http redirect URI that is not loopback, then invalid_redirect_uri naming the field, the URI and what is allowed', async () => {
    const res = await register(svc, { redirect_uris: ['https://app.example/ok', 'http://app.example/callback'] });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_redirect_uri');
    const description = String(res.body.error_description);
    expect(description).toMatch(/^redirect_uris: http:\/\/app\.example\/callback uses plain http/);
    expect(description).toContain('use https, or http only on a loopback host');
    expect(description).not.toContain('did not match');
  });

  it('when a client asks to be confidential, then invalid_client_metadata (no client secrets are kept)', async () => {
    const res = await register(svc, { token_endpoint_auth_method: 'client_secret_basic' });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_client_metadata');
  });

  it('when one address registers more clients than the hourly limit, then 429 with Retry-After', async () => {
    const statuses: number[] = [];
    let retryAfter: string | null = null;
    for (let i = 0; i < 8; i++) {
      const res = await fetch(`${svc.config.authUrl}/oauth/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ redirect_uris: ['http://127.0.0.1:1/cb'], token_endpoint_auth_method: 'none' }),
      });
      statuses.push(res.status);
      expect(res.headers.get('access-control-allow-origin')).toBe('*');
      if (res.status === 429) {
        retryAfter = res.headers.get('retry-after');
        expect(((await res.json()) as { error: string }).error).toBe('temporarily_unavailable');
      } else await res.body?.cancel();
    }
    expect(statuses).toContain(429);
    expect(Number(retryAfter)).toBeGreaterThan(0);
  });
});
