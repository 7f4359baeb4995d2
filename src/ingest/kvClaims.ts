// De-duplication keys on a NATS deployment: a JetStream key-value bucket instead of the store.
// A claim is one compare-and-set publish to nats-server (write only while the key does not
// exist), so an accepted event's 202 waits on no database write at all: the store's single writer
// is left to the consumer's batches. The bucket is durable (file storage, replicated like the other
// buckets) and forgets each key INGEST_DEDUPE_DAYS after its last write, on any server version.
//
// Keys claimed in the store before a deployment moved to the bucket are copied in once, before
// the first claim here, so a partner re-sending an event accepted before the upgrade still gets
// `"duplicate": true` and the family still sees it once.
import { z } from 'zod';
import { KvConflictError, type KeyValueStores, type KvBucket } from '../bus/kv.js';
import { onFirstUse } from '../bus/onFirstUse.js';
import type { Logger } from '../log.js';
import type { Claim, IngestKeyRecord, IngestKeys, KeyClaims } from './dedupe.js';

/** The bucket of the deployment with this bus namespace (stream `KV_<name>`). */
export const ingestKeysBucketName = (namespace: string): string => `cc_ingest_keys${namespace ? `_${namespace.replace(/[^A-Za-z0-9_-]/g, '_')}` : ''}`;

/** Set once the store's keys are in the bucket; claim keys start with `ev:` or `ctl:`. */
const COPIED = 'store-keys-copied';
/** Claims written at once while copying the store's keys. */
const COPY_BATCH = 256;
const ATTEMPTS = 3;

const stored = z.object({
  _id: z.string(),
  kind: z.enum(['event', 'control']),
  institutionId: z.string(),
  subjectRef: z.string(),
  secretId: z.string(),
  requestId: z.string(),
  at: z.string().transform((s) => new Date(s)),
  eventId: z.string().optional(),
  status: z.enum(['pending', 'accepted']).optional(),
});

const encode = (record: IngestKeyRecord): string => JSON.stringify(record);

function decode(key: string, value: string): IngestKeyRecord {
  const parsed = stored.safeParse(JSON.parse(value));
  if (!parsed.success) throw new Error(`ingest key ${key}: the bucket holds a record of another shape`);
  const { eventId, status, ...rest } = parsed.data;
  return { ...rest, ...(eventId ? { eventId } : {}), ...(status ? { status } : {}) };
}

const unlessTaken = (err: unknown): void => {
  if (!(err instanceof KvConflictError)) throw err;
};

export class KvClaims implements KeyClaims {
  readonly kind = 'kv' as const;
  /** The bucket, made or bound once per process (again after a failure), the store's keys in it. */
  private readonly bucket = onFirstUse(() => this.open());

  constructor(
    private readonly kv: KeyValueStores,
    private readonly name: string,
    private readonly retentionMs: number,
    private readonly store: IngestKeys,
    private readonly log: Logger,
  ) {}

  private async open(): Promise<KvBucket> {
    const bucket = await this.kv.bucket({ name: this.name, maxAgeMs: this.retentionMs });
    if (!(await bucket.get(COPIED))?.value) await this.copyFromStore(bucket);
    return bucket;
  }

  /** Every process that finds no mark copies; a key already there stays as it is. */
  private async copyFromStore(bucket: KvBucket): Promise<void> {
    const since = new Date(Date.now() - this.retentionMs);
    let batch: IngestKeyRecord[] = [];
    let copied = 0;
    const flush = async () => {
      await Promise.all(batch.map((r) => bucket.write(r._id, encode(r), { expectedRevision: 0, ttlMs: this.retentionMs }).catch(unlessTaken)));
      copied += batch.length;
      if (copied % (COPY_BATCH * 40) === 0) this.log.info({ bucket: this.name, copied }, 'copying de-duplication keys from the store');
      batch = [];
    };
    for await (const row of this.store.rows.find({ at: { $gte: since } })) {
      batch.push(row);
      if (batch.length >= COPY_BATCH) await flush();
    }
    if (batch.length) await flush();
    await bucket.write(COPIED, new Date().toISOString(), { expectedRevision: 0, ttlMs: this.retentionMs }).catch(unlessTaken);
    if (copied) this.log.info({ bucket: this.name, copied }, 'de-duplication keys copied from the store');
  }

  async claim(record: IngestKeyRecord): Promise<Claim> {
    const bucket = await this.bucket();
    let expected = 0;
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      try {
        await bucket.write(record._id, encode(record), { expectedRevision: expected, ttlMs: this.retentionMs });
        return { fresh: true, record };
      } catch (err) {
        unlessTaken(err);
      }
      const entry = await bucket.get(record._id);
      if (entry?.value) return { fresh: false, record: decode(record._id, entry.value) };
      // Expired between the two, or deleted by an operator (a marker at this revision): claim again.
      expected = entry?.revision ?? 0;
    }
    throw new Error(`ingest key ${record._id} could not be claimed`);
  }

  async markAccepted(key: string): Promise<void> {
    const bucket = await this.bucket();
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      const entry = await bucket.get(key);
      if (!entry?.value) return; // expired: nothing left to mark
      const record = decode(key, entry.value);
      try {
        await bucket.write(key, encode({ ...record, status: 'accepted' }), { expectedRevision: entry.revision, ttlMs: this.retentionMs });
        return;
      } catch (err) {
        unlessTaken(err);
      }
    }
    throw new Error(`ingest key ${key} could not be marked accepted`);
  }
}
