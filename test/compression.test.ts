// Response compression on every listener: brotli or gzip when the client asks, nothing when it
// does not, and event streams passed through as they are written.
import { request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PassThrough } from 'node:stream';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import Koa from 'koa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compress_body } from '../src/gateway/middleware.js';
import { signIn } from './harness/identity.js';
import { sendHttp } from './harness/send.js';
import { startTestService, type TestService } from './harness/service.js';

describe('compression - pages and replies on the wire', () => {
  let svc: TestService;
  let cookie: string;
  beforeAll(async () => {
    svc = await startTestService();
    cookie = await signIn(svc, 'squeeze@example.com', 'Sam Squeeze');
  });
  afterAll(() => svc?.stop());

  const get = (base: string, target: string, headers: Record<string, string>) =>
    sendHttp(base, { method: 'GET', target, headers: { accept: 'text/html', ...headers } }, 10_000);

  it('when a browser accepts brotli or gzip, then the settings page comes compressed and decodes to the same page', async () => {
    const plain = await get(svc.urls.app!, '/settings', { cookie });
    expect(plain.status).toBe(200);
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.body.toString()).toContain('Settings');

    const br = await get(svc.urls.app!, '/settings', { cookie, 'accept-encoding': 'gzip, deflate, br' });
    expect(br.headers['content-encoding']).toBe('br');
    expect(br.headers.vary).toMatch(/accept-encoding/i);
    const html = brotliDecompressSync(br.body).toString();
    // The page names a fresh CSRF token each time: compare it without them.
    const stable = (s: string) => s.replace(/name="_csrf" value="[^"]*"/g, '');
    expect(stable(html)).toBe(stable(plain.body.toString()));
    expect(br.body.length).toBeLessThan(plain.body.length / 2);

    const gz = await get(svc.urls.app!, '/settings', { cookie, 'accept-encoding': 'gzip' });
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(stable(gunzipSync(gz.body).toString())).toBe(stable(plain.body.toString()));
  });

  it('when the site, its JSON documents and the sign-in host are asked, then each answers compressed', async () => {
    const home = await get(svc.urls.site!, '/', { 'accept-encoding': 'br' });
    expect(home.headers['content-encoding']).toBe('br');
    expect(brotliDecompressSync(home.body).toString()).toContain('<html');

    const openapi = await get(svc.urls.site!, '/openapi.json', { 'accept-encoding': 'gzip', accept: 'application/json' });
    expect(openapi.headers['content-encoding']).toBe('gzip');
    expect(JSON.parse(gunzipSync(openapi.body).toString()).openapi).toMatch(/^3\./);

    // The partner listener negotiates too (its replies are small, so they stay under the threshold).
    const pipe = await get(svc.urls.pipe!, '/healthz', { 'accept-encoding': 'gzip' });
    expect(pipe.headers.vary).toMatch(/accept-encoding/i);
    const auth = await get(svc.urls.auth!, '/healthz', { 'accept-encoding': 'gzip' });
    expect(auth.headers.vary).toMatch(/accept-encoding/i);
  });
});

describe('compression - event streams', () => {
  it('when a reply is an event stream, then each event reaches the client as it is written, uncompressed', async () => {
    const events = new PassThrough();
    const app = new Koa();
    app.use(compress_body);
    app.use((ctx) => {
      ctx.type = 'text/event-stream';
      ctx.body = events;
      // A large first event: well past the threshold, so only the type keeps it uncompressed.
      events.write(`data: ${'x'.repeat(4096)}\n\n`);
    });
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const first = await new Promise<{ encoding: string | undefined; chunk: string; rest: Promise<void> }>((resolve, reject) => {
        const req = request({ host: '127.0.0.1', port, path: '/', headers: { 'accept-encoding': 'gzip, br' } }, (res) => {
          const rest = new Promise<void>((done) => res.on('end', done));
          // The stream is still open: the event must arrive before it ends.
          res.once('data', (c: Buffer) => resolve({ encoding: res.headers['content-encoding'], chunk: c.toString(), rest }));
          res.on('error', reject);
        });
        req.on('error', reject);
        req.end();
      });
      expect(first.encoding).toBeUndefined();
      expect(first.chunk.startsWith('data: xxxx')).toBe(true);
      events.end();
      await first.rest;
    } finally {
      server.close();
    }
  });
});
