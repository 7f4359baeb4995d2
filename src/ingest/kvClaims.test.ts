// De-duplication keys in NATS key-value, on a real nats-server and a real store: one claim wins
// across processes, the others get the first record; agency calls are marked accepted; keys the
// store held before the move are copied in before the first claim; a key is forgotten after the
// retention.
import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, inject, it, vi } from 'vitest';
import { useTestDatabase } from '../../test/harness/database.js';
import { NatsBus } from '../bus/nats.js';
import { createLogger } from '../log.js';
import { IngestKeys, type IngestKeyRecord } from './dedupe.js';
import { KvClaims } from './kvClaims.js';

const database = useTestDatabase();
const log = createLogger('silent');
const DAY_MS = 24 * 60 * 60 * 1000;
const opened: NatsBus[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((b) => b.close()));
});

/** One process's claims: its own NATS connection, the shared bucket. */
async function claimsIn(bucket: string, retentionMs = 30 * DAY_MS): Promise<KvClaims> {
  const bus = await NatsBus.connect(inject('natsUrl'), log, 'kv-claims-test');
  opened.push(bus);
  return new KvClaims(bus.kv, bucket, retentionMs, new IngestKeys(database.db), log);
}

const bucketName = () => `test_keys_${randomBytes(5).toString('hex')}`;

function record(id: string, over: Partial<IngestKeyRecord> = {}): IngestKeyRecord {
  return {
    _id: id,
    kind: 'event',
    institutionId: 'inst-kv',
    subjectRef: 'client-1',
    secretId: 'sec_1',
    requestId: `req-${randomBytes(3).toString('hex')}`,
    at: new Date('2026-11-20T10:00:00.000Z'),
    eventId: `evt_${randomBytes(4).toString('hex')}`,
    ...over,
  };
}

describe('de-duplication keys in NATS key-value', () => {
  it('when two processes claim one key at once, then exactly one owns it and every other gets its record, dates and all', async () => {
    const name = bucketName();
    const [a, b] = [await claimsIn(name), await claimsIn(name)];
    const tries = Array.from({ length: 10 }, (_, i) => record('ev:same', { requestId: `req-${i}`, secretId: `sec_${i}` }));
    const claims = await Promise.all(tries.map((r, i) => (i % 2 ? a : b).claim(r)));
    const winners = claims.filter((c) => c.fresh);
    expect(winners).toHaveLength(1);
    const first = winners[0]!.record;
    for (const c of claims.filter((x) => !x.fresh)) expect(c.record).toEqual(first);
    expect(claims.find((c) => !c.fresh)!.record.at).toBeInstanceOf(Date);
    // A different key is its own.
    expect((await a.claim(record('ev:other'))).fresh).toBe(true);
  });

  it('when an agency call is marked accepted, then a later claim of its body sees it so', async () => {
    const name = bucketName();
    const [a, b] = [await claimsIn(name), await claimsIn(name)];
    const call = record('ctl:body', { kind: 'control', status: 'pending', eventId: undefined });
    delete call.eventId;
    expect((await a.claim(call)).fresh).toBe(true);
    expect((await b.claim({ ...call, requestId: 'req-replay' })).record.status).toBe('pending');
    await a.markAccepted(call._id);
    const replay = await b.claim({ ...call, requestId: 'req-replay-2' });
    expect([replay.fresh, replay.record.status, replay.record.requestId]).toEqual([false, 'accepted', call.requestId]);
  });

  it('when the store holds keys from before, then they are copied in before the first claim, and keys past the retention are not', async () => {
    const institutionId = `inst-${randomBytes(3).toString('hex')}`;
    const recent = record(`ev:recent-${institutionId}`, { institutionId, at: new Date(Date.now() - 2 * DAY_MS) });
    const old = record(`ev:old-${institutionId}`, { institutionId, at: new Date(Date.now() - 31 * DAY_MS) });
    await new IngestKeys(database.db).rows.insertMany([recent, old]);
    const claims = await claimsIn(bucketName());
    const again = await claims.claim({ ...recent, requestId: 'req-after-upgrade', eventId: 'evt_new' });
    expect([again.fresh, again.record.eventId, again.record.requestId]).toEqual([false, recent.eventId, recent.requestId]);
    expect((await claims.claim({ ...old, requestId: 'req-after-upgrade' })).fresh).toBe(true);
  });

  it('when the retention has passed, then the key is forgotten and claimed anew', async () => {
    const claims = await claimsIn(bucketName(), 1_000);
    expect((await claims.claim(record('ev:short'))).fresh).toBe(true);
    expect((await claims.claim(record('ev:short'))).fresh).toBe(false);
    await vi.waitFor(async () => expect((await claims.claim(record('ev:short'))).fresh).toBe(true), { timeout: 15_000, interval: 100 });
  });
});
