// Who is sending a delivery's attempt right now, on a NATS deployment: a JetStream key-value
// bucket, one key per delivery and attempt, written only while it does not exist and removed by
// the server once the lease has run out. A take then costs the store no write: on the embedded
// FerretDB every update goes through the whole outbox and waits its turn behind the ingest's
// inserts, which put most of a second between an alert's queueing and its mail. The store keeps
// what must outlive a lease: each delivery, its attempts, and that it was sent.
//
// Without NATS (the single-process run) the outbox's own lease in the store does this job.
import { createHash } from 'node:crypto';
import { KvConflictError, type KeyValueStores } from '../bus/kv.js';
import { onFirstUse } from '../bus/onFirstUse.js';
import { LEASE_MS } from './outbox.js';

/** A delivery's attempt: its id, and how many attempts were made before it. */
export interface DeliveryAttempt {
  id: string;
  attempt: number;
}

export interface AttemptClaims {
  /** Hold each of these attempts for the lease, unless another process holds it: the ids held now. */
  claim(attempts: readonly DeliveryAttempt[]): Promise<Set<string>>;
}

/** The bucket of the deployment with this bus namespace (stream `KV_<name>`). */
export const alertClaimsBucketName = (namespace: string): string => `cc_alert_claims${namespace ? `_${namespace.replace(/[^A-Za-z0-9_-]/g, '_')}` : ''}`;

/** A short key whatever the delivery id holds: member ids and decision keys may be long. */
const keyOf = (a: DeliveryAttempt): string => `${createHash('sha256').update(a.id).digest('base64url')}.${a.attempt}`;

export class KvAttemptClaims implements AttemptClaims {
  /** Made or bound once per process (again after a failure). Every key goes a lease after its
   *  write, on any server version (the bucket's own age limit, besides each write's TTL). */
  private readonly bucket = onFirstUse(() => this.kv.bucket({ name: this.name, maxAgeMs: this.leaseMs }));

  constructor(
    private readonly kv: KeyValueStores,
    private readonly name: string,
    private readonly leaseMs = LEASE_MS,
  ) {}

  async claim(attempts: readonly DeliveryAttempt[]): Promise<Set<string>> {
    if (!attempts.length) return new Set();
    const bucket = await this.bucket();
    const held = await Promise.all(
      attempts.map((a) =>
        bucket.write(keyOf(a), 'sending', { expectedRevision: 0, ttlMs: this.leaseMs }).then(
          () => true,
          (err: unknown) => {
            if (err instanceof KvConflictError) return false;
            throw err;
          },
        ),
      ),
    );
    return new Set(attempts.filter((_, i) => held[i]).map((a) => a.id));
  }
}
