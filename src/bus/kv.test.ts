// Key-value buckets on a real nats-server: compare-and-set on the revision, shared by connections,
// keys of any text, and entries that expire with their TTL.
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, inject, it, vi } from 'vitest';
import { createLogger } from '../log.js';
import { KvConflictError } from './kv.js';
import { MemoryBus } from './memory.js';
import { NatsBus } from './nats.js';
import { hasMessageTtl, kvKey } from './natsKv.js';
import type { Bus } from './types.js';

const log = createLogger('silent');
const opened: NatsBus[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((b) => b.close()));
});

async function natsBus(): Promise<NatsBus> {
  const bus = await NatsBus.connect(inject('natsUrl'), log, 'kv-test');
  opened.push(bus);
  return bus;
}

const bucketName = () => `test_kv_${randomBytes(5).toString('hex')}`;
const ttl = { ttlMs: 60_000 };

describe('key-value buckets', () => {
  it('exist on the NATS bus and not on the in-process bus', async () => {
    const buses: Bus[] = [new MemoryBus(), await natsBus()];
    expect(buses.map((b) => b.kv !== undefined)).toEqual([false, true]);
  });

  it('write only against the revision they expect, seen alike from two connections', async () => {
    const name = bucketName();
    const a = await (await natsBus()).kv.bucket({ name });
    const b = await (await natsBus()).kv.bucket({ name }); // binding an existing bucket is fine
    expect(await a.get('k')).toBeUndefined();
    const r1 = await a.write('k', 'one', { expectedRevision: 0, ...ttl });
    await expect(b.write('k', 'again', { expectedRevision: 0, ...ttl })).rejects.toBeInstanceOf(KvConflictError);
    expect(await b.get('k')).toEqual({ value: 'one', revision: r1 });
    const r2 = await b.write('k', 'two', { expectedRevision: r1, ...ttl });
    expect(r2).toBeGreaterThan(r1);
    await expect(a.write('k', 'stale', { expectedRevision: r1, ...ttl })).rejects.toBeInstanceOf(KvConflictError);
    expect(await a.get('k')).toEqual({ value: 'two', revision: r2 });
  });

  it('keep keys of any text apart, written as valid KV keys', async () => {
    const bucket = await (await natsBus()).kv.bucket({ name: bucketName() });
    const keys = ['ip:127.0.0.1', 'ip:::1', 'ip:127_0_0_1', 'a=b', 'a.b', 'a/b', 'å*>'];
    for (const [i, key] of keys.entries()) await bucket.write(key, String(i), { expectedRevision: 0, ...ttl });
    expect((await Promise.all(keys.map((k) => bucket.get(k)))).map((e) => e?.value)).toEqual(keys.map((_, i) => String(i)));
    for (const key of keys) expect(kvKey(key)).toMatch(/^[-_=A-Za-z0-9]+$/);
    expect(kvKey('directory-mcp:ip:10.0.0.1')).toBe('directory-mcp=3Aip=3A10=2E0=2E0=2E1');
  });

  it('drop an entry once its TTL has passed, on a server with per-message TTLs', async () => {
    const bus = await natsBus();
    const bucket = await bus.kv.bucket({ name: bucketName() });
    // The pinned nats-server (2.15) has them; Debian's 2.9, the documented fallback, does not:
    // there an entry carries no TTL and stays, which keeps the limiter exact.
    if (!bucket.expires) {
      await bucket.write('kept', 'x', { expectedRevision: 0, ttlMs: 1_000 });
      await sleep(1_500);
      expect((await bucket.get('kept'))?.value).toBe('x');
      return;
    }
    await bucket.write('short', 'x', { expectedRevision: 0, ttlMs: 1_000 });
    await bucket.write('long', 'y', { expectedRevision: 0, ttlMs: 60_000 });
    await vi.waitFor(async () => expect(await bucket.get('short')).toBeUndefined(), { timeout: 10_000, interval: 100 });
    expect((await bucket.get('long'))?.value).toBe('y');
    // Gone means absent: it can be created again.
    await expect(bucket.write('short', 'z', { expectedRevision: 0, ttlMs: 1_000 })).resolves.toBeGreaterThan(0);
  });

  it('know which servers have per-message TTLs', () => {
    expect(['2.9.10', '2.10.22', '2.11.0', '2.15.2', '3.0.0', undefined].map(hasMessageTtl)).toEqual([false, false, true, true, true, false]);
  });
});
