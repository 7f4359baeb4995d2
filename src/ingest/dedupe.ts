// De-duplication of partner requests: a unique `_id` per institution and partner-side id (or per
// canonical body), claimed insert-first so concurrent duplicates collapse on the index, never on a
// read-then-write check. Kept for INGEST_DEDUPE_DAYS and swept by the cron role (no TTL index).
// This is where the keys live without NATS; with NATS they live in a key-value bucket (./kvClaims.ts).
import { createHash } from 'node:crypto';
import type { Collection, Db, IndexDescription } from 'mongodb';
import { duplicateIndexes, isDuplicateKey } from '../store/errors.js';
import type { EventEnvelope } from './envelope.js';
import { GroupCommit } from './fresh.js';

export const INGEST_KEYS = 'ingest_keys';
export const INGEST_KEY_INDEXES: IndexDescription[] = [{ key: { at: 1 }, name: 'by_time' }];

export interface IngestKeyRecord {
  _id: string;
  kind: 'event' | 'control';
  institutionId: string;
  subjectRef: string;
  /** The secret that verified the first request with this key. */
  secretId: string;
  requestId: string;
  /** First receipt: the event's receivedAt, and what the sweep ages by. */
  at: Date;
  eventId?: string;
  /** Agency calls: `accepted` once done; a retry that finds it `pending` does it again. */
  status?: 'pending' | 'accepted';
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** JSON with object keys sorted at every depth: equal data, equal text. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object')
    return `{${Object.keys(value)
      .sort()
      .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  return JSON.stringify(value) ?? 'null';
}

/**
 * The de-duplication key of an event: the partner's id (`source_event_id`, or `Idempotency-Key`)
 * when given, else a hash of the canonical envelope (institution, subject, type, instant, payload).
 */
export function eventKey(institutionId: string, event: EventEnvelope, sourceEventId: string | undefined): string {
  if (sourceEventId) return `ev:${sha256(JSON.stringify([institutionId, 'id', sourceEventId]))}`;
  const canonical = canonicalJson({
    institution_id: event.institution_id,
    subject_ref: event.subject_ref,
    event_type: event.event_type,
    occurred_at: new Date(event.occurred_at).toISOString(),
    payload: event.payload,
  });
  return `ev:${sha256(JSON.stringify([institutionId, 'body', canonical]))}`;
}

/** Agency calls are single-use: the exact signed body, per institution. */
export const controlKey = (institutionId: string, raw: Buffer): string => `ctl:${sha256(JSON.stringify([institutionId, 'control', raw.toString('base64')]))}`;

/** `fresh` when this request owns the key, else the record of the request that got there first. */
export interface Claim {
  fresh: boolean;
  record: IngestKeyRecord;
}

/** Where a deployment claims its keys: the store (./dedupe.ts) or NATS key-value (./kvClaims.ts). */
export interface KeyClaims {
  readonly kind: 'store' | 'kv';
  /** Insert-first: concurrent claims of one key get one `fresh`, every other the first record. */
  claim(record: IngestKeyRecord): Promise<Claim>;
  /** An agency call is done: a replay of its body is answered as such from now on. */
  markAccepted(key: string): Promise<void>;
}

/** Claims in the store: concurrent ones share one insert (group commit). */
export class StoreClaims implements KeyClaims {
  readonly kind = 'store' as const;
  private readonly group: GroupCommit<IngestKeyRecord, Claim>;

  constructor(private readonly keys: IngestKeys) {
    this.group = new GroupCommit((records) => keys.claimMany(records));
  }

  claim(record: IngestKeyRecord): Promise<Claim> {
    return this.group.submit(record);
  }

  markAccepted(key: string): Promise<void> {
    return this.keys.markAccepted(key);
  }
}

export class IngestKeys {
  readonly rows: Collection<IngestKeyRecord>;

  constructor(db: Db) {
    this.rows = db.collection(INGEST_KEYS);
  }

  /** Insert-first: `fresh` when this request owns the key, else the record that got there first. */
  async claim(record: IngestKeyRecord): Promise<Claim> {
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        await this.rows.insertOne(record);
        return { fresh: true, record };
      } catch (err) {
        if (!isDuplicateKey(err)) throw err;
      }
      const existing = await this.rows.findOne({ _id: record._id });
      if (existing) return { fresh: false, record: existing };
      // Swept between our insert and our read: claim again.
    }
    throw new Error(`ingest key ${record._id} could not be claimed`);
  }

  /**
   * `claim` for a batch in one insert (unordered): the keys it could not insert were there first,
   * and are read in one query. Results in the order given; the same key twice in a batch goes to
   * the first, the later ones see it as taken.
   */
  async claimMany(records: IngestKeyRecord[]): Promise<Claim[]> {
    if (records.length === 1) return [await this.claim(records[0]!)];
    const taken = new Set<number>();
    try {
      await this.rows.insertMany(records, { ordered: false });
    } catch (err) {
      const indexes = duplicateIndexes(err);
      if (!indexes) throw err;
      for (const i of indexes) taken.add(i);
    }
    if (!taken.size) return records.map((record) => ({ fresh: true, record }));
    const ids = [...new Set([...taken].map((i) => records[i]!._id))];
    const found = new Map((await this.rows.find({ _id: { $in: ids } }).toArray()).map((r) => [r._id, r]));
    return Promise.all(
      records.map(async (record, i) => {
        if (!taken.has(i)) return { fresh: true, record };
        const existing = found.get(record._id);
        // Swept between the insert and the read: claimed on its own, as `claim` would.
        return existing ? { fresh: false, record: existing } : this.claim(record);
      }),
    );
  }

  async markAccepted(key: string): Promise<void> {
    await this.rows.updateOne({ _id: key }, { $set: { status: 'accepted' } });
  }

  /** Remove keys first seen before `before`. */
  async sweep(before: Date): Promise<number> {
    return (await this.rows.deleteMany({ at: { $lt: before } })).deletedCount;
  }
}
