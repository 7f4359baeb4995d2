// Key-value state with compare-and-set: the capability a networked bus may offer (NATS JetStream
// key-value) so processes share small state without a database round trip. The in-process bus has
// none: one process needs no shared state.

export interface KvBucketSpec {
  /** Letters, digits, `_` and `-` only. */
  name: string;
  /** The server removes every entry this long after its last write, on any server version
   *  (the bucket's own TTL, as `nats kv add --ttl`). Binding an existing bucket sets it too. */
  maxAgeMs?: number;
}

/** The latest value of a key and its revision (every write gets a new, larger one). */
export interface KvEntry {
  value: string;
  revision: number;
}

export interface KvWriteOptions {
  /** Write only while the key is at this revision; 0: only while the key does not exist. */
  expectedRevision: number;
  /** The server removes the entry this long after the write (rounded up to whole seconds). */
  ttlMs: number;
}

/** Another process wrote the key since the revision the write expected. */
export class KvConflictError extends Error {
  override name = 'KvConflictError';
  constructor(
    readonly key: string,
    options?: ErrorOptions,
  ) {
    super(`the key ${key} changed since the revision expected`, options);
  }
}

export interface KvBucket {
  /** False on a server without per-message TTLs (nats-server before 2.11): entries then stay until purged. */
  readonly expires: boolean;
  /** One round trip; undefined when the key does not exist (never written, or expired). */
  get(key: string): Promise<KvEntry | undefined>;
  /** One round trip; resolves to the new revision, rejects with KvConflictError when the key moved on. */
  write(key: string, value: string, options: KvWriteOptions): Promise<number>;
}

export interface KeyValueStores {
  /** Create the bucket, or bind the existing one. Safe from every process. */
  bucket(spec: KvBucketSpec): Promise<KvBucket>;
}
