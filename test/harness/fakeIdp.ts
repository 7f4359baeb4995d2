// A real identity-provider double: a local HTTP server serving a JWKS, and ES256 ID tokens
// signed with its key. Point the service at it with `fakeIdp.env` (IDP_ISSUER, IDP_JWKS_URL,
// IDP_AUDIENCE); the service fetches and verifies exactly as it would against a real provider.
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import { exportJWK, generateKeyPair, SignJWT, type JWTPayload } from 'jose';

export interface IdTokenClaims {
  sub: string;
  email: string;
  name?: string;
  email_verified?: boolean;
}

export interface FakeIdp {
  issuer: string;
  audience: string;
  env: Record<string, string>;
  /** A valid ID token; `overrides` changes claims or makes it bad (`exp` in the past, other `aud`). */
  token(claims: IdTokenClaims, overrides?: Partial<JWTPayload>): Promise<string>;
  /** A token signed by a key the provider never published. */
  foreignToken(claims: IdTokenClaims): Promise<string>;
  stop(): Promise<void>;
}

export async function startFakeIdp(audience = 'carecircle-test'): Promise<FakeIdp> {
  const { privateKey, publicKey } = await generateKeyPair('ES256');
  const foreign = await generateKeyPair('ES256');
  const jwk = { ...(await exportJWK(publicKey)), kid: 'test-key-1', alg: 'ES256', use: 'sig' };
  const server: Server = createServer((req, res) => {
    if (req.url === '/jwks.json') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ keys: [jwk] }));
      return;
    }
    res.writeHead(404).end();
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const addr = server.address();
  const issuer = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;

  const sign = (key: Parameters<SignJWT['sign']>[0], kid: string, claims: IdTokenClaims, overrides: Partial<JWTPayload> = {}) => {
    const now = Math.floor(Date.now() / 1000);
    return new SignJWT({ email_verified: true, ...claims, iss: issuer, aud: audience, iat: now, exp: now + 3600, ...overrides })
      .setProtectedHeader({ alg: 'ES256', kid, typ: 'JWT' })
      .sign(key);
  };

  return {
    issuer,
    audience,
    env: { IDP_ISSUER: issuer, IDP_JWKS_URL: `${issuer}/jwks.json`, IDP_AUDIENCE: audience },
    token: (claims, overrides) => sign(privateKey, jwk.kid, claims, overrides),
    foreignToken: (claims) => sign(foreign.privateKey, jwk.kid, claims),
    stop: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
