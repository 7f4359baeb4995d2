// The Host each listener answers for (DNS rebinding), and OAuth URLs that come from AUTH_URL
// whatever the request says. Raw HTTP, because fetch will not send a Host of our choosing.
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from './harness/service.js';

interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

/** One request to the listener at `base`, with exactly the Host (none when empty) and target given. */
function raw(base: string, opts: { host?: string; target?: string; headers?: Record<string, string> } = {}): Promise<RawResponse> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const host = opts.host ?? url.host;
    const headers = { ...(host ? { host } : {}), ...opts.headers };
    const req = request({ host: url.hostname, port: url.port, method: 'GET', path: opts.target ?? '/', setHost: false, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, text }));
    });
    req.on('error', reject);
    req.end();
  });
}

const SURFACES = ['site', 'app', 'auth', 'pipe', 'apex'] as const;

describe('hosts - each listener answers only for its own host', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService();
  });
  afterAll(async () => svc?.stop());

  it('when a request names a foreign Host on any listener, then 421 MISDIRECTED_REQUEST in ApiError form', async () => {
    for (const surface of SURFACES) {
      const port = new URL(svc.urls[surface]!).port;
      const res = await raw(svc.urls[surface]!, { host: `evil.example:${port}`, target: '/' });
      expect(res.status, surface).toBe(421);
      expect(JSON.parse(res.text), surface).toMatchObject({
        code: 'MISDIRECTED_REQUEST',
        error: { code: 'MISDIRECTED_REQUEST', message: expect.stringContaining('evil.example') },
      });
    }
  });

  it('when the Host is the public host, a loopback name or the address with the listener port, then it is served', async () => {
    const port = new URL(svc.urls.site!).port;
    for (const host of [new URL(svc.config.siteUrl).host, `localhost:${port}`, `127.0.0.1:${port}`, `LOCALHOST:${port}`]) {
      expect((await raw(svc.urls.site!, { host, target: '/llms.txt' })).status, host).toBe(200);
    }
  });

  it('when a loopback name carries another port, or the Host is missing or malformed, then 421', async () => {
    const port = Number(new URL(svc.urls.site!).port);
    for (const host of [`localhost:${port + 1}`, 'localhost', `user@127.0.0.1:${port}`, `127.0.0.1:${port}/x`]) {
      expect((await raw(svc.urls.site!, { host, target: '/llms.txt' })).status, JSON.stringify(host)).toBe(421);
    }
    // Node itself refuses an HTTP/1.1 request without Host.
    expect((await raw(svc.urls.site!, { host: '', target: '/llms.txt' })).status).toBe(400);
  });

  it('when an absolute-form target names a foreign host, then 421 even with a good Host', async () => {
    const res = await raw(svc.urls.auth!, { target: 'http://evil.example/.well-known/oauth-authorization-server' });
    expect(res.status).toBe(421);
  });

  it('when the Host is foreign on the health probes, then every listener, the apex too, still answers them itself (orchestrators probe by address)', async () => {
    for (const surface of SURFACES) {
      for (const target of ['/healthz', '/readyz']) {
        const res = await raw(svc.urls[surface]!, { host: 'pod-10-1-2-3.internal', target });
        expect([res.status, res.headers.location, JSON.parse(res.text)], `${surface} ${target}`).toEqual([
          200,
          undefined,
          { status: target === '/healthz' ? 'ok' : 'ready', ...(target === '/readyz' ? { bus: 'up', busKind: expect.any(String), mongo: 'up' } : {}) },
        ]);
      }
    }
  });

  it('when the metadata is asked for under another name of the auth listener, then every endpoint is still on AUTH_URL', async () => {
    const port = new URL(svc.urls.auth!).port;
    const res = await raw(svc.urls.auth!, { host: `localhost:${port}`, target: '/.well-known/oauth-authorization-server' });
    expect(res.status).toBe(200);
    const meta = JSON.parse(res.text) as Record<string, unknown>;
    const auth = svc.config.authUrl;
    expect(meta).toMatchObject({
      issuer: auth,
      authorization_endpoint: `${auth}/oauth/authorize`,
      token_endpoint: `${auth}/oauth/token`,
      registration_endpoint: `${auth}/oauth/register`,
      revocation_endpoint: `${auth}/oauth/revoke`,
      jwks_uri: `${auth}/.well-known/jwks.json`,
    });
  });
});

describe('hosts - behind a trusted proxy', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService({ env: { TRUST_PROXY: 'true' } });
  });
  afterAll(async () => svc?.stop());

  it('when X-Forwarded-Host names a foreign host, then 421', async () => {
    const res = await raw(svc.urls.app!, { target: '/llms.txt', headers: { 'x-forwarded-host': 'evil.example' } });
    expect(res.status).toBe(421);
  });

  it('when X-Forwarded-Proto and -Host say otherwise, then the OAuth metadata still names AUTH_URL endpoints', async () => {
    const res = await raw(svc.urls.auth!, {
      target: '/.well-known/oauth-authorization-server',
      headers: { 'x-forwarded-proto': 'https', 'x-forwarded-host': new URL(svc.config.authUrl).host },
    });
    expect(res.status).toBe(200);
    const meta = JSON.parse(res.text) as Record<string, unknown>;
    expect(meta.authorization_endpoint).toBe(`${svc.config.authUrl}/oauth/authorize`);
    expect(meta.token_endpoint).toBe(`${svc.config.authUrl}/oauth/token`);
  });
});
