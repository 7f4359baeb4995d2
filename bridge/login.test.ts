import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { listenLoopback } from './login.js';
import { authorizationUrl, pkce, resourceMetadataFrom } from './oauth.js';

const portOf = (server: Server) => (server.address() as AddressInfo).port;
const close = (server: Server) => new Promise((resolve) => server.close(resolve));

describe('bridge login - the loopback callback', () => {
  it('when the port used last time is busy, then the callback listens on another one instead of failing', async () => {
    const busy = createServer();
    busy.listen(0, '127.0.0.1');
    await once(busy, 'listening');
    const callback = await listenLoopback(() => {}, portOf(busy));
    expect(callback.address()).toMatchObject({ address: '127.0.0.1' });
    expect(portOf(callback)).not.toBe(portOf(busy));
    await Promise.all([close(busy), close(callback)]);
  });

  it('when the port used last time is free, then the callback takes it again', async () => {
    const probe = createServer();
    probe.listen(0, '127.0.0.1');
    await once(probe, 'listening');
    const port = portOf(probe);
    await close(probe);
    const callback = await listenLoopback(() => {}, port);
    expect(portOf(callback)).toBe(port);
    await close(callback);
  });
});

describe('bridge login - the authorization request', () => {
  it('when a PKCE pair is made, then the challenge is the S256 of a 43-character verifier, new each time', () => {
    const a = pkce();
    expect(a.verifier).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(a.challenge).toBe(createHash('sha256').update(a.verifier).digest('base64url'));
    expect(pkce().verifier).not.toBe(a.verifier);
  });

  it('when the URL is built, then it carries the client, the loopback redirect, S256 and the resource', () => {
    const as = {
      issuer: 'https://auth.example.org',
      authorizationEndpoint: 'https://auth.example.org/oauth/authorize',
      tokenEndpoint: 'https://auth.example.org/oauth/token',
      issParameter: true,
    };
    const url = authorizationUrl(as, {
      clientId: 'c1',
      redirectUri: 'http://127.0.0.1:5000/callback',
      scope: 'profile:read care_circle:read',
      state: 's',
      challenge: 'x',
      resource: 'https://app.example.org/api/mcp',
    });
    expect(Object.fromEntries(url.searchParams)).toEqual({
      response_type: 'code',
      client_id: 'c1',
      redirect_uri: 'http://127.0.0.1:5000/callback',
      scope: 'profile:read care_circle:read',
      state: 's',
      code_challenge: 'x',
      code_challenge_method: 'S256',
      resource: 'https://app.example.org/api/mcp',
    });
  });

  it('when a 401 names its resource metadata, then that address is read from the challenge', () => {
    expect(resourceMetadataFrom('Bearer resource_metadata="https://app.example.org/.well-known/oauth-protected-resource", error="invalid_token"')).toBe(
      'https://app.example.org/.well-known/oauth-protected-resource',
    );
    expect(resourceMetadataFrom('Bearer error="invalid_token"')).toBeUndefined();
    expect(resourceMetadataFrom(null)).toBeUndefined();
  });
});
