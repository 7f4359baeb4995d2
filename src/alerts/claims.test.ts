// Claims of delivery attempts in NATS key-value, on a real nats-server: one process holds an
// attempt, the next attempt is free, and an attempt is free again once its lease has run out.
import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, inject, it, vi } from 'vitest';
import { NatsBus } from '../bus/nats.js';
import { createLogger } from '../log.js';
import { alertClaimsBucketName, KvAttemptClaims } from './claims.js';

const opened: NatsBus[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((b) => b.close()));
});

/** One process's claims: its own NATS connection, the shared bucket. */
async function claimsIn(bucket: string, leaseMs?: number): Promise<KvAttemptClaims> {
  const bus = await NatsBus.connect(inject('natsUrl'), createLogger('silent'), 'alert-claims-test');
  opened.push(bus);
  return new KvAttemptClaims(bus.kv, bucket, leaseMs);
}

const bucketName = () => alertClaimsBucketName(`t${randomBytes(5).toString('hex')}`);
// A delivery id as the fan-out writes it: decision key, member and channel, with characters no key may hold.
const id = (n: number) => `flagged_note:evt_${n}|auth0|user 42@example.com|email`;

describe('delivery attempt claims in NATS key-value', () => {
  it('when two processes claim the same attempts at once, then each attempt is held by exactly one of them', async () => {
    const bucket = bucketName();
    const [a, b] = [await claimsIn(bucket), await claimsIn(bucket)];
    const attempts = Array.from({ length: 20 }, (_, n) => ({ id: id(n), attempt: 0 }));
    const [heldByA, heldByB] = await Promise.all([a.claim(attempts), b.claim(attempts)]);
    expect(heldByA.size + heldByB.size).toBe(20);
    expect([...heldByA].filter((x) => heldByB.has(x))).toEqual([]);
  });

  it('when an attempt is held, then the delivery’s next attempt can still be claimed, once', async () => {
    const claims = await claimsIn(bucketName());
    expect(await claims.claim([{ id: id(1), attempt: 0 }])).toEqual(new Set([id(1)]));
    expect(await claims.claim([{ id: id(1), attempt: 0 }])).toEqual(new Set());
    expect(await claims.claim([{ id: id(1), attempt: 1 }])).toEqual(new Set([id(1)]));
    expect(await claims.claim([{ id: id(1), attempt: 1 }])).toEqual(new Set());
  });

  it('when a claim’s lease runs out (its sender died), then the same attempt can be claimed again', async () => {
    const bucket = bucketName();
    const dying = await claimsIn(bucket, 1_000);
    expect(await dying.claim([{ id: id(2), attempt: 0 }])).toEqual(new Set([id(2)]));
    const other = await claimsIn(bucket, 1_000);
    expect(await other.claim([{ id: id(2), attempt: 0 }])).toEqual(new Set());
    await vi.waitFor(async () => expect(await other.claim([{ id: id(2), attempt: 0 }])).toEqual(new Set([id(2)])), { timeout: 10_000, interval: 250 });
  });
});
