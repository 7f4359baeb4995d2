// MCP API keys: `sk-svc-<64 hex>`, shown once at mint time; only a SHA-256 hash is stored.
// The lifecycle (active → revoked) is the apiKey machine; `status` on the key row is its
// projection, written after the transition so authentication reads one row by hash, once per
// process: the row is then served from memory until the key is revoked (src/auth/credentials.ts).
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Collection, Db, IndexDescription } from 'mongodb';
import { API_KEY_MACHINE } from '../../machines/apiKey.js';
import type { Credentials } from '../auth/credentials.js';
import { EntityStore, TransitionRefused } from '../store/entities.js';
import { newId } from '../store/ids.js';

export const API_KEYS = 'api_keys';
/** hash → key id, so authentication reads by primary key (FerretDB v1 scans for `{hash}`). */
export const API_KEY_HASHES = 'api_key_hashes';
export const API_KEY_INDEXES: IndexDescription[] = [
  { key: { hash: 1 }, name: 'by_hash', unique: true },
  { key: { uid: 1 }, name: 'by_uid' },
];
export const API_KEY_FORMAT = /^sk-svc-[0-9a-f]{64}$/;
export const MAX_KEYS_PER_USER = 25;

export interface ApiKeyRecord {
  _id: string;
  uid: string;
  name: string;
  hash: string;
  last4: string;
  status: 'active' | 'revoked';
  /** What the key may do with the care record; a key minted before writes existed has none: read-only. */
  access?: KeyAccess;
  createdAt: Date;
  lastUsedAt?: Date;
  revokedAt?: Date;
}

/** A key reads the care record, or reads and adds to it (care_circle:write). */
export type KeyAccess = 'read' | 'read-write';
export const accessOf = (k: Pick<ApiKeyRecord, 'access'>): KeyAccess => (k.access === 'read-write' ? 'read-write' : 'read');

/** What a caller may see of a key: never its hash. */
export interface ApiKeyView {
  id: string;
  name: string;
  last4: string;
  status: 'active' | 'revoked';
  access: KeyAccess;
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
}

export const hashKey = (plaintext: string): string => createHash('sha256').update(plaintext).digest('hex');

export class KeyNotFound extends Error {
  override name = 'KeyNotFound';
}
export class TooManyKeys extends Error {
  override name = 'TooManyKeys';
}

export function viewOf(k: ApiKeyRecord): ApiKeyView {
  return {
    id: k._id,
    name: k.name,
    last4: k.last4,
    status: k.status,
    access: accessOf(k),
    createdAt: k.createdAt.toISOString(),
    lastUsedAt: k.lastUsedAt?.toISOString() ?? null,
    revokedAt: k.revokedAt?.toISOString() ?? null,
  };
}

export class KeyStore {
  private readonly keys: Collection<ApiKeyRecord>;
  private readonly hashes: Collection<{ _id: string; keyId: string }>;
  private readonly entities: EntityStore;

  constructor(
    db: Db,
    private readonly credentials: Credentials,
    private readonly clock: () => number = Date.now,
  ) {
    this.keys = db.collection<ApiKeyRecord>(API_KEYS);
    this.hashes = db.collection(API_KEY_HASHES);
    this.entities = new EntityStore(db, clock);
  }

  /** Mint a key for `uid`; the plaintext is returned here and nowhere else, ever. */
  async mint(uid: string, name: string, access: KeyAccess = 'read'): Promise<{ plaintext: string; key: ApiKeyView }> {
    if ((await this.keys.countDocuments({ uid, status: 'active' })) >= MAX_KEYS_PER_USER) throw new TooManyKeys(`at most ${MAX_KEYS_PER_USER} active keys`);
    const plaintext = `sk-svc-${randomBytes(32).toString('hex')}`;
    const id = newId('key');
    await this.entities.create(API_KEY_MACHINE, id, { keyId: id, uid });
    const record: ApiKeyRecord = {
      _id: id,
      uid,
      name: name || 'MCP key',
      hash: hashKey(plaintext),
      last4: plaintext.slice(-4),
      status: 'active',
      access,
      createdAt: new Date(this.clock()),
    };
    await this.keys.insertOne(record);
    await this.hashes.insertOne({ _id: record.hash, keyId: id });
    return { plaintext, key: viewOf(record) };
  }

  async list(uid: string): Promise<ApiKeyView[]> {
    return (await this.keys.find({ uid }).sort({ createdAt: -1 }).toArray()).map(viewOf);
  }

  /** Revoke the caller's own key; revoking twice is fine, another user's key is "not found". */
  async revoke(uid: string, keyId: string): Promise<ApiKeyView> {
    const key = await this.keys.findOne({ _id: keyId, uid });
    if (!key) throw new KeyNotFound(`no key ${keyId} for this account`);
    const at = new Date(this.clock());
    try {
      await this.entities.send(API_KEY_MACHINE, keyId, { type: 'REVOKE', at: at.toISOString(), by: uid });
    } catch (err) {
      if (!(err instanceof TransitionRefused)) throw err; // already revoked: re-apply the projection below
    }
    const state = await this.entities.load(API_KEY_MACHINE, keyId);
    const revokedAt = state?.context.revokedAt ? new Date(state.context.revokedAt) : at;
    await this.keys.updateOne({ _id: keyId }, { $set: { status: 'revoked', revokedAt } });
    // Every process forgets the key before the caller hears it is revoked.
    await this.credentials.revoked('key', [key.hash]);
    return viewOf({ ...key, status: 'revoked', revokedAt });
  }

  /** Remove one of the caller's revoked keys from the list; an active key is never removed (it
   *  must be revoked first). False when there is no such revoked key. */
  async removeRevoked(uid: string, keyId: string): Promise<boolean> {
    const key = await this.keys.findOneAndDelete({ _id: keyId, uid, status: 'revoked' });
    if (!key) return false;
    await this.hashes.deleteOne({ _id: key.hash });
    return true;
  }

  /** The key row for a presented plaintext (by hash), or null; from memory once read, until revoked. */
  async findByPlaintext(plaintext: string): Promise<ApiKeyRecord | null> {
    const hash = hashKey(plaintext);
    const key = await this.credentials.cache.lookup('key', hash, async () => {
      const pointer = await this.hashes.findOne({ _id: hash });
      return pointer ? await this.keys.findOne({ _id: pointer.keyId }) : null;
    });
    if (!key) return null;
    // Found by hash; confirm in constant time all the same.
    return timingSafeEqual(Buffer.from(key.hash, 'hex'), Buffer.from(hash, 'hex')) ? key : null;
  }

  /** Record use, at most once a minute per key: Settings shows minutes, and a write per request
   *  would double the storage work of every authenticated call. */
  touch(key: ApiKeyRecord): void {
    const now = this.clock();
    if (key.lastUsedAt && now - key.lastUsedAt.getTime() < 60_000) return;
    // The row may be the cached one: remember the write there, so the next minute writes nothing.
    key.lastUsedAt = new Date(now);
    void this.keys.updateOne({ _id: key._id }, { $set: { lastUsedAt: new Date(now) } }).catch(() => undefined);
  }
}
