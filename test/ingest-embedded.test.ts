// The embedded run (in-process bus, no JetStream): the MongoDB write is the durable step, so the
// care event exists by the time the 202 is sent.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INGEST_KEYS } from '../src/ingest/dedupe.js';
import { FAMILY_SHARE_CODES } from '../src/ingest/familyShare.js';
import { ingestSweepJobs } from '../src/ingest/runtime.js';
import { startTestService, type TestService } from './harness/service.js';
import { careEvents, family, onboard, postEvent, purge, shareWith, TEST_DATA_KEY, visit } from './ingest.fixtures.js';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService({ env: { DATA_KEY: TEST_DATA_KEY } });
});
afterAll(async () => {
  await svc?.stop();
});

describe('ingest - embedded mode', () => {
  it('when an event gets 202, then its care event is already stored', async () => {
    expect(svc.bus.kind).toBe('memory');
    const partner = await onboard(svc.store.db, svc.credentials);
    const fam = await family(svc.store.db, svc.credentials, svc.config);
    await shareWith(svc, partner, 'client-e', fam);
    const r = await postEvent(svc.urls.pipe!, partner, visit(partner, 'client-e', { source_event_id: 'emb-1' }));
    expect(r.status).toBe(202);
    expect(await careEvents(svc.store.db).findOne({ _id: r.json.event_id })).toMatchObject({
      lovedOneId: fam.lovedOneId,
      sourceEventId: 'emb-1',
      source: 'partner',
    });
  });

  it('when twenty copies arrive at once, then one is stored; a purge removes it', async () => {
    const partner = await onboard(svc.store.db, svc.credentials);
    const fam = await family(svc.store.db, svc.credentials, svc.config);
    await shareWith(svc, partner, 'client-e2', fam);
    const body = JSON.stringify(visit(partner, 'client-e2'));
    const replies = await Promise.all(Array.from({ length: 20 }, () => postEvent(svc.urls.pipe!, partner, undefined, { body })));
    expect(replies.map((r) => r.status)).toEqual(Array(20).fill(202));
    expect(new Set(replies.map((r) => r.json.event_id)).size).toBe(1);
    expect(await careEvents(svc.store.db).countDocuments({ lovedOneId: fam.lovedOneId })).toBe(1);
    expect((await purge(svc.urls.pipe!, partner, 'client-e2')).json).toEqual({ subject_ref: 'client-e2', purged: 1 });
    expect(await careEvents(svc.store.db).countDocuments({ lovedOneId: fam.lovedOneId })).toBe(0);
  });

  it('when the payload has a "__proto__" key, then 400 naming it, and nothing is stored', async () => {
    const partner = await onboard(svc.store.db, svc.credentials);
    const fam = await family(svc.store.db, svc.credentials, svc.config);
    await shareWith(svc, partner, 'client-e3', fam);
    const e = visit(partner, 'client-e3');
    const body = JSON.stringify(e).replace('"caregiver_id"', '"__proto__":{"admin":true},"caregiver_id"');
    const r = await postEvent(svc.urls.pipe!, partner, undefined, { body });
    expect([r.status, r.json.code, r.json.message]).toEqual([
      400,
      'VALIDATION_FAILED',
      expect.stringMatching(/^payload\.__proto__: key is "__proto__", which is not allowed .*\[rule: key\]$/),
    ]);
    expect(await careEvents(svc.store.db).countDocuments({ lovedOneId: fam.lovedOneId })).toBe(0);
  });
});

describe('ingest - sweeps', () => {
  it('when the cron job runs, then de-duplication keys older than 30 days and expired link codes go, and younger ones stay', async () => {
    const db = svc.store.db;
    const day = 24 * 3600_000;
    const key = (id: string, ageDays: number) => ({
      _id: id,
      kind: 'event',
      institutionId: 'sweep',
      subjectRef: 's',
      secretId: 'sec',
      requestId: 'r',
      at: new Date(Date.now() - ageDays * day),
      eventId: `evt_${id}`,
    });
    await db.collection(INGEST_KEYS).insertMany([key('sweep-old', 31), key('sweep-29', 29), key('sweep-new', 0)] as never[]);
    await db.collection(FAMILY_SHARE_CODES).insertMany([
      { _id: 'code-expired', entityId: 'e', institutionId: 'i', subjectRef: 's', expiresAt: new Date(Date.now() - 1000) },
      { _id: 'code-live', entityId: 'e', institutionId: 'i', subjectRef: 's', expiresAt: new Date(Date.now() + day) },
    ] as never[]);
    const [job] = ingestSweepJobs(svc.config, db, svc.credentials);
    const counts = await job!.run();
    expect(counts.keys).toBeGreaterThanOrEqual(1);
    expect((await db.collection(INGEST_KEYS).find({ institutionId: 'sweep' }).toArray()).map((k) => k._id).sort()).toEqual(['sweep-29', 'sweep-new']);
    expect((await db.collection(FAMILY_SHARE_CODES).find({ entityId: 'e' }).toArray()).map((c) => c._id)).toEqual(['code-live']);
  });
});
