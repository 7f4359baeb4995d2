// Client ID Metadata Documents: an app whose client_id is the https URL of its own metadata,
// served by a real local https server (a self-signed certificate the test service is told to
// trust), through the whole code + PKCE flow; and each document the server refuses, and why.
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import * as oauth from 'oauth4webapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.js';
import { appCall, caregiverWithKey } from './harness/identity.js';
import { startTestService, type TestService } from './harness/service.js';
import { authorizationRequest, authorizeOverHttp, callTool, discover, insecure, type Registered, type Tokens } from './oauth.fixtures.js';

const TLS = {
  cert: fileURLToPath(new URL('./fixtures/tls/cert.pem', import.meta.url)),
  key: fileURLToPath(new URL('./fixtures/tls/key.pem', import.meta.url)),
};
const REDIRECT = 'http://127.0.0.1:47893/callback';

let devSvc: TestService;
let strictSvc: TestService;
let docs: { base: string; hits: Map<string, number>; close: () => Promise<void> };

/** The app's side: its metadata documents, good and broken, on https://127.0.0.1:<port>. */
async function documentServer() {
  const hits = new Map<string, number>();
  let base = '';
  const doc = (path: string, extra: Record<string, unknown> = {}) => ({
    client_id: `${base}${path}`,
    client_name: 'Document Assistant',
    client_uri: 'https://assistant.example',
    redirect_uris: [REDIRECT],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
    ...extra,
  });
  const json = (res: ServerResponse, body: unknown, headers: Record<string, string> = {}) =>
    res.writeHead(200, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
  const server = createServer({ cert: readFileSync(TLS.cert), key: readFileSync(TLS.key) }, (req, res) => {
    const path = req.url ?? '/';
    hits.set(path, (hits.get(path) ?? 0) + 1);
    if (path === '/good/client.json') return json(res, doc(path), { 'cache-control': 'public, max-age=300' });
    if (path === '/mismatch/client.json') return json(res, doc(path, { client_id: 'https://elsewhere.example/client.json' }));
    if (path === '/big/client.json') return json(res, doc(path, { padding: 'x'.repeat(6 * 1024) }));
    // Never answered: the fetcher's own deadline ends the request.
    if (path === '/slow/client.json') return;
    if (path === '/html/client.json') return res.writeHead(200, { 'content-type': 'text/html' }).end(JSON.stringify(doc(path)));
    if (path === '/redirect/client.json') return res.writeHead(302, { location: `${base}/good/client.json` }).end();
    if (path === '/secret/client.json') return json(res, doc(path, { token_endpoint_auth_method: 'client_secret_basic' }));
    if (path === '/unnamed/client.json') return json(res, doc(path, { client_name: undefined }));
    res.writeHead(404).end();
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  base = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    base,
    hits,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections(); // a request left unanswered included
      }),
  };
}

beforeAll(async () => {
  docs = await documentServer();
  // One server as a developer runs it (private addresses allowed, the test certificate trusted), one as production fetches.
  [devSvc, strictSvc] = await Promise.all([
    startTestService({ env: { OAUTH_CLIENT_METADATA_PRIVATE_HOSTS: 'true', OAUTH_CLIENT_METADATA_CA: TLS.cert, OAUTH_CLIENT_METADATA_TIMEOUT_MS: '300' } }),
    startTestService({ env: { OAUTH_CLIENT_METADATA_CA: TLS.cert } }),
  ]);
});
afterAll(async () => {
  await Promise.all([devSvc?.stop(), strictSvc?.stop(), docs?.close()]);
});

const client = (clientId: string): Registered => ({ client: { client_id: clientId, token_endpoint_auth_method: 'none' }, redirectUri: REDIRECT, raw: {} });

const unescape = (html: string) =>
  html
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');

/** GET /oauth/authorize for a client_id; a refusal is never redirected but shown as a page with the OAuth error. */
async function authorize(svc: TestService, clientId: string, params: Record<string, string> = {}) {
  const { as } = await discover(svc);
  const req = await authorizationRequest(as, client(clientId), { resource: `${svc.config.appUrl}/api/mcp`, ...params });
  const res = await fetch(req.url, { redirect: 'manual', headers: { accept: 'text/html' } });
  const page = await res.text();
  return {
    status: res.status,
    error: /<code id="error-code">([^<]*)<\/code>/.exec(page)?.[1],
    description: unescape(/<p class="error" role="alert">([^<]*)<\/p>/.exec(page)?.[1] ?? ''),
  };
}

describe('oauth - Client ID Metadata Documents', () => {
  it("when an app uses the https URL of its metadata document as client_id, then the caregiver approves it by the document's name and it gets, uses and refreshes tokens, the document fetched once", async () => {
    const clientId = `${docs.base}/good/client.json`;
    const resource = `${devSvc.config.appUrl}/api/mcp`;
    const { cookie } = await caregiverWithKey(devSvc, 'cimd@example.com');
    const { as } = await discover(devSvc);
    expect((as as Record<string, unknown>).client_id_metadata_document_supported).toBe(true);
    expect(as.registration_endpoint).toBe(`${devSvc.config.authUrl}/oauth/register`);

    const reg = client(clientId);
    const req = await authorizationRequest(as, reg, { resource });
    const done = await authorizeOverHttp(devSvc, req.url, 'cimd@example.com', { approve: ['profile:read', 'care_circle:read'] });
    expect(done.consentPages).toBe(1);
    expect(done.lastConsent).toContain('<span id="client-name">Document Assistant</span>');
    expect(done.lastConsent).toContain(`<code id="client-document">${new URL(docs.base).host}</code>`);
    expect(done.redirect?.origin + done.redirect!.pathname).toBe(REDIRECT);

    const params = oauth.validateAuthResponse(as, reg.client, done.redirect!, req.state);
    const tokens = (await oauth.processAuthorizationCodeResponse(
      as,
      reg.client,
      await oauth.authorizationCodeGrantRequest(as, reg.client, oauth.None(), params, REDIRECT, req.verifier, {
        additionalParameters: { resource },
        ...insecure,
      }),
    )) as Tokens;
    expect(tokens.scope?.split(' ').sort()).toEqual(['care_circle:read', 'profile:read']);
    const profile = await callTool(devSvc, tokens.access_token, 'get_user_profile');
    expect(profile.status).toBe(200);
    expect(profile.json.result.isError).toBeFalsy();

    const refreshed = await oauth.processRefreshTokenResponse(
      as,
      reg.client,
      await oauth.refreshTokenGrantRequest(as, reg.client, oauth.None(), tokens.refresh_token!, { additionalParameters: { resource }, ...insecure }),
    );
    expect(refreshed.access_token).toBeTruthy();
    // Authorization, consent, resume, code and refresh: one fetch, then the cache (max-age=300).
    expect(docs.hits.get('/good/client.json')).toBe(1);

    // Settings → Connected apps names it from the document, though it never registered.
    const apps = await appCall(devSvc, cookie, 'GET', '/api/oauth/apps');
    expect(apps.json.apps).toEqual([expect.objectContaining({ clientId, clientName: 'Document Assistant', redirectHosts: ['127.0.0.1:47893'] })]);
  });

  it('when the authorization request names a redirect_uri the document does not list, then it is refused with invalid_redirect_uri and not redirected', async () => {
    const out = await authorize(devSvc, `${docs.base}/good/client.json`, { redirect_uri: 'http://127.0.0.1:47894/elsewhere' });
    expect(out.status).toBe(400);
    expect(out.error).toBe('invalid_redirect_uri');
    expect(out.description).toMatch(/redirect_uri did not match/);
  });

  it.each([
    ['mismatch', /has client_id "https:\/\/elsewhere\.example\/client\.json", which is not the URL it was fetched from/],
    ['big', /larger than 5120 bytes|is \d+ bytes; at most 5120/],
    ['slow', /did not arrive within 300 ms/],
    ['html', /content type text\/html; serve it as application\/json/],
    ['redirect', /answered with a redirect \(302 to https:\/\/127\.0\.0\.1:\d+\/good\/client\.json\); redirects are not followed/],
    ['secret', /token_endpoint_auth_method "client_secret_basic"; only public clients are accepted/],
    ['unnamed', /needs a client_name/],
    ['missing', /answered HTTP 404/],
  ])('when the metadata document is %s, then /oauth/authorize refuses it with invalid_client and a description naming the rule', async (name, description) => {
    const out = await authorize(devSvc, `${docs.base}/${name}/client.json`);
    expect(out.status).toBe(400);
    expect(out.error).toBe('invalid_client');
    expect(out.description).toMatch(description);
  });

  it('when a refused document is met at the token endpoint, then the answer is JSON invalid_client with the same kind of description', async () => {
    const res = await fetch(`${devSvc.config.authUrl}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code: 'nothing',
        redirect_uri: REDIRECT,
        code_verifier: 'v'.repeat(43),
        client_id: `${docs.base}/html/client.json`,
      }),
    });
    const body = (await res.json()) as { error: string; error_description: string };
    expect(res.status).toBe(400);
    expect(body.error).toBe('invalid_client');
    expect(body.error_description).toMatch(/content type text\/html/);
  });

  it('when the client_id is a URL but plain http, then it is refused as invalid_client saying https is needed, and nothing is fetched', async () => {
    const before = docs.hits.get('/good/client.json');
    const out = await authorize(devSvc, `${docs.base.replace('https:', 'http:')}/good/client.json`);
    expect(out.status).toBe(400);
    expect(out).toMatchObject({ status: 400, error: 'invalid_client', description: expect.stringMatching(/is a URL but not https/) });
    expect(docs.hits.get('/good/client.json')).toBe(before);
  });

  it('when private addresses are not allowed (production), then a document on a loopback address or a name resolving to one is refused before connecting', async () => {
    const before = docs.hits.get('/good/client.json');
    const literal = await authorize(strictSvc, `${docs.base}/good/client.json`);
    expect(literal).toMatchObject({
      error: 'invalid_client',
      description: expect.stringMatching(/resolves to 127\.0\.0\.1, a loopback, private or otherwise special-use address/),
    });
    const named = await authorize(strictSvc, `${docs.base.replace('127.0.0.1', 'localhost')}/good/client.json`);
    expect(named).toMatchObject({ error: 'invalid_client', description: expect.stringMatching(/host localhost resolves to (127\.0\.0\.1|::1), a loopback/) });
    const mapped = await authorize(strictSvc, `${docs.base.replace('127.0.0.1', '[::ffff:127.0.0.1]')}/good/client.json`);
    expect(mapped).toMatchObject({ error: 'invalid_client', description: expect.stringMatching(/resolves to ::ffff:7f00:1, a loopback/) });
    expect(docs.hits.get('/good/client.json')).toBe(before);
  });

  it('when production is configured with the development-only document settings, then it refuses to start naming both', () => {
    let message = '';
    try {
      loadConfig({ NODE_ENV: 'production', OAUTH_CLIENT_METADATA_PRIVATE_HOSTS: 'true', OAUTH_CLIENT_METADATA_CA: TLS.cert });
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      message = (err as Error).message;
    }
    expect(message).toContain('OAUTH_CLIENT_METADATA_PRIVATE_HOSTS=true');
    expect(message).toContain('OAUTH_CLIENT_METADATA_CA is set');
  });
});
