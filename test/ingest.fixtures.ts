// Shared set-up for the ingest and partner tests: a partner with its secret, a family with a loved
// one and a session, signed requests, and the family's link made through the real worker route.
import type { Credentials } from '../src/auth/credentials.js';
import { randomBytes } from 'node:crypto';
import type { Db } from 'mongodb';
import { vi } from 'vitest';
import { subjects } from '../src/bus/subjects.js';
import { sliceSubject } from '../src/slice/contract.js';
import type { Bus } from '../src/bus/types.js';
import type { Config } from '../src/config.js';
import { signBody } from '../src/partner/signature.js';
import { ingestBacklog, ingestStream } from '../src/ingest/stream.js';
import type { PartnerCareEvent } from '../src/ingest/writer.js';
import { PartnerStore } from '../src/partner/records.js';
import { parseDataKey, SecretBox } from '../src/partner/secretBox.js';
import { SessionStore } from '../src/auth/sessions.js';
import { WORKSPACE_COLLECTIONS, WorkspaceStore } from '../src/family/records.js';
import { openTimelines } from '../src/store/timeline/timelines.js';

/** A fixed data key for the tests (so child processes and the test read the same secrets). */
export const TEST_DATA_KEY = Buffer.alloc(32, 7).toString('base64');

export const partnerStore = (db: Db, credentials: Credentials) => new PartnerStore(db, new SecretBox(parseDataKey(TEST_DATA_KEY)), credentials);

export interface Partner {
  institutionId: string;
  secretId: string;
  secret: string;
}

export async function onboard(db: Db, credentials: Credentials, name = 'Test Home Care'): Promise<Partner> {
  const { institution, secret } = await partnerStore(db, credentials).create({ name, id: `inst-${randomBytes(5).toString('hex')}` });
  return { institutionId: institution._id, secretId: secret.id, secret: secret.value };
}

export interface Family {
  uid: string;
  workspaceId: string;
  lovedOneId: string;
  cookie: string;
}

export async function family(db: Db, credentials: Credentials, config: Config): Promise<Family> {
  const uid = `u-${randomBytes(5).toString('hex')}`;
  const email = `${uid}@example.com`;
  const ws = new WorkspaceStore(db, credentials, config.inboxDomain, await openTimelines(db));
  await ws.upsertUser({ uid, email });
  const workspace = await ws.createWorkspace({ name: 'The Test Family', owner: { uid, email }, sandbox: false });
  const lovedOne = await ws.addLovedOne(workspace._id, { firstName: 'Rose', lastName: 'Test' }, false);
  const { token } = await new SessionStore(db, credentials).create({ uid, email, tenant: 'family' });
  return { uid, workspaceId: workspace._id, lovedOneId: lovedOne._id, cookie: `cc_session=${token}` };
}

export interface Signed {
  body?: string;
  timestamp?: string;
  signature?: string;
  secret?: string;
  institution?: string;
  headers?: Record<string, string>;
}

export interface PipeReply {
  status: number;
  headers: Headers;
  json: any;
}

/** One signed call to the pipe host, with every part overridable. */
export async function pipeCall(pipeUrl: string, method: string, path: string, partner: Partner, body: unknown, o: Signed = {}): Promise<PipeReply> {
  const text = o.body ?? JSON.stringify(body);
  const res = await fetch(`${pipeUrl}${path}`, {
    method,
    headers: {
      'content-type': 'application/json',
      'x-pipe-institution': o.institution ?? partner.institutionId,
      'x-pipe-timestamp': o.timestamp ?? new Date().toISOString(),
      'x-pipe-signature': o.signature ?? signBody(o.secret ?? partner.secret, text),
      ...o.headers,
    },
    body: text,
  });
  const raw = await res.text();
  return { status: res.status, headers: res.headers, json: raw ? JSON.parse(raw) : undefined };
}

export const visit = (partner: Partner, subjectRef: string, extra: Record<string, unknown> = {}) => ({
  institution_id: partner.institutionId,
  subject_ref: subjectRef,
  event_type: 'visit_started',
  occurred_at: new Date(Date.now() - 60_000).toISOString(),
  payload: { caregiver_id: 'cg-12', scheduled_start: '2026-11-22T09:00:00Z', actual_start: new Date(Date.now() - 60_000).toISOString() },
  ...extra,
});

export const postEvent = (pipeUrl: string, partner: Partner, event: unknown, o: Signed = {}) => pipeCall(pipeUrl, 'POST', '/pipe/v1/events', partner, event, o);

export const setFamilyShare = (pipeUrl: string, partner: Partner, subjectRef: string, enabled: boolean, o: Signed = {}) =>
  pipeCall(
    pipeUrl,
    'PUT',
    `/pipe/v1/clients/${encodeURIComponent(subjectRef)}/family-share`,
    partner,
    { enabled, subject_ref: subjectRef, requested_at: new Date().toISOString() },
    o,
  );

export const purge = (pipeUrl: string, partner: Partner, subjectRef: string) =>
  pipeCall(pipeUrl, 'DELETE', `/pipe/v1/clients/${encodeURIComponent(subjectRef)}/events`, partner, {
    subject_ref: subjectRef,
    requested_at: new Date().toISOString(),
  });

/** The family enters the code, through the worker route the app host forwards to. */
export async function enterLinkCode(bus: Bus, config: Config, fam: Family, code: string, lovedOneId = fam.lovedOneId, headers: Record<string, string> = {}) {
  const reply = (await bus.request(
    sliceSubject(config.busNamespace, 'ingest'),
    {
      v: 1,
      method: 'POST',
      path: '/api/family-share/link',
      query: {},
      headers: { cookie: fam.cookie, origin: new URL(config.appUrl).origin, ...headers },
      body: { code, lovedOneId },
      clientIp: '127.0.0.1',
      requestId: `t-${randomBytes(4).toString('hex')}`,
    },
    { timeoutMs: 5_000 },
  )) as { status: number; body: any };
  return reply;
}

/** Turn family-share on for the subject and link it to the family's loved one. */
export async function shareWith(
  svc: { urls: Record<string, string>; bus: Bus; config: Config },
  partner: Partner,
  subjectRef: string,
  fam: Family,
): Promise<void> {
  const on = await setFamilyShare(svc.urls.pipe!, partner, subjectRef, true);
  if (on.status !== 200 || !on.json.link_code) throw new Error(`family-share on failed: ${on.status} ${JSON.stringify(on.json)}`);
  const linked = await enterLinkCode(svc.bus, svc.config, fam, on.json.link_code);
  if (linked.status !== 200) throw new Error(`link failed: ${linked.status} ${JSON.stringify(linked.body)}`);
}

export const careEvents = (db: Db) => db.collection<PartnerCareEvent>(WORKSPACE_COLLECTIONS.careEvents);

/** Wait (bounded) until the consumer has written `count` care events matching `filter`. */
export function storedEvents(db: Db, filter: Record<string, unknown>, count: number, timeoutMs = 10_000): Promise<PartnerCareEvent[]> {
  return vi.waitFor(
    async () => {
      const rows = await careEvents(db).find(filter).toArray();
      if (rows.length < count) throw new Error(`${rows.length} of ${count} care events stored`);
      return rows;
    },
    { timeout: timeoutMs, interval: 25 },
  );
}

/** Wait (bounded) until both lanes' durable consumers have nothing pending or unacknowledged. */
export async function drained(bus: Bus, config: Config, timeoutMs = 15_000): Promise<void> {
  const durable = bus.durable;
  if (!durable) return;
  const s = ingestStream(config.busNamespace, subjects(config.busNamespace).ingestEvents);
  await vi.waitFor(
    async () => {
      const state = await ingestBacklog(durable, s);
      if (state.pending || state.ackPending) throw new Error(`ingest consumer not drained: ${state.pending} pending, ${state.ackPending} unacknowledged`);
    },
    { timeout: timeoutMs, interval: 25 },
  );
}
