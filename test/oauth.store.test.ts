// The authorization server's storage on the run's real MongoDB-compatible server (FerretDB on our
// machines): single use by marker insert across two connections, hashed ids, rotation of the
// signing keys, the resource server's key cache, and the sweep.
import { passThroughCredentials } from '../src/auth/credentials.js';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { importJWK, SignJWT, type JWK } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import { AccessTokenError, AccessTokenVerifier } from '../src/oauth/accessTokens.js';
import { OAuthKeys } from '../src/oauth/keys.js';
import { StoredRevokedAccessTokens } from '../src/oauth/revokedTokens.js';
import { oauthCollection, OAuthStore } from '../src/oauth/store.js';
import { SecretBox } from '../src/partner/secretBox.js';
import { useTestDatabase } from './harness/database.js';

const t = useTestDatabase();
const HOUR = 3_600_000;
const config = { appUrl: 'http://app.test', authUrl: 'http://auth.test', oauthKeyRotation: HOUR };
const box = new SecretBox(randomBytes(32));
class Reused extends Error {}
const reuse = (message: string) => new Reused(message);
const nowSec = (ms: number) => Math.floor(ms / 1000);

let clock = Date.UTC(2030, 0, 1, 10, 30);
const tick = () => clock;

async function grant(store: OAuthStore, grantId: string, accountId = 'u1', clientId = 'c1') {
  await store
    .adapterFactory(reuse)('Grant')
    .upsert(grantId, { accountId, clientId, resources: { 'http://app.test/api/mcp': 'profile:read' }, kind: 'Grant', jti: grantId } as never, 3600);
}

async function accessToken(key: JWK, kid: string, claims: Record<string, unknown>) {
  return new SignJWT({ client_id: 'c1', grant_id: 'g-token', scope: 'profile:read', aud: 'http://app.test/api/mcp', ...claims })
    .setProtectedHeader({ alg: 'ES256', kid, typ: 'at+jwt' })
    .setIssuer(config.authUrl)
    .setSubject('u1')
    .setJti(randomUUID())
    .setIssuedAt(nowSec(clock))
    .setExpirationTime(nowSec(clock) + 3600)
    .sign(await importJWK(key, 'ES256'));
}

describe('oauth store - single use on FerretDB', () => {
  let store: OAuthStore;
  beforeAll(() => {
    store = new OAuthStore(t.db, passThroughCredentials(t.db), tick);
  });

  it('when twenty requests on two connections consume one refresh token at once, then exactly one wins and the grant is revoked', async () => {
    const other = await t.connect();
    try {
      const stores = [store, new OAuthStore(other.db, passThroughCredentials(other.db), tick)];
      await grant(store, 'g-race');
      await store
        .adapterFactory(reuse)('RefreshToken')
        .upsert('rt-race', { grantId: 'g-race', kind: 'RefreshToken', jti: 'rt-race' } as never, 3600);
      const results = await Promise.allSettled(Array.from({ length: 20 }, (_, i) => stores[i % 2]!.adapterFactory(reuse)('RefreshToken').consume('rt-race')));
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      expect(results.filter((r) => r.status === 'rejected' && r.reason instanceof Reused)).toHaveLength(19);
      expect(await store.liveGrant('g-race')).toBeNull();
      expect(await store.adapterFactory(reuse)('RefreshToken').find('rt-race')).toBeUndefined();
    } finally {
      await other.close();
    }
  });

  it('when a code is consumed, then find reports it consumed, and its id is stored only as a hash', async () => {
    const codes = store.adapterFactory(reuse)('AuthorizationCode');
    await codes.upsert('code-secret-value', { grantId: 'g-code', kind: 'AuthorizationCode', jti: 'code-secret-value' } as never, 60);
    expect((await codes.find('code-secret-value'))?.consumed).toBeUndefined();
    await codes.consume('code-secret-value');
    expect((await codes.find('code-secret-value'))?.consumed).toBe(nowSec(clock));
    expect(await t.db.collection(oauthCollection('AuthorizationCode')).findOne({ _id: 'code-secret-value' as never })).toBeNull();
    expect(await t.db.collection(oauthCollection('AuthorizationCode')).countDocuments({})).toBe(1);
    expect(JSON.stringify(await t.db.collection(oauthCollection('AuthorizationCode')).find({}).toArray())).not.toContain('code-secret-value');
    expect((await codes.find('code-secret-value'))?.jti).toBe('code-secret-value');
  });

  it('when an interaction is stored, then neither its id (in jti and the resume URL) nor its session cookie is kept, and find restores the id', async () => {
    const interactions = store.adapterFactory(reuse)('Interaction');
    const uid = 'interaction-cookie-value';
    const payload = {
      jti: uid,
      kind: 'Interaction',
      returnTo: `http://auth.test/oauth/authorize/${uid}`,
      session: { uid: 'session-uid', cookie: 'session-cookie-value', accountId: 'u1' },
      params: { client_id: 'c1' },
    };
    await interactions.upsert(uid, payload as never, 600);
    const stored = JSON.stringify(await t.db.collection(oauthCollection('Interaction')).find({}).toArray());
    expect(stored).not.toContain(uid);
    expect(stored).not.toContain('session-cookie-value');
    expect(await interactions.find(uid)).toEqual({ ...payload, session: { uid: 'session-uid', accountId: 'u1' } });
  });

  it('when a refresh token was stored before payloads were sealed, then the sweep seals it and find still returns it', async () => {
    const legacy = { jti: 'legacy-refresh-token', kind: 'RefreshToken', grantId: 'g-legacy', exp: nowSec(clock) + 3600 };
    const sha = createHash('sha256').update(legacy.jti).digest('base64url');
    const docs = t.db.collection<{ _id: string; payload: string }>(oauthCollection('RefreshToken'));
    await docs.insertOne({
      _id: sha,
      payload: JSON.stringify(legacy),
      grantId: 'g-legacy',
      createdAt: new Date(clock),
      expiresAt: new Date(clock + HOUR),
    } as never);
    const swept = await store.sweep(30 * 24 * HOUR);
    expect(swept.sealed).toBe(1);
    expect((await docs.findOne({ _id: sha }))?.payload).not.toContain(legacy.jti);
    expect(await store.adapterFactory(reuse)('RefreshToken').find(legacy.jti)).toEqual(legacy);
    expect((await store.sweep(30 * 24 * HOUR)).sealed).toBe(0);
  });

  it('when a payload keys scopes by resource URL, then it round-trips whole (FerretDB v1 refuses dots in field names)', async () => {
    await grant(store, 'g-dots');
    const found = await store.adapterFactory(reuse)('Grant').find('g-dots');
    expect(found?.resources).toEqual({ 'http://app.test/api/mcp': 'profile:read' });
  });

  it('when records expire, then find no longer returns them and the sweep deletes them, with clients that never got a grant', async () => {
    const sessions = store.adapterFactory(reuse)('Session');
    await sessions.upsert('s-old', { uid: 'uid-old', kind: 'Session', jti: 's-old' } as never, 60);
    const clients = store.adapterFactory(reuse)('Client');
    await clients.upsert('c-unused', { client_id: 'c-unused' } as never);
    await clients.upsert('c1', { client_id: 'c1', client_name: 'Kept' } as never);
    await grant(store, 'g-keeps-c1', 'u1', 'c1');
    expect(await sessions.findByUid('uid-old')).toBeDefined();

    clock += 31 * 24 * HOUR;
    expect(await sessions.findByUid('uid-old')).toBeUndefined();
    await grant(store, 'g-keeps-c1', 'u1', 'c1');
    const swept = await store.sweep(30 * 24 * HOUR);
    expect(swept.expired).toBeGreaterThanOrEqual(1);
    expect(swept.clients).toBe(1);
    expect(await clients.find('c-unused')).toBeUndefined();
    expect((await clients.find('c1'))?.client_name).toBe('Kept');
  });
});

describe('oauth keys - rotation and the resource server cache', () => {
  it('when a rotation period passes, then the pre-published next key signs and the previous one stays published for one more period', async () => {
    const keys = new OAuthKeys(t.db, HOUR, box, tick);
    const first = await keys.signingKeys();
    const firstPublic = (await keys.publicKeys()).map((k) => k.kid);
    expect(firstPublic).toContain(first.kid);
    expect(firstPublic).toHaveLength(2); // this period's and the next one's
    expect(first.keys[0]!.kid).toBe(first.kid);
    expect(first.keys[0]!.d).toBeTruthy();
    expect(JSON.stringify(await t.db.collection('oauth_keys').find({}).toArray())).not.toContain(first.keys[0]!.d);

    clock += HOUR;
    const second = await keys.signingKeys();
    expect(second.kid).toBe(firstPublic.find((k) => k !== first.kid));
    expect((await keys.publicKeys()).map((k) => k.kid)).toEqual(expect.arrayContaining([first.kid, second.kid]));

    clock += 2 * HOUR;
    await keys.signingKeys();
    expect(await keys.sweep()).toBeGreaterThanOrEqual(1);
    expect((await keys.publicKeys()).map((k) => k.kid)).not.toContain(first.kid);
  });

  it('when two processes need the same period key at once, then both get the one key', async () => {
    const other = await t.connect();
    try {
      clock += 10 * HOUR;
      const [a, b] = await Promise.all([new OAuthKeys(t.db, HOUR, box, tick).signingKeys(), new OAuthKeys(other.db, HOUR, box, tick).signingKeys()]);
      expect(a.kid).toBe(b.kid);
    } finally {
      await other.close();
    }
  });

  it('when a token names a key the cache has not seen, then the keys are read again and the token verifies; a wrong audience does not', async () => {
    clock += 10 * HOUR;
    const store = new OAuthStore(t.db, passThroughCredentials(t.db), tick);
    await grant(store, 'g-token');
    const verifier = new AccessTokenVerifier(t.db, passThroughCredentials(t.db), config, tick);
    // The cache is filled before this period's key exists…
    await expect(verifier.verify('eyJhbGciOiJFUzI1NiIsImtpZCI6Im5vbmUifQ.e30.AAAA')).rejects.toBeInstanceOf(AccessTokenError);
    clock += 6_000;
    const signing = await new OAuthKeys(t.db, HOUR, box, tick).signingKeys();
    // …so the new kid is unknown to it until it looks again.
    const verified = await verifier.verify(await accessToken(signing.keys[0]!, signing.kid, {}));
    expect(verified).toEqual({ uid: 'u1', clientId: 'c1', grantId: 'g-token', scopes: ['profile:read'] });

    const foreign = await accessToken(signing.keys[0]!, signing.kid, { aud: 'http://elsewhere.test/api' });
    await expect(verifier.verify(foreign)).rejects.toMatchObject({ problem: 'invalid' });
    await store.revokeGrant('g-token');
    await expect(verifier.verify(await accessToken(signing.keys[0]!, signing.kid, {}))).rejects.toMatchObject({ problem: 'revoked' });
  });
});

describe('oauth store - revoked access tokens', () => {
  it('when a revoked token passes its expiry, then the sweep forgets it; one still live stays revoked', async () => {
    const store = new OAuthStore(t.db, passThroughCredentials(t.db), tick);
    const revoked = new StoredRevokedAccessTokens(t.db, passThroughCredentials(t.db));
    await revoked.revoke('jti-spent', new Date(clock - 1_000));
    await revoked.revoke('jti-live', new Date(clock + HOUR));
    await revoked.revoke('jti-live', new Date(clock + HOUR));
    await store.sweep(30 * 24 * HOUR);
    expect(await revoked.isRevoked('jti-spent')).toBe(false);
    expect(await revoked.isRevoked('jti-live')).toBe(true);
  });
});
