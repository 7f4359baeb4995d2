// What a steady-state partner event reads from the store on a NATS deployment: not its institution.
// The driver's command monitoring on the service's own client shows that the institution, like the
// binding and the loved one, comes from memory once the process has read it, and is read again on
// the first event after a change to it.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { FAMILY_SHARE_BINDINGS } from '../src/ingest/familyShare.js';
import { WORKSPACE_COLLECTIONS } from '../src/family/records.js';
import { PARTNER_COLLECTIONS } from '../src/partner/records.js';
import { sentCommands, watchedDatabaseUrl, type SentCommand } from './harness/servers.js';
import { startTestService, type TestService } from './harness/service.js';
import { family, onboard, partnerStore, postEvent, shareWith, TEST_DATA_KEY, visit, type Partner } from './ingest.fixtures.js';

const READS = new Set(['find', 'aggregate', 'count', 'distinct', 'getMore']);
const RECORDS = new Set<string>([PARTNER_COLLECTIONS.institutions, FAMILY_SHARE_BINDINGS, WORKSPACE_COLLECTIONS.lovedOnes]);

let svc: TestService;
let commands: SentCommand[] = [];

beforeAll(async () => {
  const url = watchedDatabaseUrl(inject('mongoUrl'));
  // The alerts' read of new records (its own work on the same client) is off here: only the ingest path is counted.
  svc = await startTestService({
    nats: true,
    mongoUrl: url,
    env: { DATA_KEY: TEST_DATA_KEY, RATE_INGEST_PER_MIN: '100000', ALERTS_ON_STORE: 'off' },
  });
  // Nor the minute run, which reads loved ones (the digests) on its own clock.
  await svc.cron?.stop();
  commands = sentCommands(svc.store.client);
});
afterAll(async () => {
  await svc?.stop();
});

let n = 0;
const send = (partner: Partner, o: { secret?: string } = {}) =>
  postEvent(svc.urls.pipe!, partner, visit(partner, 'client-steady', { source_event_id: `s-${n++}` }), o);
const recordReads = (sent: typeof commands) => sent.filter((c) => READS.has(c.name) && RECORDS.has(c.collection));

describe('ingest - no record read per event', () => {
  it('when a partner sends again, then no command reads its institution, binding or loved one; after a rotation, the next event reads the institution again', async () => {
    const partner = await onboard(svc.store.db, svc.credentials);
    await shareWith(svc, partner, 'client-steady', await family(svc.store.db, svc.credentials, svc.config));
    expect((await send(partner)).status).toBe(202);
    commands.length = 0;
    for (let i = 0; i < 10; i++) expect((await send(partner)).status).toBe(202);
    const steady = commands.splice(0);
    // The events did reach the store (their care events, written by the consumer), so monitoring saw them.
    expect(steady.length).toBeGreaterThan(0);
    expect(recordReads(steady)).toEqual([]);

    const next = await partnerStore(svc.store.db, svc.credentials).rotate(partner.institutionId);
    commands.length = 0;
    expect((await send(partner, { secret: next.value })).status).toBe(202);
    expect(recordReads(commands.splice(0))).toEqual([{ name: 'find', collection: PARTNER_COLLECTIONS.institutions }]);
  });
});
