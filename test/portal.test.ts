// The patient-portal lane against a real SMART on FHIR server on loopback (test/harness/smartServer.ts):
// the launch, the patient confirmation, the import into the timeline, tokens over time, and refusals.
import { MongoClient } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { passThroughCredentials } from '../src/auth/credentials.js';
import { createLogger } from '../src/log.js';
import { resolveDataKey, SecretBox } from '../src/partner/secretBox.js';
import { PortalStore } from '../src/portal/connections.js';
import { portalSweepJob } from '../src/portal/sweep.js';
import { caregiverWithKey, signIn } from './harness/identity.js';
import { surfaceEnv, startTestService, type TestService } from './harness/service.js';
import { startSmartServer, type SmartServer } from './harness/smartServer.js';

let svc: TestService;
let smart: SmartServer;
let v1: SmartServer;
let bare: SmartServer;
let mongo: MongoClient;

beforeAll(async () => {
  const surfaces = await surfaceEnv();
  const redirectUri = `${surfaces.APP_URL}/portal/callback`;
  // Access tokens live 30 s, inside the minute before expiry in which carecircle renews them: every sync refreshes.
  [smart, v1, bare] = await Promise.all([
    startSmartServer({ clientId: 'carecircle', redirectUri, accessTokenTtl: 30 }),
    startSmartServer({ clientId: 'carecircle-v1', redirectUri, v1Only: true, clientSecret: 'portal-secret-of-at-least-some-length' }),
    startSmartServer({ clientId: 'carecircle', redirectUri, noSmart: true }),
  ]);
  const issuers = [
    { name: 'Northside Health', url: smart.fhirBase, clientId: 'carecircle' },
    { name: 'Lakeside Clinic', url: v1.fhirBase, clientId: 'carecircle-v1', clientSecret: 'portal-secret-of-at-least-some-length' },
  ];
  svc = await startTestService({ env: { ...surfaces, FHIR_ISSUERS: JSON.stringify(issuers), FHIR_CLIENT_ID: 'carecircle' } });
  mongo = await MongoClient.connect(svc.mongoUrl);
}, 60_000);

afterAll(async () => {
  await mongo?.close();
  await svc?.stop();
  await Promise.all([smart, v1, bare].map((s) => s?.close()));
});

const db = () => mongo.db();
const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString();

/** A POST from one of the app's pages, as the browser sends a form. */
async function post(cookie: string, path: string, fields: Record<string, string> = {}) {
  const res = await fetch(`${svc.urls.app}${path}`, {
    method: 'POST',
    redirect: 'manual',
    headers: { cookie, origin: new URL(svc.config.appUrl).origin, 'content-type': 'application/x-www-form-urlencoded' },
    body: form(fields),
  });
  return { status: res.status, location: res.headers.get('location') ?? '', text: await res.text() };
}

async function get(cookie: string, pathOrUrl: string) {
  const res = await fetch(pathOrUrl.startsWith('http') ? pathOrUrl : `${svc.urls.app}${pathOrUrl}`, { redirect: 'manual', headers: { cookie } });
  return { status: res.status, location: res.headers.get('location') ?? '', text: await res.text() };
}

const portalRecords = (lovedOneId: string) => db().collection('care_events').find({ lovedOneId, source: 'portal' }).toArray();
const listed = async (lovedOneId: string) => (await portalRecords(lovedOneId)).filter((r) => !r.supersededBy);

let family = 0;
/** A caregiver with a loved one, signed in at the portal: the connection waits for confirmation. */
async function connected(issuer = '0', portal = smart) {
  const who = await caregiverWithKey(svc, `portal-${++family}@example.com`, { firstName: 'Rosa', lastName: 'Rivera' });
  const start = await post(who.cookie, `/care/${who.lovedOneId}/portal/connect`, { issuer });
  expect(start.status).toBe(303);
  const back = await portal.signIn(start.location);
  const done = await get(who.cookie, back.href);
  expect(done.status, done.text).toBe(303);
  const key = /#portal-(\w+)$/.exec(done.location)?.[1] ?? '';
  return { ...who, authorize: new URL(start.location), key, base: `/care/${who.lovedOneId}/portal` };
}

describe('portal', () => {
  it('portal - the whole launch: PKCE and SMART v2 scopes, the patient confirmed side by side, then every page of records on the timeline', async () => {
    const c = await connected();
    const q = c.authorize.searchParams;
    expect(q.get('code_challenge_method')).toBe('S256');
    expect(q.get('code_challenge')).toMatch(/^[\w-]{43}$/);
    expect(q.get('aud')).toBe(smart.fhirBase);
    expect(q.get('scope')!.split(' ')).toEqual(
      expect.arrayContaining(['openid', 'fhirUser', 'launch/patient', 'offline_access', 'patient/Observation.rs', 'patient/MedicationRequest.rs']),
    );

    // Nothing is imported before the primary caregiver says the portal's patient is the loved one.
    const page = await get(c.cookie, c.base);
    expect(page.text).toContain('Waiting for you to confirm the patient');
    expect(page.text).toMatch(/id="portal-patient-name">Rosa Rivera</);
    expect(page.text).toMatch(/id="portal-patient-birth">1944-05-12</);
    expect(await portalRecords(c.lovedOneId)).toHaveLength(0);

    // Tokens are sealed at rest: neither appears in the stored connection.
    const stored = await db().collection('portal_connections').findOne({ lovedOneId: c.lovedOneId });
    expect(JSON.stringify(stored)).not.toMatch(new RegExp(smart.refreshTokens().join('|')));

    const confirm = await post(c.cookie, `${c.base}/${c.key}/confirm`);
    expect(confirm.status, confirm.text).toBe(303);
    const records = await listed(c.lovedOneId);
    // Four vital signs (two pages of three), two results, two medications; nothing of the other patient.
    expect(records.map((r) => r.provenance.id).sort()).toEqual(['a1c-1', 'hr-1', 'hr-2', 'k-1', 'med-metoprolol', 'med-warfarin', 'temp-1', 'wt-1']);
    expect(smart.calls.some((call) => call.includes('category=vital-signs') && call.includes('_offset=3'))).toBe(true);
    const hr = records.find((r) => r.provenance.id === 'hr-2')!;
    expect(hr).toMatchObject({ eventType: 'portal_vital', source: 'portal', provenance: { portal: smart.fhirBase, resourceType: 'Observation', id: 'hr-2' } });
    expect(hr.payload).toMatchObject({ loinc: '8867-4', amount: 76, unit: '/min' });

    const timeline = await get(c.cookie, `/care/${c.lovedOneId}?days=365`);
    expect(timeline.text).toContain("Heart rate 76 /min, from Northside Health's portal");
    expect(timeline.text).toContain("Warfarin 2 mg tablet (stopped) on the clinicians' list, from Northside Health's portal");
    expect(timeline.text).toContain('Hemoglobin A1c 6.9 %');

    // A second sync changes nothing.
    await post(c.cookie, `${c.base}/${c.key}/sync`);
    expect(await portalRecords(c.lovedOneId)).toHaveLength(8);
  });

  it('portal - a fixture change is a new version: the re-sync supersedes the earlier record', async () => {
    const c = await connected();
    await post(c.cookie, `${c.base}/${c.key}/confirm`);
    const obs = await smart.repo.readResource('Observation', 'hr-2');
    await smart.repo.updateResource({ ...obs, valueQuantity: { value: 81, unit: '/min', system: 'http://unitsofmeasure.org', code: '/min' } } as never);
    try {
      expect((await post(c.cookie, `${c.base}/${c.key}/sync`)).status).toBe(303);
      const versions = (await portalRecords(c.lovedOneId)).filter((r) => r.provenance.id === 'hr-2');
      expect(versions).toHaveLength(2);
      const [old, now] = [versions.find((v) => v.supersededBy)!, versions.find((v) => !v.supersededBy)!];
      expect(now.payload.amount).toBe(81);
      expect(now.supersedes).toBe(old._id);
      expect((await listed(c.lovedOneId)).filter((r) => r.provenance.id === 'hr-2')).toHaveLength(1);
    } finally {
      await smart.repo.updateResource(obs);
    }
  });

  it('portal - a failed page leaves the last complete sync in place and the OperationOutcome is said in plain words', async () => {
    const c = await connected();
    await post(c.cookie, `${c.base}/${c.key}/confirm`);
    const before = (await listed(c.lovedOneId)).map((r) => r._id).sort();
    // A changed vital sign is read before the medication list fails: it must not be filed alone.
    const obs = await smart.repo.readResource('Observation', 'hr-1');
    await smart.repo.updateResource({ ...obs, valueQuantity: { value: 90, unit: '/min', system: 'http://unitsofmeasure.org', code: '/min' } } as never);
    smart.failNext('MedicationRequest', 1, 500, undefined, 'The medication service is down for maintenance');
    try {
      const sync = await post(c.cookie, `${c.base}/${c.key}/sync`);
      expect(sync.status).toBe(400);
      expect(sync.text).toContain("Northside Health's portal could not give the medication list: The medication service is down for maintenance");
      expect((await listed(c.lovedOneId)).map((r) => r._id).sort()).toEqual(before);
      expect((await get(c.cookie, c.base)).text).toContain('The medication service is down for maintenance');
    } finally {
      await smart.repo.updateResource(obs);
    }
  });

  it('portal - 429 with Retry-After is waited out and the sync completes', async () => {
    const c = await connected();
    await post(c.cookie, `${c.base}/${c.key}/confirm`);
    const asked = smart.calls.length;
    smart.failNext('MedicationRequest', 1, 429, '1');
    expect((await post(c.cookie, `${c.base}/${c.key}/sync`)).status).toBe(303);
    expect(smart.calls.slice(asked).filter((call) => call.startsWith('GET /MedicationRequest'))).toHaveLength(2);

    // A wait longer than carecircle holds a request for ends the sync as transient: 503 with Retry-After.
    smart.failNext('MedicationRequest', 1, 503, '3600');
    const busy = await fetch(`${svc.urls.app}${c.base}/${c.key}/sync`, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie: c.cookie, origin: new URL(svc.config.appUrl).origin, 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(busy.status).toBe(503);
    expect(busy.headers.get('retry-after')).toBe('60');
    expect(await busy.text()).toContain('portal is busy; try Sync now again in a few minutes');
  });

  it('portal - tokens are refreshed before expiry and the rotated refresh token replaces the old one', async () => {
    const c = await connected();
    await post(c.cookie, `${c.base}/${c.key}/confirm`);
    const before = new Set(smart.refreshTokens());
    expect((await post(c.cookie, `${c.base}/${c.key}/sync`)).status).toBe(303);
    const after = smart.refreshTokens();
    // The connection's previous refresh token is spent; a new one took its place.
    expect(after.filter((t) => !before.has(t))).toHaveLength(1);
    expect([...before].filter((t) => !after.includes(t))).toHaveLength(1);
  });

  it('portal - a refused refresh marks the connection "needs you to sign in again"', async () => {
    const c = await connected();
    await post(c.cookie, `${c.base}/${c.key}/confirm`);
    smart.revokeEverything();
    const sync = await post(c.cookie, `${c.base}/${c.key}/sync`);
    expect(sync.status).toBe(400);
    expect(sync.text).toContain("no longer accepts carecircle's sign-in; sign in again");
    const page = await get(c.cookie, c.base);
    expect(page.text).toContain('Needs you to sign in again');
    expect(page.text).toContain('Sign in again');
    expect((await post(c.cookie, `${c.base}/${c.key}/sync`)).status).toBe(409);

    // Signing in again to the same patient restores the connection without a second confirmation.
    const again = await post(c.cookie, `${c.base}/connect`, { url: smart.fhirBase });
    expect(again.status).toBe(303);
    expect((await get(c.cookie, (await smart.signIn(again.location)).href)).status).toBe(303);
    expect((await get(c.cookie, c.base)).text).toContain('<strong>Connected</strong>');
    expect((await post(c.cookie, `${c.base}/${c.key}/sync`)).status).toBe(303);
  });

  it('portal - a family member sees the connection but cannot connect, confirm or disconnect', async () => {
    const c = await connected();
    const sent = await post(c.cookie, '/family/invites', { email: 'portal-sibling@example.com' });
    const link = new RegExp(`${svc.config.appUrl}/join/[A-Za-z0-9._%-]+`).exec(sent.text)![0];
    const sibling = await signIn(svc, 'portal-sibling@example.com', 'Sam Sibling');
    expect((await post(sibling, new URL(link).pathname)).status).toBe(303);

    const page = await get(sibling, c.base);
    expect(page.status).toBe(200);
    expect(page.text).toContain('The primary caregiver confirms the patient.');
    expect(page.text).not.toContain('Connect a portal');
    for (const path of [`${c.base}/${c.key}/confirm`, `${c.base}/${c.key}/disconnect`, `${c.base}/connect`])
      expect((await post(sibling, path)).status).toBe(403);
    expect(await portalRecords(c.lovedOneId)).toHaveLength(0);
  });

  it('portal - disconnect revokes the tokens at the portal and deletes them here', async () => {
    const c = await connected();
    await post(c.cookie, `${c.base}/${c.key}/confirm`);
    const live = new Set(smart.refreshTokens());
    const stored = await db().collection('portal_connections').findOne({ lovedOneId: c.lovedOneId });
    expect(stored).not.toBeNull();
    expect((await post(c.cookie, `${c.base}/${c.key}/disconnect`)).status).toBe(303);
    expect(await db().collection('portal_connections').findOne({ lovedOneId: c.lovedOneId })).toBeNull();
    // Exactly this connection's refresh token is gone at the portal.
    expect([...live].filter((t) => !smart.refreshTokens().includes(t))).toHaveLength(1);
    // The records stay on the timeline.
    expect((await listed(c.lovedOneId)).length).toBeGreaterThan(0);
  });

  it('portal - when a loved one is removed, the sweep revokes and deletes their portal connection', async () => {
    const c = await connected();
    await post(c.cookie, `${c.base}/${c.key}/confirm`);
    const live = new Set(smart.refreshTokens());
    expect((await post(c.cookie, `/workspace/loved-ones/${c.lovedOneId}/remove`)).status).toBe(303);
    const log = createLogger('silent');
    const sweep = portalSweepJob(svc.config, db(), passThroughCredentials(db()), new PortalStore(db(), new SecretBox(resolveDataKey(svc.config, log))), log);
    expect(await sweep.run()).toEqual({ removed: 1 });
    expect(await db().collection('portal_connections').countDocuments({ lovedOneId: c.lovedOneId })).toBe(0);
    expect([...live].filter((t) => !smart.refreshTokens().includes(t))).toHaveLength(1);
    expect(await sweep.run()).toEqual({ removed: 0 });
  });

  it('portal - a tampered state or code is refused and nothing is connected', async () => {
    const who = await caregiverWithKey(svc, 'portal-tamper@example.com');
    const start = await post(who.cookie, `/care/${who.lovedOneId}/portal/connect`, { issuer: '0' });
    const back = await smart.signIn(start.location);

    const forged = new URL(back);
    forged.searchParams.set('state', 'x'.repeat(43));
    const refused = await get(who.cookie, forged.href);
    expect(refused.status).toBe(400);
    expect(refused.text).toContain('This sign-in did not start here');

    const wrongCode = new URL(back);
    wrongCode.searchParams.set('code', 'not-the-code');
    const badCode = await get(who.cookie, wrongCode.href);
    expect(badCode.status).toBe(400);
    expect(badCode.text).toContain('Northside Health did not accept the sign-in');

    // The state was spent by the refused code: the genuine return cannot be replayed either.
    expect((await get(who.cookie, back.href)).status).toBe(400);
    // Another person cannot complete someone else's launch.
    const other = await caregiverWithKey(svc, 'portal-other@example.com');
    const start2 = await post(who.cookie, `/care/${who.lovedOneId}/portal/connect`, { issuer: '0' });
    expect((await get(other.cookie, (await smart.signIn(start2.location)).href)).status).toBe(400);
    expect(await db().collection('portal_connections').countDocuments({ lovedOneId: who.lovedOneId })).toBe(0);
  });

  it('portal - a server advertising only SMART v1 is asked v1 scopes, as a confidential client, and imports', async () => {
    const c = await connected('1', v1);
    const scopes = c.authorize.searchParams.get('scope')!.split(' ');
    expect(scopes).toContain('patient/Observation.read');
    expect(scopes.some((s) => s.endsWith('.rs'))).toBe(false);
    expect((await post(c.cookie, `${c.base}/${c.key}/confirm`)).status).toBe(303);
    expect(await listed(c.lovedOneId)).toHaveLength(8);
  });

  it('portal - a base URL that is not FHIR, or FHIR without SMART sign-in, gets a clear message', async () => {
    const who = await caregiverWithKey(svc, 'portal-urls@example.com');
    const notFhir = await post(who.cookie, `/care/${who.lovedOneId}/portal/connect`, { url: `${svc.urls.site}/fhir` });
    expect(notFhir.status).toBe(400);
    expect(notFhir.text).toContain('does not answer as a FHIR server');
    const noSmart = await post(who.cookie, `/care/${who.lovedOneId}/portal/connect`, { url: bare.fhirBase });
    expect(noSmart.status).toBe(400);
    expect(noSmart.text).toContain('is a FHIR server, but it offers no SMART sign-in');
    const notUrl = await post(who.cookie, `/care/${who.lovedOneId}/portal/connect`, { url: 'ftp://example.org/fhir' });
    expect(notUrl.status).toBe(400);
    expect(notUrl.text).toContain('url: enter the FHIR base URL');
  });
});
