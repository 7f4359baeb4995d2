// Key-value buckets on NATS JetStream, shaped as standard KV buckets (stream KV_<name>, subjects
// $KV.<name>.<key>) so `nats kv` shows them. Writes are conditional on the key's last revision and
// carry a per-message TTL where the server has them (nats-server 2.11 and later).
import { DiscardPolicy, JetStreamApiCodes, JetStreamApiError, jetstream, jetstreamManager, RetentionPolicy, StorageType, type JetStreamClient, type JetStreamManager, type StreamConfig } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { KvConflictError, type KeyValueStores, type KvBucket, type KvBucketSpec, type KvEntry, type KvWriteOptions } from './kv.js';

/** KV keys allow `[-/_=.A-Za-z0-9]`; everything else (and `=`, `.`, `/`) is written as `=XX` per UTF-8 byte. */
export function kvKey(key: string): string {
  return key.replace(/[^A-Za-z0-9_-]/gu, (c) => [...Buffer.from(c, 'utf8')].map((b) => `=${b.toString(16).toUpperCase().padStart(2, '0')}`).join(''));
}

/** Per-message TTLs came with nats-server 2.11; older servers ignore the header and keep entries. */
export function hasMessageTtl(version: string | undefined): boolean {
  const [major = 0, minor = 0] = (version ?? '').split('.').map((n) => Number.parseInt(n, 10));
  return major > 2 || (major === 2 && minor >= 11);
}

const isConflict = (err: unknown): boolean =>
  err instanceof JetStreamApiError && (err.code === JetStreamApiCodes.StreamWrongLastSequence || err.code === JetStreamApiCodes.StreamWrongLastSequenceUnknown);

class NatsKvBucket implements KvBucket {
  constructor(
    private readonly js: JetStreamClient,
    private readonly jsm: JetStreamManager,
    private readonly stream: string,
    private readonly prefix: string,
    readonly expires: boolean,
  ) {}

  async get(key: string): Promise<KvEntry | undefined> {
    const m = await this.jsm.direct.getMessage(this.stream, { last_by_subj: this.prefix + kvKey(key) });
    if (!m) return undefined;
    // A key deleted with `nats kv del` leaves a marker: it reads as empty, at the marker's revision.
    const op = m.header.get('KV-Operation');
    return { value: op === 'DEL' || op === 'PURGE' ? '' : m.string(), revision: m.seq };
  }

  async write(key: string, value: string, options: KvWriteOptions): Promise<number> {
    try {
      const ack = await this.js.publish(this.prefix + kvKey(key), value, {
        expect: { lastSubjectSequence: options.expectedRevision },
        ...(this.expires ? { ttl: `${Math.max(1, Math.ceil(options.ttlMs / 1000))}s` } : {}),
      });
      return ack.seq;
    } catch (err) {
      if (isConflict(err)) throw new KvConflictError(key, { cause: err });
      throw err;
    }
  }
}

export class NatsKeyValueStores implements KeyValueStores {
  private client: JetStreamClient | undefined;

  /** `replicas`: copies a cluster keeps of each bucket (1 on a single server). */
  constructor(
    private readonly nc: NatsConnection,
    private readonly replicas = 1,
  ) {}

  async bucket(spec: KvBucketSpec): Promise<KvBucket> {
    const jsm = await jetstreamManager(this.nc);
    this.client ??= jetstream(this.nc);
    const expires = hasMessageTtl(this.nc.info?.version);
    const config: Partial<StreamConfig> & { name: string } = {
      name: `KV_${spec.name}`,
      subjects: [`$KV.${spec.name}.>`],
      retention: RetentionPolicy.Limits,
      storage: StorageType.File,
      discard: DiscardPolicy.New,
      max_msgs_per_subject: 1,
      allow_rollup_hdrs: true,
      allow_direct: true,
      num_replicas: this.replicas,
      ...(expires ? { allow_msg_ttl: true } : {}),
    };
    try {
      await jsm.streams.add(config);
    } catch {
      await jsm.streams.update(config.name, config);
    }
    return new NatsKvBucket(this.client, jsm, config.name, `$KV.${spec.name}.`, expires);
  }
}
