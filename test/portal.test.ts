// The patient-portal lane against a real SMART on FHIR server on loopback (test/harness/smartServer.ts):
// the launch, the patient confirmation, the import into the timeline, tokens over time, and refusals.
import { MongoClient } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { passThroughCredentials } from '../src/auth/credentials.js';
import { createLogger } from '../src/log.js';
import { resolveDataKey, SecretBox } from '../src/partner/secretBox.js';
import { PortalStore } from '../src/portal/connections.js';
import { portalSweepJob } from '../src/portal/sweep.js';
import { caregiverWithKey, signIn } from './harness/identity.js';
import { surfaceEnv, startTestService, type TestService } from './harness/service.js';
import { ROSA_RECORDS, startSmartServer, type SmartServer } from './harness/smartServer.js';

let svc: TestService;
let smart: SmartServer;
let v1: SmartServer;
let bare: SmartServer;
let mongo: MongoClient;
/** What the service was configured with, for a second cron process beside it. */
let portalEnv: Record<string, string>;

beforeAll(async () => {
  const surfaces = await surfaceEnv();
  const redirectUri = `${surfaces.APP_URL}/portal/callback`;
  // Access tokens live 30 s, inside the minute before expiry in which carecircle renews them: every sync refreshes.
  [smart, v1, bare] = await Promise.all([
    startSmartServer({ clientId: 'carecircle', redirectUri, accessTokenTtl: 30 }),
    // An older server: v1 scopes, no appointments (its CapabilityStatement says so), no time on its Bundles.
    startSmartServer({
      clientId: 'carecircle-v1',
      redirectUri,
      v1Only: true,
      clientSecret: 'portal-secret-of-at-least-some-length',
      unsupported: ['Appointment'],
      noBundleTime: true,
    }),
    startSmartServer({ clientId: 'carecircle', redirectUri, noSmart: true }),
  ]);
  const issuers = [
    { name: 'Northside Health', url: smart.fhirBase, clientId: 'carecircle' },
    { name: 'Lakeside Clinic', url: v1.fhirBase, clientId: 'carecircle-v1', clientSecret: 'portal-secret-of-at-least-some-length' },
  ];
  // A first sync reads a few dozen pages of three: under a loaded test machine that can take longer
  // than the gateway's usual wait, after which "Sync now" would answer while the sync goes on.
  portalEnv = { FHIR_ISSUERS: JSON.stringify(issuers), FHIR_CLIENT_ID: 'carecircle', BUS_TIMEOUT_MS: '30000', GATEWAY_RETRY_WINDOW_MS: '40000' };
  svc = await startTestService({ env: { ...surfaces, ...portalEnv } });
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
  it('portal - the whole launch: PKCE and SMART v2 scopes, the patient confirmed side by side, then every page of every record type on the timeline', async () => {
    const c = await connected();
    const q = c.authorize.searchParams;
    expect(q.get('code_challenge_method')).toBe('S256');
    expect(q.get('code_challenge')).toMatch(/^[\w-]{43}$/);
    expect(q.get('aud')).toBe(smart.fhirBase);
    expect(q.get('scope')!.split(' ')).toEqual(
      expect.arrayContaining([
        'openid',
        'fhirUser',
        'launch/patient',
        'offline_access',
        ...['Observation', 'MedicationRequest', 'MedicationStatement', 'Condition', 'AllergyIntolerance', 'Encounter', 'Appointment', 'Immunization'].map(
          (type) => `patient/${type}.rs`,
        ),
      ]),
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
    // Every record of Rosa's, over several pages of three; nothing of the other patient.
    expect(records.map((r) => r.provenance.id).sort()).toEqual(ROSA_RECORDS);
    expect(smart.calls.some((call) => call.includes('category=vital-signs') && call.includes('_offset=3'))).toBe(true);
    const one = (id: string) => records.find((r) => r.provenance.id === id)!;
    expect(one('hr-2')).toMatchObject({
      eventType: 'portal_vital',
      source: 'portal',
      provenance: { portal: smart.fhirBase, resourceType: 'Observation', id: 'hr-2' },
    });
    expect(one('hr-2').payload).toMatchObject({ loinc: '8867-4', amount: 76, unit: '/min' });
    expect(one('bp-12').payload).toMatchObject({ name: 'Blood pressure', value: '137/82 mm[Hg]' });
    // The panel keeps each part with its code, which is what the blood-pressure chart reads.
    expect(one('bp-12').payload.components).toEqual([
      { loinc: '8480-6', amount: 137, unit: 'mm[Hg]' },
      { loinc: '8462-4', amount: 82, unit: 'mm[Hg]' },
    ]);
    expect(one('med-warfarin').payload).toEqual({
      portal_name: 'Northside Health',
      medication: 'Warfarin 2 mg tablet',
      status: 'stopped',
      dosage: 'One tablet by mouth every evening',
      resource: 'MedicationRequest',
    });
    expect(one('ms-aspirin')).toMatchObject({
      eventType: 'portal_medication',
      payload: { medication: 'Aspirin 81 mg tablet', resource: 'MedicationStatement' },
    });
    expect(one('cond-diabetes')).toMatchObject({
      eventType: 'portal_condition',
      payload: { portal_name: 'Northside Health', name: 'Type 2 diabetes mellitus', clinical_status: 'active', onset: '2019-03-02', code: '44054006' },
    });
    expect(one('allergy-penicillin')).toMatchObject({
      eventType: 'portal_allergy',
      payload: { substance: 'Penicillin', clinical_status: 'active', criticality: 'high', reaction: 'Hives, Swelling of the lips' },
    });
    expect(one('enc-office')).toMatchObject({
      eventType: 'portal_encounter',
      occurredAt: new Date('2026-09-01T15:00:00Z'),
      payload: { kind: 'Office visit', status: 'finished', reason: 'Blood pressure check', place: 'Northside Clinic, Suite 200' },
    });
    expect(one('enc-emergency').payload).toMatchObject({ kind: 'Emergency visit', place: 'Northside Hospital' });
    expect(one('appt-cardiology')).toMatchObject({
      eventType: 'portal_appointment',
      occurredAt: new Date('2026-12-10T16:00:00Z'),
      payload: {
        description: 'Cardiology follow-up',
        status: 'booked',
        start: '2026-12-10T16:00:00.000Z',
        end: '2026-12-10T16:30:00.000Z',
        place: 'Northside Clinic',
      },
    });
    expect(one('imm-flu')).toMatchObject({
      eventType: 'portal_immunization',
      payload: { vaccine: 'Influenza vaccine, 2026-2027 season', status: 'completed' },
    });

    const timeline = await get(c.cookie, `/care/${c.lovedOneId}?days=365`);
    expect(timeline.text).toContain("Heart rate 76 /min, from Northside Health's portal");
    expect(timeline.text).toContain("Warfarin 2 mg tablet (stopped) on the clinicians' list, from Northside Health's portal");
    expect(timeline.text).toContain("Aspirin 81 mg tablet reported as taken, from Northside Health's portal");
    expect(timeline.text).toContain('Hemoglobin A1c 6.9 %');
    expect(timeline.text).toContain("Condition: Pneumonia (resolved, since 2026-02-03), from Northside Health's portal");
    expect(timeline.text).toContain("Office visit at Northside Clinic, Suite 200, from Northside Health's portal");
    expect(timeline.text).toContain("Appointment: Diabetic eye exam at Northside Clinic (cancelled), from Northside Health's portal");
    expect(timeline.text).toContain("Immunization: Influenza vaccine, 2026-2027 season, from Northside Health's portal");

    // The portal page says what the sync did, in words.
    expect((await get(c.cookie, c.base)).text).toContain(`Last sync: ${ROSA_RECORDS.length} new records.`);

    // A second sync changes nothing.
    await post(c.cookie, `${c.base}/${c.key}/sync`);
    expect(await portalRecords(c.lovedOneId)).toHaveLength(ROSA_RECORDS.length);
  });

  it('portal - an incremental sync asks only for what changed: a changed record supersedes the earlier one, an added one is filed', async () => {
    const c = await connected();
    await post(c.cookie, `${c.base}/${c.key}/confirm`);
    const obs = await smart.repo.readResource('Observation', 'hr-2');
    await smart.repo.updateResource({ ...obs, valueQuantity: { value: 81, unit: '/min', system: 'http://unitsofmeasure.org', code: '/min' } } as never);
    await smart.repo.createResource(
      {
        resourceType: 'Condition',
        id: 'cond-new',
        clinicalStatus: { coding: [{ code: 'active' }] },
        code: { text: 'Osteoarthritis of the knee' },
        subject: { reference: 'Patient/rosa' },
        recordedDate: '2026-11-20',
      } as never,
      { assignedId: true },
    );
    const asked = smart.calls.length;
    try {
      expect((await post(c.cookie, `${c.base}/${c.key}/sync`)).status).toBe(303);
      // Every search carried the time of the last sync, on the portal's clock.
      const searches = smart.calls.slice(asked).filter((call) => !call.includes('_offset=') || call.includes('_offset=0'));
      expect(searches).toHaveLength(9);
      for (const call of searches) expect(call).toMatch(/_lastUpdated=gt\d{4}-\d\d-\d\dT[\d:.]+Z/);
      const versions = (await portalRecords(c.lovedOneId)).filter((r) => r.provenance.id === 'hr-2');
      expect(versions).toHaveLength(2);
      const [old, now] = [versions.find((v) => v.supersededBy)!, versions.find((v) => !v.supersededBy)!];
      expect(now.payload.amount).toBe(81);
      expect(now.supersedes).toBe(old._id);
      expect((await listed(c.lovedOneId)).filter((r) => r.provenance.id === 'hr-2')).toHaveLength(1);
      expect((await listed(c.lovedOneId)).find((r) => r.provenance.id === 'cond-new')?.payload).toMatchObject({ name: 'Osteoarthritis of the knee' });
      expect(await portalRecords(c.lovedOneId)).toHaveLength(ROSA_RECORDS.length + 2);
      expect((await get(c.cookie, c.base)).text).toContain('Last sync: 1 new record, 1 updated.');
    } finally {
      await smart.repo.updateResource(obs);
      await smart.repo.deleteResource('Condition', 'cond-new');
    }
  });

  it('portal - a sync with nothing changed makes at most one request per resource type', async () => {
    const c = await connected();
    await post(c.cookie, `${c.base}/${c.key}/confirm`);
    const asked = smart.calls.length;
    expect((await post(c.cookie, `${c.base}/${c.key}/sync`)).status).toBe(303);
    const calls = smart.calls.slice(asked);
    // Counted at the server: one search per read (Observation twice, by category), no second page, no second CapabilityStatement.
    const perRead: Record<string, string[]> = {};
    for (const call of calls) (perRead[`${/^GET \/(\w+)\?/.exec(call)?.[1]}${/category=([\w-]+)/.exec(call)?.[1] ?? ''}`] ??= []).push(call);
    expect(Object.keys(perRead).sort()).toEqual([
      'AllergyIntolerance',
      'Appointment',
      'Condition',
      'Encounter',
      'Immunization',
      'MedicationRequest',
      'MedicationStatement',
      'Observationlaboratory',
      'Observationvital-signs',
    ]);
    for (const [read, made] of Object.entries(perRead)) expect(made, read).toHaveLength(1);
    expect((await get(c.cookie, c.base)).text).toContain('Last sync: Nothing new.');
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

      // The failed sync did not move on from the last complete one: the next sync still finds the change.
      expect((await post(c.cookie, `${c.base}/${c.key}/sync`)).status).toBe(303);
      expect((await listed(c.lovedOneId)).find((r) => r.provenance.id === 'hr-1')?.payload.amount).toBe(90);
    } finally {
      await smart.repo.updateResource(obs);
    }
  });

  it('portal - a page that is not FHIR JSON, not a Bundle, or too large is said in plain words and nothing of that sync is filed', async () => {
    const c = await connected();
    await post(c.cookie, `${c.base}/${c.key}/confirm`);
    const before = (await listed(c.lovedOneId)).map((r) => r._id).sort();
    const obs = await smart.repo.readResource('Observation', 'hr-1');
    await smart.repo.updateResource({ ...obs, valueQuantity: { value: 88, unit: '/min', system: 'http://unitsofmeasure.org', code: '/min' } } as never);
    try {
      for (const [body, words] of [
        ['<html><body>Maintenance</body></html>', 'answered 200 with something that is not FHIR JSON while reading the medication list'],
        [JSON.stringify({ resourceType: 'Patient', id: 'rosa' }), 'sent the medication list in a shape that is not a FHIR Bundle'],
        [
          JSON.stringify({
            resourceType: 'Bundle',
            type: 'searchset',
            entry: [{ resource: { resourceType: 'MedicationRequest', id: 'x'.repeat(6 * 1024 * 1024) } }],
          }),
          'sent a page of the medication list too large to read',
        ],
      ] as const) {
        smart.answerNext('MedicationRequest', 1, 200, body);
        const sync = await post(c.cookie, `${c.base}/${c.key}/sync`);
        expect(sync.status).toBe(400);
        expect(sync.text).toContain(`Northside Health's portal ${words}`);
        expect((await listed(c.lovedOneId)).map((r) => r._id).sort()).toEqual(before);
      }
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

  it('portal - a sync longer than the gateway waits goes on in the background: Sync now answers, the page says it is running, then what it did', async () => {
    const c = await connected();
    await post(c.cookie, `${c.base}/${c.key}/confirm`);
    // A gateway on the same database that waits 4 s for a worker: the answer comes after 2.5 s at most.
    const impatient = await startTestService({ mongoUrl: svc.mongoUrl, env: { ...portalEnv, BUS_TIMEOUT_MS: '4000' } });
    try {
      const origin = new URL(impatient.config.appUrl).origin;
      const send = (path: string, method = 'GET') =>
        fetch(`${impatient.urls.app}${path}`, { method, redirect: 'manual', headers: { cookie: c.cookie, ...(method === 'POST' ? { origin } : {}) } });
      // The portal asks for an 8 s wait, which the sync honours.
      smart.failNext('Condition', 1, 429, '8');
      const sync = await send(`${c.base}/${c.key}/sync`, 'POST');
      expect(sync.status).toBe(303);
      const page = await (await send(c.base)).text();
      expect(page).toMatch(/Syncing now \(started \d\d:\d\d UTC\); reload this page for the outcome/);
      // Sync now again while it runs starts no second sync.
      const asked = smart.calls.length;
      expect((await send(`${c.base}/${c.key}/sync`, 'POST')).status).toBe(303);
      expect(smart.calls.length).toBe(asked);
      await vi.waitFor(async () => expect(await (await send(c.base)).text()).toContain('Last sync: Nothing new.'), { timeout: 30_000, interval: 500 });
    } finally {
      await impatient.stop();
    }
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

  it('portal - the scheduled sync runs once under the cron lease, for connections due, and leaves one needing sign-in alone', async () => {
    const due = await connected();
    await post(due.cookie, `${due.base}/${due.key}/confirm`);
    const signIn = await connected();
    await post(signIn.cookie, `${signIn.base}/${signIn.key}/confirm`);
    const connections = db().collection('portal_connections');
    await smart.repo.createResource(
      {
        resourceType: 'Immunization',
        id: 'imm-sweep',
        status: 'completed',
        vaccineCode: { text: 'Shingles vaccine' },
        patient: { reference: 'Patient/rosa' },
      } as never,
      { assignedId: true },
    );
    // A second cron process on the same database: both tick at once, and only the leader sweeps.
    const other = await startTestService({ role: 'cron', mongoUrl: svc.mongoUrl, env: portalEnv });
    try {
      const asked = smart.calls.length;
      // Both last tried a day ago; one needs the family to sign in again.
      const dayAgo = new Date(Date.now() - 86_400_000);
      await connections.updateOne({ lovedOneId: due.lovedOneId }, { $set: { lastTriedAt: dayAgo } });
      await connections.updateOne({ lovedOneId: signIn.lovedOneId }, { $set: { lastTriedAt: dayAgo, status: 'needs_sign_in' } });
      await Promise.all([svc.cron!.tick(), other.cron!.tick()]);
      expect(smart.calls.slice(asked).filter((call) => call.startsWith('GET /Immunization'))).toHaveLength(1);
      expect((await listed(due.lovedOneId)).some((r) => r.provenance.id === 'imm-sweep')).toBe(true);
      expect((await connections.findOne({ lovedOneId: due.lovedOneId }))!.lastTriedAt.getTime()).toBeGreaterThan(dayAgo.getTime());
      expect((await connections.findOne({ lovedOneId: signIn.lovedOneId }))!.lastTriedAt).toEqual(dayAgo);
      expect((await listed(signIn.lovedOneId)).some((r) => r.provenance.id === 'imm-sweep')).toBe(false);

      // Synced just now: the next tick leaves it until the interval has passed.
      const again = smart.calls.length;
      await Promise.all([svc.cron!.tick(), other.cron!.tick()]);
      expect(smart.calls.slice(again)).toEqual([]);
    } finally {
      await other.stop();
      await smart.repo.deleteResource('Immunization', 'imm-sweep');
    }
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
    // Its CapabilityStatement lists no Appointment: none is asked for, and the page says so.
    expect((await listed(c.lovedOneId)).map((r) => r.provenance.id).sort()).toEqual(ROSA_RECORDS.filter((id) => !id.startsWith('appt-')));
    expect(v1.calls.some((call) => call.startsWith('GET /Appointment'))).toBe(false);
    expect((await get(c.cookie, c.base)).text).toContain("Lakeside Clinic's portal does not share appointments.");

    // Its Bundles carry no time: the Date header is the portal's clock for the next sync.
    const asked = v1.calls.length;
    expect((await post(c.cookie, `${c.base}/${c.key}/sync`)).status).toBe(303);
    for (const call of v1.calls.slice(asked)) expect(call).toMatch(/_lastUpdated=gt\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.000Z/);
  });

  it('portal - a resource type the portal answers it does not serve is skipped, said so on the connection, and the sync completes', async () => {
    smart.serves.listResources = false;
    smart.serves.types.delete('Immunization');
    smart.serves.types.delete('AllergyIntolerance');
    try {
      const c = await connected();
      const confirm = await post(c.cookie, `${c.base}/${c.key}/confirm`);
      expect(confirm.status, confirm.text).toBe(303);
      const ids = (await listed(c.lovedOneId)).map((r) => r.provenance.id);
      expect(ids.sort()).toEqual(ROSA_RECORDS.filter((id) => !id.startsWith('imm-') && !id.startsWith('allergy-')));
      const page = await get(c.cookie, c.base);
      expect(page.text).toContain("Northside Health's portal does not share allergies and immunizations.");
      expect(page.text).toContain('<strong>Connected</strong>');
      expect(page.text).not.toContain('portal-error');
    } finally {
      smart.serves.listResources = true;
      smart.serves.types.add('Immunization').add('AllergyIntolerance');
    }
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
