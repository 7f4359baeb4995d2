// An authorization request that names none of our scopes (RFC 6749 §3.3) asks for the documented
// default, the read scopes, so the caregiver has boxes to tick and the request can finish; a
// client registered for none of them gets invalid_scope. Driven over plain HTTP.
import * as oauth from 'oauth4webapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_SCOPES } from '../src/oauth/provider.js';
import { startTestService, type TestService } from './harness/service.js';
import { authorizationRequest, authorizeOverHttp, discover, insecure, register, type Registered } from './oauth.fixtures.js';

let svc: TestService;
let as: oauth.AuthorizationServer;
const resource = () => `${svc.config.appUrl}/api/mcp`;

beforeAll(async () => {
  svc = await startTestService();
  ({ as } = await discover(svc));
});
afterAll(async () => {
  await svc?.stop();
});

/** An authorization with `scope` as given (absent when undefined), approving `approve`. */
async function authorize(reg: Registered, email: string, scope: string | undefined, approve: string[]) {
  const req = await authorizationRequest(as, reg, { resource: resource() });
  if (scope === undefined) req.url.searchParams.delete('scope');
  else req.url.searchParams.set('scope', scope);
  const done = await authorizeOverHttp(svc, req.url, email, { approve });
  return { req, done };
}

const offered = (page: string | undefined) => [...(page ?? '').matchAll(/name="scope" value="([^"]+)"/g)].map((m) => m[1]);

describe('oauth - the default scope', () => {
  it('when the default is read, then it holds only read scopes and stays within what the metadata lists', async () => {
    expect(DEFAULT_SCOPES.every((s) => s.endsWith(':read'))).toBe(true);
    const metadata = (await (await fetch(`${svc.config.authUrl}/.well-known/oauth-authorization-server`)).json()) as { scopes_supported: string[] };
    expect(metadata.scopes_supported).toEqual(expect.arrayContaining([...DEFAULT_SCOPES]));
  });

  for (const [when, scope] of [
    ['names no scope', undefined],
    ['names only openid', 'openid'],
    ['names only scopes we do not offer', 'calendar:write admin'],
  ] as const) {
    it(`when an authorization ${when}, then the consent page offers the read scopes and the ticked one is granted`, async () => {
      // Registered without a scope, as many MCP clients are, so `openid` is not refused as unregistered.
      const reg = (await register(svc, { scope: undefined })).registered!;
      const { req, done } = await authorize(reg, `default-${when.length}@example.com`, scope, ['care_circle:read']);
      expect(done.consentPages).toBe(1);
      expect(offered(done.lastConsent)).toEqual(['profile:read', 'care_circle:read']);
      const params = oauth.validateAuthResponse(as, reg.client, done.redirect!, req.state);
      const tokens = await oauth.processAuthorizationCodeResponse(
        as,
        reg.client,
        await oauth.authorizationCodeGrantRequest(as, reg.client, oauth.None(), params, reg.redirectUri, req.verifier, {
          additionalParameters: { resource: resource() },
          ...insecure,
        }),
      );
      expect(tokens.scope).toBe('care_circle:read');
    });
  }

  it('when the client registered for one read scope and names none, then only that one is offered', async () => {
    const reg = (await register(svc, { scope: 'profile:read' })).registered!;
    const { done } = await authorize(reg, 'registered-one@example.com', undefined, ['profile:read']);
    expect(offered(done.lastConsent)).toEqual(['profile:read']);
    expect(done.redirect?.searchParams.get('code')).toBeTruthy();
  });

  it('when the client registered for none of the default scopes and names none, then invalid_scope goes back to the app', async () => {
    const reg = (await register(svc, { scope: 'openid' })).registered!;
    const { req, done } = await authorize(reg, 'registered-none@example.com', undefined, ['profile:read']);
    expect(done.consentPages).toBe(0);
    expect(done.redirect?.searchParams.get('error')).toBe('invalid_scope');
    expect(done.redirect?.searchParams.get('error_description')).toContain('none of the scopes offered');
    expect(done.redirect?.searchParams.get('state')).toBe(req.state);
  });
});
