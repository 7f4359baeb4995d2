// A loved one's portal connections and the launches that start them: tokens sealed under the data
// key (bound to their connection), a launch found by the hash of its state and used once.
import { createHash } from 'node:crypto';
import type { Collection, Db, IndexDescription } from 'mongodb';
import type { Sealed, SecretBox } from '../partner/secretBox.js';
import type { PortalTokens, SmartMetadata } from './smart.js';

export const PORTAL_COLLECTIONS = { connections: 'portal_connections', launches: 'portal_launches', resources: 'portal_resources' } as const;

export const PORTAL_INDEXES: Record<string, IndexDescription[]> = {
  [PORTAL_COLLECTIONS.connections]: [{ key: { lovedOneId: 1 }, name: 'by_loved_one' }],
  [PORTAL_COLLECTIONS.launches]: [{ key: { expiresAt: 1 }, name: 'by_expiry' }],
  [PORTAL_COLLECTIONS.resources]: [{ key: { connectionId: 1 }, name: 'by_connection' }],
};

/** `confirming`: signed in, waiting for the primary caregiver to confirm the patient; `needs_sign_in`: the portal refused a refresh. */
export type ConnectionStatus = 'confirming' | 'active' | 'needs_sign_in';

export interface PortalPatient {
  id: string;
  name: string;
  birthDate?: string;
}

export interface ConnectionRecord {
  /** `<lovedOneId>:<key>`; the key is the connection's id in its loved one's links. */
  _id: string;
  key: string;
  lovedOneId: string;
  workspaceId: string;
  name: string;
  base: string;
  clientId: string;
  smart: SmartMetadata;
  status: ConnectionStatus;
  patient: PortalPatient;
  tokens: Sealed;
  connectedBy: string;
  createdAt: Date;
  lastSync?: { at: Date; imported: number; superseded: number; unchanged: number };
  /** The last sync's failure in words, until a sync succeeds. */
  lastError?: string;
  /** When a sync last started, finished or not: the scheduled sweep waits an interval after it. */
  lastTriedAt?: Date;
  /** Per read (PORTAL_READS' keys), the portal's time its last complete sync began: the next asks only for what changed after it. */
  cursors?: Record<string, string>;
  /** The resource types the portal's CapabilityStatement lists (none: it lists none), and when it was read. */
  capabilities?: { at: Date; types?: string[] };
  /** What the portal did not share at the last complete sync, in the family's words ("immunizations"). */
  notShared?: string[];
}

export interface LaunchRecord {
  /** SHA-256 of the state, so the state itself is never stored. */
  _id: string;
  uid: string;
  lovedOneId: string;
  workspaceId: string;
  name: string;
  base: string;
  smart: SmartMetadata;
  verifier: Sealed;
  expiresAt: Date;
}

export const LAUNCH_TTL_MS = 10 * 60_000;
const hash = (s: string) => createHash('sha256').update(s).digest('base64url');
/** One connection per portal per loved one. */
export const connectionKey = (base: string) => hash(base).slice(0, 16).replace(/[-_]/g, 'x');

export class PortalStore {
  readonly connections: Collection<ConnectionRecord>;
  private readonly launches: Collection<LaunchRecord>;
  readonly resources: Collection<{ _id: string; connectionId: string; recordId: string; versionId: string }>;

  constructor(
    db: Db,
    private readonly box: SecretBox,
  ) {
    this.connections = db.collection(PORTAL_COLLECTIONS.connections);
    this.launches = db.collection(PORTAL_COLLECTIONS.launches);
    this.resources = db.collection(PORTAL_COLLECTIONS.resources);
  }

  async startLaunch(state: string, verifier: string, launch: Omit<LaunchRecord, '_id' | 'verifier' | 'expiresAt'>, now: number): Promise<void> {
    const _id = hash(state);
    // Launches never finished are swept here (FerretDB has no TTL indexes).
    await this.launches.deleteMany({ expiresAt: { $lt: new Date(now) } });
    await this.launches.insertOne({ ...launch, _id, verifier: this.box.seal(verifier, `portal-launch:${_id}`), expiresAt: new Date(now + LAUNCH_TTL_MS) });
  }

  /** The launch this state names, taken so it cannot be used twice; null for a state we never issued or one expired. */
  async takeLaunch(state: string, now: number): Promise<(LaunchRecord & { verifierPlain: string }) | null> {
    const _id = hash(state);
    const launch = await this.launches.findOneAndDelete({ _id });
    if (!launch || launch.expiresAt.getTime() <= now) return null;
    return { ...launch, verifierPlain: this.box.open(launch.verifier, `portal-launch:${_id}`) };
  }

  sealTokens(connectionId: string, tokens: PortalTokens): Sealed {
    return this.box.seal(JSON.stringify(tokens), `portal-tokens:${connectionId}`);
  }

  openTokens(c: ConnectionRecord): PortalTokens {
    return JSON.parse(this.box.open(c.tokens, `portal-tokens:${c._id}`)) as PortalTokens;
  }

  async save(c: ConnectionRecord): Promise<void> {
    await this.connections.replaceOne({ _id: c._id }, c, { upsert: true });
  }

  async update(id: string, set: Partial<ConnectionRecord>, unset: (keyof ConnectionRecord)[] = []): Promise<void> {
    await this.connections.updateOne({ _id: id }, { $set: set, ...(unset.length ? { $unset: Object.fromEntries(unset.map((k) => [k, ''])) } : {}) });
  }

  of(lovedOneId: string): Promise<ConnectionRecord[]> {
    return this.connections.find({ lovedOneId }).sort({ createdAt: 1 }).toArray();
  }

  get(lovedOneId: string, key: string): Promise<ConnectionRecord | null> {
    return this.connections.findOne({ _id: `${lovedOneId}:${key}` });
  }

  /** The connection and what it imported are forgotten; the records stay on the timeline. */
  async remove(c: ConnectionRecord): Promise<void> {
    await this.connections.deleteOne({ _id: c._id });
    await this.resources.deleteMany({ connectionId: c._id });
  }
}
