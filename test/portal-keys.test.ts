// The portal lane as a confidential client with private_key_jwt (SMART's asymmetric client
// authentication) against real SMART on FHIR servers on loopback: the key set carecircle serves, the
// launch, a refresh and a revoking disconnect signed with its key, and a key the portal does not know.
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MongoClient } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../src/log.js';
import { resolveDataKey, SecretBox } from '../src/partner/secretBox.js';
import { PortalStore } from '../src/portal/connections.js';
import { portalSyncJob } from '../src/portal/sweep.js';
import { caregiverWithKey } from './harness/identity.js';
import { surfaceEnv, startTestService, testConfig, type TestService } from './harness/service.js';
import { ROSA_RECORDS, startSmartServer, type SmartServer } from './harness/smartServer.js';

let svc: TestService;
let keyed: SmartServer;
let otherKey: SmartServer;
let noJwt: SmartServer;
let mongo: MongoClient;
const dir = mkdtempSync(join(tmpdir(), 'portal-keys-'));

const ec = generateKeyPairSync('ec', { namedCurve: 'P-384' });
const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
/** The key a health system has registered for carecircle where carecircle signs with `rsa`. */
const registeredElsewhere = generateKeyPairSync('rsa', { modulusLength: 2048 });
const publicJwk = (key: KeyObject, kid: string, alg: string) => ({ ...key.export({ format: 'jwk' }), kid, alg, use: 'sig' });
const ecJwk = publicJwk(ec.publicKey, 'cc-es384', 'ES384');
const rsaJwk = publicJwk(rsa.publicKey, 'cc-rs384', 'RS384');
const ecFile = join(dir, 'portal-ec.pem');
const rsaFile = join(dir, 'portal-rsa.jwk');
writeFileSync(ecFile, ec.privateKey.export({ format: 'pem', type: 'pkcs8' }));
writeFileSync(rsaFile, JSON.stringify(rsa.privateKey.export({ format: 'jwk' })));

beforeAll(async () => {
  const surfaces = await surfaceEnv();
  const redirectUri = `${surfaces.APP_URL}/portal/callback`;
  // Access tokens live 30 s, inside the minute before expiry in which carecircle renews them: every sync refreshes.
  [keyed, otherKey, noJwt] = await Promise.all([
    startSmartServer({ clientId: 'carecircle-keyed', redirectUri, accessTokenTtl: 30, clientJwks: { keys: [ecJwk] } }),
    startSmartServer({ clientId: 'carecircle-other', redirectUri, clientJwks: { keys: [publicJwk(registeredElsewhere.publicKey, 'cc-rs384', 'RS384')] } }),
    startSmartServer({ clientId: 'carecircle', redirectUri }),
  ]);
  const issuers = [
    { name: 'Hillcrest Health', url: keyed.fhirBase, clientId: 'carecircle-keyed', privateKeyFile: ecFile, keyId: 'cc-es384' },
    { name: 'Valley Medical', url: otherKey.fhirBase, clientId: 'carecircle-other', privateKeyFile: rsaFile, keyId: 'cc-rs384' },
    { name: 'Old Mill Clinic', url: noJwt.fhirBase, clientId: 'carecircle', privateKeyFile: ecFile, keyId: 'cc-es384' },
  ];
  svc = await startTestService({ env: { ...surfaces, FHIR_ISSUERS: JSON.stringify(issuers), FHIR_CLIENT_ID: 'carecircle', BUS_TIMEOUT_MS: '30000' } });
  mongo = await MongoClient.connect(svc.mongoUrl);
}, 60_000);

afterAll(async () => {
  await mongo?.close();
  await svc?.stop();
  await Promise.all([keyed, otherKey, noJwt].map((s) => s?.close()));
  rmSync(dir, { recursive: true, force: true });
});

const connections = () => mongo.db().collection('portal_connections');

async function post(cookie: string, path: string, fields: Record<string, string> = {}) {
  const res = await fetch(`${svc.urls.app}${path}`, {
    method: 'POST',
    redirect: 'manual',
    headers: { cookie, origin: new URL(svc.config.appUrl).origin, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(fields).toString(),
  });
  return { status: res.status, location: res.headers.get('location') ?? '', text: await res.text() };
}

async function get(cookie: string, url: string) {
  const res = await fetch(url.startsWith('http') ? url : `${svc.urls.app}${url}`, { redirect: 'manual', headers: { cookie } });
  return { status: res.status, location: res.headers.get('location') ?? '', text: await res.text() };
}

let family = 0;
/** A caregiver who starts connecting the listed portal `issuer` and signs in there: the answer carecircle gives the portal's return. */
async function signedIn(issuer: string, portal: SmartServer) {
  const who = await caregiverWithKey(svc, `portal-keys-${++family}@example.com`, { firstName: 'Rosa', lastName: 'Rivera' });
  const start = await post(who.cookie, `/care/${who.lovedOneId}/portal/connect`, { issuer });
  if (start.status !== 303) return { ...who, done: start, base: `/care/${who.lovedOneId}/portal` };
  const done = await get(who.cookie, (await portal.signIn(start.location)).href);
  return { ...who, done, base: `/care/${who.lovedOneId}/portal` };
}

describe('portal with private_key_jwt', () => {
  it('portal keys - the key set at /.well-known/portal-jwks.json holds the public half of each configured key, once per key id', async () => {
    const res = await fetch(`${svc.urls.app}/.well-known/portal-jwks.json`);
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    const jwks = (await res.json()) as { keys: Record<string, unknown>[] };
    expect(jwks.keys).toEqual([ecJwk, rsaJwk]);
    for (const key of jwks.keys) for (const secret of ['d', 'p', 'q', 'dp', 'dq', 'qi']) expect(key).not.toHaveProperty(secret);
  });

  it('portal keys - the whole launch, a refresh and a revoking disconnect authenticate with the key (ES384, aud the token endpoint)', async () => {
    const c = await signedIn('0', keyed);
    expect(c.done.status, c.done.text).toBe(303);
    const key = /#portal-(\w+)$/.exec(c.done.location)?.[1] ?? '';
    // The portal takes only private_key_jwt from this client: the code was exchanged with a signed assertion.
    const confirm = await post(c.cookie, `${c.base}/${key}/confirm`);
    expect(confirm.status, confirm.text).toBe(303);
    const records = await mongo.db().collection('care_events').find({ lovedOneId: c.lovedOneId, source: 'portal' }).toArray();
    expect(records.map((r) => r.provenance.id).sort()).toEqual(ROSA_RECORDS);

    // The access token lives 30 s: this sync refreshes, and the rotated refresh token replaces the old one.
    const before = new Set(keyed.refreshTokens());
    expect((await post(c.cookie, `${c.base}/${key}/sync`)).status).toBe(303);
    const after = keyed.refreshTokens();
    expect(after.filter((t) => !before.has(t))).toHaveLength(1);

    // Disconnect revokes at the portal (with the key too), then forgets here.
    expect((await post(c.cookie, `${c.base}/${key}/disconnect`)).status).toBe(303);
    expect(after.filter((t) => !keyed.refreshTokens().includes(t))).toHaveLength(1);
    expect(await connections().countDocuments({ lovedOneId: c.lovedOneId })).toBe(0);

    // Each token call carried an assertion signed ES384 under the key id, for the token endpoint (as SMART asks).
    const seen = keyed.assertions.map((a) => a.path);
    expect(seen.filter((p) => p === '/token').length).toBeGreaterThanOrEqual(2);
    expect(seen).toContain('/token/revocation');
    for (const a of keyed.assertions) expect(a).toMatchObject({ alg: 'ES384', kid: 'cc-es384', aud: `${keyed.issuer}/token` });
  });

  it('portal keys - a portal that registered another key refuses the sign-in, and the page says the key is the operator’s to fix', async () => {
    const c = await signedIn('1', otherKey);
    expect(c.done.status).toBe(400);
    expect(c.done.text).toContain(
      "Valley Medical refused carecircle's client credentials: the key carecircle signs with (key id cc-rs384) is not the one registered there for client carecircle-other",
    );
    expect(await connections().countDocuments({ lovedOneId: c.lovedOneId })).toBe(0);
  });

  it('portal keys - when the portal stops knowing the key, the refused refresh is said on the connection as the operator’s to fix, not as sign in again', async () => {
    const c = await signedIn('0', keyed);
    const key = /#portal-(\w+)$/.exec(c.done.location)?.[1] ?? '';
    expect((await post(c.cookie, `${c.base}/${key}/confirm`)).status).toBe(303);
    // The same portal, with carecircle now signing with a key it never registered.
    const rekeyed = testConfig({
      FHIR_ISSUERS: JSON.stringify([
        { name: 'Hillcrest Health', url: keyed.fhirBase, clientId: 'carecircle-keyed', privateKeyFile: rsaFile, keyId: 'cc-rs384' },
      ]),
    });
    const config = { ...svc.config, fhirIssuers: rekeyed.fhirIssuers };
    const log = createLogger('silent');
    const job = portalSyncJob(config, new PortalStore(mongo.db(), new SecretBox(resolveDataKey(svc.config, log))), svc.timelines, Date.now, log);
    await connections().updateOne({ lovedOneId: c.lovedOneId }, { $set: { lastTriedAt: new Date(Date.now() - 86_400_000) } });
    expect(await job.run()).toMatchObject({ failed: 1 });
    const stored = await connections().findOne({ lovedOneId: c.lovedOneId });
    expect(stored).toMatchObject({ status: 'active' });
    expect(stored!.lastError).toContain(
      "Hillcrest Health refused carecircle's client credentials: the key carecircle signs with (key id cc-rs384) is not the one registered there for client carecircle-keyed",
    );
    expect((await get(c.cookie, c.base)).text).toContain('the key carecircle signs with (key id cc-rs384) is not the one registered there');
  });

  it('portal keys - a key configured for a portal that does not advertise private_key_jwt is named before the family is sent to sign in', async () => {
    const c = await signedIn('2', noJwt);
    expect(c.done.status).toBe(400);
    expect(c.done.text).toContain("Old Mill Clinic's portal does not take private_key_jwt client authentication");
    expect(c.done.text).toContain('client_secret_basic, none');
  });

  it('portal keys - a key file that does not parse, is not ES384 or RS384, or lacks its key id stops the start naming the portal, never the key', () => {
    const bad = join(dir, 'not-a-key.pem');
    writeFileSync(bad, '-----BEGIN PRIVATE KEY-----\nc2VjcmV0LWJ1dC1ub3QtYS1rZXk=\n-----END PRIVATE KEY-----\n');
    const p256 = join(dir, 'p256.pem');
    writeFileSync(p256, generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'pem', type: 'pkcs8' }));
    const load = (entry: Record<string, string>) => {
      try {
        testConfig({ FHIR_ISSUERS: JSON.stringify([{ name: 'Hillcrest Health', url: 'https://fhir.example.org/r4', clientId: 'cc', ...entry }]) });
        return '';
      } catch (err) {
        return (err as Error).message;
      }
    };
    const unparsed = load({ privateKeyFile: bad, keyId: 'k1' });
    expect(unparsed).toContain(`FHIR_ISSUERS: Hillcrest Health: privateKeyFile ${bad} does not hold a private key as PEM or JWK`);
    expect(unparsed).not.toContain('c2VjcmV0');
    expect(load({ privateKeyFile: p256, keyId: 'k1' })).toContain('Hillcrest Health: privateKeyFile');
    expect(load({ privateKeyFile: p256, keyId: 'k1' })).toContain('use a P-384 EC key (ES384) or an RSA key of at least 2048 bits (RS384)');
    expect(load({ privateKeyFile: join(dir, 'missing.pem'), keyId: 'k1' })).toContain('could not be read (ENOENT)');
    expect(load({ privateKeyFile: ecFile })).toContain('Hillcrest Health: set both "privateKeyFile" and "keyId", or neither');
    // The list may carry client secrets: a bad entry is named by where it is, the value never repeated.
    const secretShown = load({ clientSecret: 'portal-secret-never-shown', url: 'not a url' });
    expect(secretShown).toContain('FHIR_ISSUERS: 0.url:');
    expect(secretShown).not.toContain('portal-secret-never-shown');
    expect(load({ privateKeyFile: ecFile, keyId: 'k1' })).toBe('');
  });
});
