// Partner institutions and their signing secrets: the onboarding records behind `carecircle partner`.
// A secret is shown once when issued; at rest it is sealed with the data key. Up to two secrets
// are live at a time (rotation), and the last live one cannot be retired. Every change is announced
// to every process before it returns, so an institution kept in memory never outlives it.
import { randomBytes } from 'node:crypto';
import type { Collection, Db, IndexDescription } from 'mongodb';
import type { Credentials } from '../auth/credentials.js';
import { isDuplicateKey } from '../store/errors.js';
import { newId, randomBase32 } from '../store/ids.js';
import type { Sealed, SecretBox } from './secretBox.js';

export const PARTNER_COLLECTIONS = {
  institutions: 'partner_institutions',
  secretUse: 'partner_secret_use',
} as const;

export const PARTNER_INDEXES: Record<string, IndexDescription[]> = {
  [PARTNER_COLLECTIONS.secretUse]: [{ key: { institutionId: 1 }, name: 'by_institution' }],
};

/** Institution ids are namespaces chosen at onboarding: letters, digits, `.`, `_`, `-`. */
export const INSTITUTION_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{1,63}$/;
export const MAX_LIVE_SECRETS = 2;

export interface SecretRecord {
  id: string;
  sealed: Sealed;
  createdAt: Date;
  retiredAt?: Date;
}

export interface InstitutionRecord {
  _id: string;
  name: string;
  status: 'active' | 'inactive';
  createdAt: Date;
  deactivatedAt?: Date;
  secrets: SecretRecord[];
}

interface SecretUseRecord {
  _id: string; // secret id
  institutionId: string;
  lastUsedAt: Date;
}

/** A secret in the clear, only ever handed to the one who issued it or to the verifier. */
export interface IssuedSecret {
  id: string;
  value: string;
}

/** Something the operator asked for that the records refuse, with what to do instead. */
export class PartnerError extends Error {
  override name = 'PartnerError';
}

/** `ccps_` and 32 random bytes: the HMAC key is this whole string as UTF-8. */
export const newSigningSecret = (): string => `ccps_${randomBytes(32).toString('base64url')}`;

const institutionsIn = (db: Db): Collection<InstitutionRecord> => db.collection(PARTNER_COLLECTIONS.institutions);

/** An institution's display name, for slices that show it and hold no data key (the family's link page). */
export async function institutionName(db: Db, id: string): Promise<string | null> {
  return (await institutionsIn(db).findOne({ _id: id }, { projection: { name: 1 } }))?.name ?? null;
}

/** How a written change reaches every process before it returns; `secret` is the one it issued. */
export type Announce = (institutionId: string, secret?: IssuedSecret) => Promise<void>;

const aadOf = (institutionId: string, secretId: string) => `partner-secret:${institutionId}:${secretId}`;
const USE_WRITE_EVERY_MS = 60_000;

export class PartnerStore {
  private readonly institutions: Collection<InstitutionRecord>;
  private readonly uses: Collection<SecretUseRecord>;
  private readonly lastUseWrite = new Map<string, number>();

  constructor(
    db: Db,
    private readonly box: SecretBox,
    private readonly credentials: Credentials,
    private readonly clock: () => number = Date.now,
    private readonly announce: Announce = (id) => credentials.changed('institution', [id]),
  ) {
    this.institutions = institutionsIn(db);
    this.uses = db.collection(PARTNER_COLLECTIONS.secretUse);
  }

  private sealNew(institutionId: string): { record: SecretRecord; issued: IssuedSecret } {
    const id = newId('sec');
    const value = newSigningSecret();
    return { record: { id, sealed: this.box.seal(value, aadOf(institutionId, id)), createdAt: new Date(this.clock()) }, issued: { id, value } };
  }

  async create(input: { name: string; id?: string }): Promise<{ institution: InstitutionRecord; secret: IssuedSecret }> {
    const id = input.id ?? `inst_${randomBase32(12)}`;
    if (!INSTITUTION_ID.test(id))
      throw new PartnerError(`institution id "${id}" is not allowed: use 2-64 letters, digits, ".", "_" or "-", starting with a letter or digit`);
    const name = input.name.trim();
    if (!name || name.length > 200) throw new PartnerError('the institution name must be 1-200 characters');
    const { record, issued } = this.sealNew(id);
    const institution: InstitutionRecord = { _id: id, name, status: 'active', createdAt: new Date(this.clock()), secrets: [record] };
    try {
      await this.institutions.insertOne(institution);
    } catch (err) {
      if (isDuplicateKey(err)) throw new PartnerError(`institution ${id} already exists`);
      throw err;
    }
    // Nothing can be kept of an id that did not exist (a miss is never kept); announced all the same,
    // so that every writer of the record announces.
    await this.announce(id, issued);
    return { institution, secret: issued };
  }

  get(id: string): Promise<InstitutionRecord | null> {
    return this.institutions.findOne({ _id: id });
  }

  /** The institution as this process keeps it (`load` reads it on a miss). Only for processes that
   *  every writer can reach: over NATS, where the `carecircle partner` command announces too. */
  kept(id: string, load: () => Promise<InstitutionRecord | null> = () => this.get(id)): Promise<InstitutionRecord | null> {
    return this.credentials.records.lookup('institution', id, load);
  }

  /** After the store write: every process forgets the record before the change returns. */
  private changed(id: string): Promise<void> {
    return this.announce(id);
  }

  private async mustGet(id: string): Promise<InstitutionRecord> {
    const found = await this.get(id);
    if (!found) throw new PartnerError(`no institution ${id}`);
    return found;
  }

  list(): Promise<InstitutionRecord[]> {
    return this.institutions.find({}).sort({ createdAt: 1 }).toArray();
  }

  /** Issue a second live secret beside the current one; the partner switches, then the old one is retired. */
  async rotate(id: string): Promise<IssuedSecret> {
    const inst = await this.mustGet(id);
    const live = inst.secrets.filter((s) => !s.retiredAt);
    if (live.length >= MAX_LIVE_SECRETS)
      throw new PartnerError(`${id} already has ${live.length} live secrets (${live.map((s) => s.id).join(', ')}): retire the old one before rotating again`);
    const { record, issued } = this.sealNew(id);
    await this.institutions.updateOne({ _id: id }, { $push: { secrets: record } });
    await this.announce(id, issued);
    return issued;
  }

  /** Stop accepting one secret. The last live secret stays: deactivate the integration instead. */
  async retire(id: string, secretId: string): Promise<void> {
    const inst = await this.mustGet(id);
    const target = inst.secrets.find((s) => s.id === secretId);
    if (!target) throw new PartnerError(`${id} has no secret ${secretId}`);
    if (target.retiredAt) return;
    if (inst.secrets.filter((s) => !s.retiredAt).length <= 1)
      throw new PartnerError(`${secretId} is the last live secret of ${id}: rotate first, or deactivate the integration`);
    const now = new Date(this.clock());
    const secrets = inst.secrets.map((s) => (s.id === secretId ? { ...s, retiredAt: now } : s));
    await this.institutions.updateOne({ _id: id }, { $set: { secrets } });
    await this.changed(id);
  }

  /** Every request from the institution is refused with 403 until it is activated again. */
  async deactivate(id: string): Promise<void> {
    await this.mustGet(id);
    await this.institutions.updateOne({ _id: id }, { $set: { status: 'inactive', deactivatedAt: new Date(this.clock()) } });
    await this.changed(id);
  }

  async activate(id: string): Promise<void> {
    await this.mustGet(id);
    await this.institutions.updateOne({ _id: id }, { $set: { status: 'active' }, $unset: { deactivatedAt: '' } });
    await this.changed(id);
  }

  /** The live secrets in the clear, for verifying a signature. */
  liveSecrets(inst: InstitutionRecord): IssuedSecret[] {
    return inst.secrets.filter((s) => !s.retiredAt).map((s) => ({ id: s.id, value: this.box.open(s.sealed, aadOf(inst._id, s.id)) }));
  }

  /** Note that a secret verified a request: at most one write a minute per secret and process. */
  recordUse(institutionId: string, secretId: string): void {
    const now = this.clock();
    if (now - (this.lastUseWrite.get(secretId) ?? -Infinity) < USE_WRITE_EVERY_MS) return;
    this.lastUseWrite.set(secretId, now);
    this.uses
      .updateOne({ _id: secretId }, { $max: { lastUsedAt: new Date(now) }, $setOnInsert: { institutionId } }, { upsert: true })
      .catch(() => this.lastUseWrite.delete(secretId));
  }

  /** When each secret of the institution last verified a request (to the minute). */
  async lastUse(institutionId: string): Promise<Map<string, Date>> {
    const rows = await this.uses.find({ institutionId }).toArray();
    return new Map(rows.map((r) => [r._id, r.lastUsedAt]));
  }
}
