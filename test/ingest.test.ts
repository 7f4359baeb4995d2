// Partner ingest over real NATS (JetStream) and a real MongoDB-compatible server: signing, statuses,
// family-share, de-duplication and purges, asserted on the care events the consumer writes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signBody } from '../src/partner/signature.js';
import { ingestKeyRecords } from './harness/ingestKeys.js';
import { startTestService, type TestService } from './harness/service.js';
import {
  careEvents,
  drained,
  enterLinkCode,
  family,
  onboard,
  partnerStore,
  pipeCall,
  postEvent,
  purge,
  setFamilyShare,
  shareWith,
  storedEvents,
  TEST_DATA_KEY,
  visit,
  type Family,
  type Partner,
} from './ingest.fixtures.js';

let svc: TestService;
let pipe: string;
const RATE = 40;

beforeAll(async () => {
  svc = await startTestService({ nats: true, env: { DATA_KEY: TEST_DATA_KEY, RATE_INGEST_PER_MIN: String(RATE) } });
  pipe = svc.urls.pipe!;
});
afterAll(async () => {
  await svc?.stop();
});

/** A fresh partner and family with one client shared and linked. */
async function linked(subjectRef = 'client-1'): Promise<{ partner: Partner; fam: Family; subjectRef: string }> {
  const partner = await onboard(svc.store.db, svc.credentials);
  const fam = await family(svc.store.db, svc.credentials, svc.config);
  await shareWith(svc, partner, subjectRef, fam);
  return { partner, fam, subjectRef };
}

describe('ingest - accepted events reach the family', () => {
  it('when a visit, a medication and a vital are signed and sent, then each gets 202 and becomes a care event of the linked loved one', async () => {
    const { partner, fam, subjectRef } = await linked();
    const occurred = '2026-11-22T09:05:00Z';
    const events = [
      visit(partner, subjectRef, { occurred_at: new Date(Date.now() - 3_000).toISOString(), source_event_id: 'v-1' }),
      {
        institution_id: partner.institutionId,
        subject_ref: subjectRef,
        event_type: 'med_administered',
        occurred_at: new Date(Date.now() - 2_000).toISOString(),
        payload: { medication_name: 'Metformin', dose_amount: 500, dose_unit: 'mg', administered_by: 'cg-12' },
      },
      {
        institution_id: partner.institutionId,
        subject_ref: subjectRef,
        event_type: 'vital_recorded',
        occurred_at: new Date(Date.now() - 1_000).toISOString(),
        payload: { vital_type: 'blood_pressure', value: 128, secondary_value: 82, unit: 'mmHg', recorded_by: 'cg-12' },
      },
    ];
    const replies = [];
    for (const e of events) replies.push(await postEvent(pipe, partner, e));
    expect(replies.map((r) => r.status)).toEqual([202, 202, 202]);
    for (const r of replies) expect(r.json).toEqual({ event_id: expect.stringMatching(/^evt_[a-z2-7]{20}$/), duplicate: false });

    const rows = await storedEvents(svc.store.db, { lovedOneId: fam.lovedOneId }, 3);
    expect(rows).toHaveLength(3);
    const byType = Object.fromEntries(rows.map((r) => [r.eventType, r]));
    expect(byType.visit_started).toMatchObject({
      _id: replies[0]!.json.event_id,
      lovedOneId: fam.lovedOneId,
      workspaceId: fam.workspaceId,
      source: 'partner',
      institutionId: partner.institutionId,
      subjectRef,
      sourceEventId: 'v-1',
      payload: events[0]!.payload,
    });
    expect(byType.visit_started!.occurredAt).toBeInstanceOf(Date);
    expect(byType.visit_started!.receivedAt).toBeInstanceOf(Date);
    expect(byType.med_administered!.payload).toMatchObject({ medication_name: 'Metformin', dose_amount: 500 });
    expect(byType.vital_recorded!.payload).toMatchObject({ value: 128, secondary_value: 82 });
    expect(occurred).toBeTruthy();
  });

  it('when the event type is unknown, then it is accepted and stored as it is', async () => {
    const { partner, fam, subjectRef } = await linked();
    const r = await postEvent(pipe, partner, { ...visit(partner, subjectRef), event_type: 'meal_logged', payload: { meal: 'lunch', eaten_pct: 80 } });
    expect(r.status).toBe(202);
    const [row] = await storedEvents(svc.store.db, { lovedOneId: fam.lovedOneId }, 1);
    expect(row).toMatchObject({ eventType: 'meal_logged', payload: { meal: 'lunch', eaten_pct: 80 } });
  });
});

describe('ingest - signatures and timestamps (401)', () => {
  let partner: Partner;
  let subjectRef: string;
  beforeAll(async () => {
    ({ partner, subjectRef } = await linked());
  });

  it('when one byte of the body changes after signing, then 401 and nothing is stored', async () => {
    const body = JSON.stringify(visit(partner, subjectRef, { source_event_id: 'tamper-1' }));
    const signature = signBody(partner.secret, body);
    const tampered = body.replace('cg-12', 'cg-13');
    const r = await postEvent(pipe, partner, undefined, { body: tampered, signature });
    expect(r.status).toBe(401);
    expect(r.json).toMatchObject({ code: 'UNAUTHORIZED', error: { code: 'UNAUTHORIZED', message: 'Signature verification failed' } });
    expect(await careEvents(svc.store.db).countDocuments({ sourceEventId: 'tamper-1' })).toBe(0);
  });

  it('when signed with a wrong secret, without a signature, or with an upper-case malformed one, then 401', async () => {
    const e = visit(partner, subjectRef);
    expect((await postEvent(pipe, partner, e, { secret: 'ccps_not-the-secret' })).status).toBe(401);
    expect((await postEvent(pipe, partner, e, { signature: '' })).status).toBe(401);
    expect((await postEvent(pipe, partner, e, { signature: 'sha1=abc' })).status).toBe(401);
  });

  it('when the timestamp is stale, in the future, malformed or missing, then 401 naming the problem', async () => {
    const e = visit(partner, subjectRef);
    const stale = await postEvent(pipe, partner, e, { timestamp: new Date(Date.now() - 6 * 60_000).toISOString() });
    expect([stale.status, stale.json.message]).toEqual([401, 'X-Pipe-Timestamp is more than 5 minutes old']);
    const future = await postEvent(pipe, partner, e, { timestamp: new Date(Date.now() + 6 * 60_000).toISOString() });
    expect([future.status, future.json.message]).toEqual([401, 'X-Pipe-Timestamp is more than 5 minutes ahead of our clock']);
    const noZone = await postEvent(pipe, partner, e, { timestamp: new Date().toISOString().replace('Z', '') });
    expect([noZone.status, noZone.json.message]).toEqual([401, 'X-Pipe-Timestamp is not an ISO 8601 date-time with seconds and a zone']);
    const missing = await postEvent(pipe, partner, e, { headers: { 'x-pipe-timestamp': '' } });
    expect([missing.status, missing.json.message]).toEqual([401, 'X-Pipe-Timestamp is missing']);
    const recent = await postEvent(pipe, partner, e, { timestamp: new Date(Date.now() - 4 * 60_000).toISOString() });
    expect(recent.status).toBe(202);
  });
});

describe('ingest - integrations and rotation (403)', () => {
  it('when the institution is deactivated or unknown, then 403; activated again, then 202', async () => {
    const { partner, subjectRef } = await linked();
    const partners = partnerStore(svc.store.db, svc.credentials);
    await partners.deactivate(partner.institutionId);
    const refused = await postEvent(pipe, partner, visit(partner, subjectRef));
    expect([refused.status, refused.json.code]).toEqual([403, 'FORBIDDEN']);
    expect((await postEvent(pipe, partner, visit(partner, subjectRef), { institution: 'inst-nobody' })).status).toBe(403);
    await partners.activate(partner.institutionId);
    expect((await postEvent(pipe, partner, visit(partner, subjectRef))).status).toBe(202);
  });

  it('when the secret is rotated, then both verify while the partner switches, no event is dropped, and the old one stops after retiring', async () => {
    const { partner, fam, subjectRef } = await linked();
    const partners = partnerStore(svc.store.db, svc.credentials);
    const next = await partners.rotate(partner.institutionId);
    const replies = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        postEvent(pipe, partner, visit(partner, subjectRef, { source_event_id: `rot-${i}` }), { secret: i % 2 ? next.value : partner.secret }),
      ),
    );
    expect(replies.map((r) => r.status)).toEqual(Array(10).fill(202));
    // Which secret verified each request is recorded with what it created.
    const keys = (await ingestKeyRecords(svc)).filter((k) => k.institutionId === partner.institutionId && k.kind === 'event');
    expect(keys.filter((k) => k.secretId === next.id)).toHaveLength(5);
    expect(keys.filter((k) => k.secretId === partner.secretId)).toHaveLength(5);

    await partners.retire(partner.institutionId, partner.secretId);
    expect((await postEvent(pipe, partner, visit(partner, subjectRef, { source_event_id: 'rot-old' }))).status).toBe(401);
    expect((await postEvent(pipe, partner, visit(partner, subjectRef, { source_event_id: 'rot-new' }), { secret: next.value })).status).toBe(202);
    expect(await storedEvents(svc.store.db, { lovedOneId: fam.lovedOneId }, 11)).toHaveLength(11);
  });
});

describe('ingest - family-share (404) and purges', () => {
  it('when the subject was never shared, or is shared but not linked yet, then 404', async () => {
    const partner = await onboard(svc.store.db, svc.credentials);
    const never = await postEvent(pipe, partner, visit(partner, 'client-unknown'));
    expect([never.status, never.json.code]).toEqual([404, 'NOT_FOUND']);
    const on = await setFamilyShare(pipe, partner, 'client-pending', true);
    expect(on.status).toBe(200);
    expect(on.json).toMatchObject({
      subject_ref: 'client-pending',
      family_share: 'on',
      link_status: 'awaiting_link',
      link_code: expect.stringMatching(/^[0-9A-Z]{4}-[0-9A-Z]{4}-[0-9A-Z]{4}$/),
    });
    expect((await postEvent(pipe, partner, visit(partner, 'client-pending'))).status).toBe(404);
  });

  it('when family-share is turned off, then events stop at the boundary; on again, they flow only after the family enters the new code', async () => {
    const { partner, fam, subjectRef } = await linked();
    expect((await postEvent(pipe, partner, visit(partner, subjectRef, { source_event_id: 'fs-1' }))).status).toBe(202);
    const off = await setFamilyShare(pipe, partner, subjectRef, false);
    expect(off.json).toEqual({ subject_ref: subjectRef, family_share: 'off', link_status: null });
    expect((await postEvent(pipe, partner, visit(partner, subjectRef, { source_event_id: 'fs-2' }))).status).toBe(404);

    const on = await setFamilyShare(pipe, partner, subjectRef, true);
    expect(on.json.link_status).toBe('awaiting_link');
    expect((await postEvent(pipe, partner, visit(partner, subjectRef, { source_event_id: 'fs-3' }))).status).toBe(404);
    // Turning on twice does not show a second code.
    const again = await setFamilyShare(pipe, partner, subjectRef, true);
    expect(again.json).toEqual({ subject_ref: subjectRef, family_share: 'on', link_status: 'awaiting_link' });
    expect((await enterLinkCode(svc.bus, svc.config, fam, on.json.link_code)).status).toBe(200);
    expect((await postEvent(pipe, partner, visit(partner, subjectRef, { source_event_id: 'fs-4' }))).status).toBe(202);

    const rows = await storedEvents(svc.store.db, { lovedOneId: fam.lovedOneId }, 2);
    expect(rows.map((r) => r.sourceEventId).sort()).toEqual(['fs-1', 'fs-4']);
  });

  it('when the agency asks for a purge, then the stored events of that client are deleted and later ones flow again', async () => {
    const { partner, fam, subjectRef } = await linked();
    for (let i = 0; i < 3; i++) expect((await postEvent(pipe, partner, visit(partner, subjectRef, { source_event_id: `p-${i}` }))).status).toBe(202);
    await storedEvents(svc.store.db, { lovedOneId: fam.lovedOneId }, 3);
    await drained(svc.bus, svc.config);
    const r = await purge(pipe, partner, subjectRef);
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ subject_ref: subjectRef, purged: 3 });
    expect(await careEvents(svc.store.db).countDocuments({ lovedOneId: fam.lovedOneId })).toBe(0);
    // A replay of a purged event does not bring it back.
    expect((await postEvent(pipe, partner, visit(partner, subjectRef, { source_event_id: 'p-0' }))).json.duplicate).toBe(true);
    expect((await postEvent(pipe, partner, visit(partner, subjectRef, { source_event_id: 'p-new' }))).status).toBe(202);
    await drained(svc.bus, svc.config);
    expect((await careEvents(svc.store.db).find({ lovedOneId: fam.lovedOneId }).toArray()).map((e) => e.sourceEventId)).toEqual(['p-new']);
  });

  it('when an agency call is replayed, names another subject, or is stale, then it does nothing', async () => {
    const partner = await onboard(svc.store.db, svc.credentials);
    const body = JSON.stringify({ enabled: true, subject_ref: 'client-r', requested_at: new Date().toISOString() });
    const path = '/pipe/v1/clients/client-r/family-share';
    const first = await pipeCall(pipe, 'PUT', path, partner, undefined, { body });
    expect(first.json.link_code).toBeDefined();
    const replay = await pipeCall(pipe, 'PUT', path, partner, undefined, { body });
    expect(replay.json).toEqual({ subject_ref: 'client-r', family_share: 'on', link_status: 'awaiting_link', replayed: true });
    const elsewhere = await pipeCall(pipe, 'PUT', '/pipe/v1/clients/client-other/family-share', partner, undefined, { body });
    expect([elsewhere.status, elsewhere.json.code]).toEqual([400, 'VALIDATION_FAILED']);
    const stale = await pipeCall(pipe, 'PUT', path, partner, {
      enabled: false,
      subject_ref: 'client-r',
      requested_at: new Date(Date.now() - 10 * 60_000).toISOString(),
    });
    expect(stale.status).toBe(401);
    expect((await pipeCall(pipe, 'PUT', path, partner, { enabled: 'yes', subject_ref: 'client-r', requested_at: new Date().toISOString() })).status).toBe(400);
  });
});

describe('ingest - the family enters the link code', () => {
  it('when the code is wrong, the loved one is someone else’s, the caller is signed out or cross-origin, then nothing is linked', async () => {
    const partner = await onboard(svc.store.db, svc.credentials);
    const fam = await family(svc.store.db, svc.credentials, svc.config);
    const other = await family(svc.store.db, svc.credentials, svc.config);
    const on = await setFamilyShare(pipe, partner, 'client-l', true);
    const code: string = on.json.link_code;
    expect((await enterLinkCode(svc.bus, svc.config, fam, 'AAAA-BBBB-CCCC')).status).toBe(400);
    expect((await enterLinkCode(svc.bus, svc.config, fam, code, other.lovedOneId)).status).toBe(403);
    expect((await enterLinkCode(svc.bus, svc.config, { ...fam, cookie: 'cc_session=nope' }, code)).status).toBe(401);
    // Another site's page is refused at the app host's edge, before any worker sees the code.
    const foreign = await fetch(`${svc.urls.app}/api/family-share/link`, {
      method: 'POST',
      headers: { cookie: fam.cookie, origin: 'https://evil.example', 'content-type': 'application/json' },
      body: JSON.stringify({ code, lovedOneId: fam.lovedOneId }),
    });
    expect(foreign.status).toBe(403);
    expect((await postEvent(pipe, partner, visit(partner, 'client-l'))).status).toBe(404);
    // Lower case and without dashes is the same code; it works once.
    const ok = await enterLinkCode(svc.bus, svc.config, fam, code.toLowerCase().replace(/-/g, ''));
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ linked: true, lovedOneId: fam.lovedOneId, institutionId: partner.institutionId, institutionName: 'Test Home Care' });
    expect((await enterLinkCode(svc.bus, svc.config, other, code, other.lovedOneId)).status).toBe(400);
    expect((await postEvent(pipe, partner, visit(partner, 'client-l'))).status).toBe(202);
  });
});

describe('ingest - de-duplication', () => {
  it('when the same event is sent twice, then the second gets 202 with the first event_id and duplicate: true, and one is stored', async () => {
    const { partner, fam, subjectRef } = await linked();
    const e = visit(partner, subjectRef);
    const a = await postEvent(pipe, partner, e);
    const b = await postEvent(pipe, partner, e);
    expect(a.json.duplicate).toBe(false);
    expect(b.json).toEqual({ event_id: a.json.event_id, duplicate: true });
    // Same id by header, different body: still the same event.
    const c = await postEvent(pipe, partner, visit(partner, subjectRef, { occurred_at: new Date(Date.now() - 5_000).toISOString() }), {
      headers: { 'idempotency-key': 'idem-1' },
    });
    const d = await postEvent(pipe, partner, visit(partner, subjectRef, { occurred_at: new Date(Date.now() - 9_000).toISOString() }), {
      headers: { 'idempotency-key': 'idem-1' },
    });
    expect(d.json).toEqual({ event_id: c.json.event_id, duplicate: true });
    await drained(svc.bus, svc.config);
    expect(await careEvents(svc.store.db).countDocuments({ lovedOneId: fam.lovedOneId })).toBe(2);
  });

  it('when the same event is sent twenty times at once, then all get the one event_id and one is stored', async () => {
    const { partner, fam, subjectRef } = await linked();
    const body = JSON.stringify(visit(partner, subjectRef, { source_event_id: 'burst-1' }));
    const replies = await Promise.all(Array.from({ length: 20 }, () => postEvent(pipe, partner, undefined, { body })));
    expect(replies.map((r) => r.status)).toEqual(Array(20).fill(202));
    expect(new Set(replies.map((r) => r.json.event_id)).size).toBe(1);
    expect(replies.filter((r) => r.json.duplicate === false)).toHaveLength(1);
    await drained(svc.bus, svc.config);
    expect(await careEvents(svc.store.db).countDocuments({ lovedOneId: fam.lovedOneId })).toBe(1);
  });

  it('when a captured body is replayed with a fresh timestamp header, then it creates nothing', async () => {
    const { partner, fam, subjectRef } = await linked();
    const body = JSON.stringify(visit(partner, subjectRef));
    const signature = signBody(partner.secret, body);
    const first = await postEvent(pipe, partner, undefined, { body, signature, timestamp: new Date(Date.now() - 4 * 60_000).toISOString() });
    // Key order and spacing differ; the canonical body is the same.
    const reordered = JSON.stringify(Object.fromEntries(Object.entries(JSON.parse(body) as object).reverse()), null, 2);
    const replays = [await postEvent(pipe, partner, undefined, { body, signature }), await postEvent(pipe, partner, undefined, { body: reordered })];
    expect(replays.map((r) => r.json)).toEqual([
      { event_id: first.json.event_id, duplicate: true },
      { event_id: first.json.event_id, duplicate: true },
    ]);
    await drained(svc.bus, svc.config);
    expect(await careEvents(svc.store.db).countDocuments({ lovedOneId: fam.lovedOneId })).toBe(1);
  });
});

describe('ingest - request errors (400, 413, 415, 429)', () => {
  let partner: Partner;
  let subjectRef: string;
  beforeAll(async () => {
    ({ partner, subjectRef } = await linked());
  });

  it('when the body is not JSON, misses a field, or has a bad occurred_at, then 400 naming the problem', async () => {
    const notJson = await postEvent(pipe, partner, undefined, { body: '{"institution_id": ' });
    expect([notJson.status, notJson.json.code]).toEqual([400, 'BAD_REQUEST']);
    const { subject_ref: _omit, ...noSubject } = visit(partner, subjectRef);
    const missing = await postEvent(pipe, partner, noSubject);
    expect([missing.status, missing.json.code]).toEqual([400, 'VALIDATION_FAILED']);
    expect(missing.json.message).toMatch(/^subject_ref:/);
    const badTime = await postEvent(pipe, partner, visit(partner, subjectRef, { occurred_at: '22/11/2026 10:00' }));
    expect(badTime.json.message).toMatch(/^occurred_at: must be an ISO 8601 date-time/);
    const badPayload = await postEvent(pipe, partner, visit(partner, subjectRef, { payload: { caregiver_id: 'cg', scheduled_start: '2026-11-22T09:00:00Z' } }));
    expect(badPayload.json.message).toMatch(/^payload\.actual_start:/);
    const otherInstitution = await postEvent(pipe, partner, visit(partner, subjectRef, { institution_id: 'inst-else' }));
    expect([otherInstitution.status, otherInstitution.json.message]).toEqual([400, 'institution_id: "inst-else" does not match X-Pipe-Institution']);
    const old = await postEvent(pipe, partner, visit(partner, subjectRef, { occurred_at: new Date(Date.now() - 31 * 24 * 3600_000).toISOString() }));
    expect(old.json.message).toMatch(/^occurred_at: is more than 30 days old/);
  });

  it('when the body is over 256 KB or not JSON-typed, then 413 or 415 before any work', async () => {
    const big = await postEvent(pipe, partner, visit(partner, subjectRef, { payload: { note_text: 'x'.repeat(256 * 1024) } }));
    expect([big.status, big.json.code]).toEqual([413, 'PAYLOAD_TOO_LARGE']);
    const typed = await postEvent(pipe, partner, visit(partner, subjectRef), { headers: { 'content-type': 'text/plain' } });
    expect([typed.status, typed.json.code]).toEqual([415, 'UNSUPPORTED_MEDIA_TYPE']);
    const get = await fetch(`${pipe}/pipe/v1/events`);
    expect(get.status).toBe(405);
  });

  it('when an institution exceeds its rate, then 429 with Retry-After, and other institutions are unaffected', async () => {
    const { partner: busy, subjectRef: s } = await linked();
    const replies = await Promise.all(Array.from({ length: RATE + 20 }, (_, i) => postEvent(pipe, busy, visit(busy, s, { source_event_id: `rl-${i}` }))));
    const limited = replies.filter((r) => r.status === 429);
    expect(limited.length).toBeGreaterThan(0);
    expect(replies.every((r) => r.status === 202 || r.status === 429)).toBe(true);
    expect(Number(limited[0]!.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(limited[0]!.json.code).toBe('RATE_LIMITED');
    expect((await postEvent(pipe, partner, visit(partner, subjectRef))).status).toBe(202);
  });
});
