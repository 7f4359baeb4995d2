// Key-value buckets on NATS JetStream, shaped as standard KV buckets (stream KV_<name>, subjects
// $KV.<name>.<key>) so `nats kv` shows them. Writes are conditional on the key's last revision and
// carry a per-message TTL where the server has them (nats-server 2.11 and later).
import {
  DiscardPolicy,
  JetStreamApiCodes,
  JetStreamApiError,
  JetStreamError,
  jetstreamManager,
  PubHeaders,
  RetentionPolicy,
  StorageType,
  type JetStreamManager,
  type StreamConfig,
} from '@nats-io/jetstream';
import { nanos, type NatsConnection } from '@nats-io/transport-node';
import type { NatsRequests } from './natsRequests.js';
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

/** How long a write waits for JetStream's acknowledgement (the JetStream client's default). */
const WRITE_TIMEOUT_MS = 5_000;

/** A JetStream publish acknowledgement, or the API error it carries. */
interface PubAck {
  stream?: string;
  seq?: number;
  error?: { code: number; err_code: number; description: string };
}

class NatsKvBucket implements KvBucket {
  constructor(
    private readonly requests: NatsRequests,
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

  /**
   * A JetStream publish with the headers the JetStream client would send, through the bus's own
   * requests: the client's publish cost a quarter of a gateway's rate-limit work in error objects
   * and option handling. Failures keep their classes (JetStreamApiError by code; no responders,
   * timeouts and a closed connection are the bus's, transient all the same).
   */
  async write(key: string, value: string, options: KvWriteOptions): Promise<number> {
    const headers: Record<string, string> = { [PubHeaders.ExpectedLastSubjectSequenceHdr]: String(options.expectedRevision) };
    if (this.expires) headers[PubHeaders.MessageTTL] = `${Math.max(1, Math.ceil(options.ttlMs / 1000))}s`;
    const reply = await this.requests.request(this.prefix + kvKey(key), value, WRITE_TIMEOUT_MS, headers);
    const ack = JSON.parse(reply.string()) as PubAck;
    if (ack.error) {
      const err = new JetStreamApiError(ack.error);
      if (isConflict(err)) throw new KvConflictError(key, { cause: err });
      throw err;
    }
    if (!ack.stream || typeof ack.seq !== 'number') throw new JetStreamError('invalid ack response');
    return ack.seq;
  }
}

export class NatsKeyValueStores implements KeyValueStores {
  /** `replicas`: copies a cluster keeps of each bucket (1 on a single server). */
  constructor(
    private readonly nc: NatsConnection,
    private readonly requests: NatsRequests,
    private readonly replicas = 1,
  ) {}

  async bucket(spec: KvBucketSpec): Promise<KvBucket> {
    const jsm = await jetstreamManager(this.nc);
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
      ...(spec.maxAgeMs ? { max_age: nanos(spec.maxAgeMs) } : {}),
    };
    try {
      await jsm.streams.add(config);
    } catch {
      await jsm.streams.update(config.name, config);
    }
    return new NatsKvBucket(this.requests, jsm, config.name, `$KV.${spec.name}.`, expires);
  }
}
