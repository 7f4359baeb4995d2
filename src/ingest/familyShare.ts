// Family-share of partner clients: turning it on and off for the agency, the one-time link code the
// family enters to bind the client to a loved one, purges, and the binding events flow along.
import { createHash, randomInt } from 'node:crypto';
import type { Collection, Db, IndexDescription } from 'mongodb';
import type { SnapshotFrom } from 'xstate';
import { activeLink, FAMILY_SHARE_MACHINE, type familyShareMachine, type FamilyShareLink } from '../../machines/familyShare.js';
import { EntityConflict, EntityStore, TransitionRefused } from '../store/entities.js';
import { newId } from '../store/ids.js';
import type { Credentials } from '../auth/credentials.js';

export const FAMILY_SHARE_CODES = 'family_share_codes';
export const FAMILY_SHARE_CODE_INDEXES: IndexDescription[] = [
  { key: { expiresAt: 1 }, name: 'by_expiry' },
  { key: { entityId: 1 }, name: 'by_entity' },
];

/**
 * Where each client's events go, read by `_id` on every event. The machine's snapshots stay the
 * truth; this projection is rewritten after each transition because FerretDB v1 answers a query
 * on anything but `_id` by scanning the collection (measured: 6 ms with 30 snapshots, 120 ms
 * with 600), which the ingest cannot afford per event. Turning family-share off blocks the
 * projection before the transition, so a crash in between fails closed.
 */
export const FAMILY_SHARE_BINDINGS = 'family_share_bindings';
/** `linkedTo`: the clients bound to one loved one, when the family removes it or counts its links. */
export const FAMILY_SHARE_BINDING_INDEXES: IndexDescription[] = [{ key: { 'link.lovedOneId': 1, 'link.workspaceId': 1 }, name: 'by_loved_one' }];

/** How long a link code waits for the family before the agency must turn family-share off and on again. */
export const LINK_CODE_TTL_MS = 14 * 24 * 60 * 60 * 1000;

/** Crockford base32: no I, L, O or U, so a code read aloud or retyped survives. */
const CODE_ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const CODE_LENGTH = 12; // 60 bits

interface BindingRow {
  _id: string; // entity id
  state: 'off' | 'awaiting_link' | 'linked' | 'blocked';
  link?: FamilyShareLink;
  purgedAt?: string;
}

interface LinkCodeRecord {
  _id: string; // SHA-256 of the normalised code
  entityId: string;
  institutionId: string;
  subjectRef: string;
  expiresAt: Date;
}

export type FamilyShareSnapshot = SnapshotFrom<typeof familyShareMachine>;

/** `7KQ2-MX4D-9RTB`: shown once to the agency, who passes it to the family. */
export function newLinkCode(): string {
  let raw = '';
  for (let i = 0; i < CODE_LENGTH; i++) raw += CODE_ALPHABET[randomInt(CODE_ALPHABET.length)];
  return raw.match(/.{4}/g)!.join('-');
}

/** Upper-case, separators dropped, look-alikes mapped (O→0, I/L→1); null when it cannot be a code. */
export function normalizeLinkCode(input: string): string | null {
  const s = input.toUpperCase().replace(/[\s-]/g, '').replace(/O/g, '0').replace(/[IL]/g, '1');
  if (s.length !== CODE_LENGTH || [...s].some((c) => !CODE_ALPHABET.includes(c))) return null;
  return s;
}

export const hashLinkCode = (normalized: string): string => createHash('sha256').update(`family-share-link:${normalized}`).digest('hex');

/** The view of one client's family-share an agency sees (never the loved one or the family). */
export function shareView(subjectRef: string, snapshot: FamilyShareSnapshot | null) {
  const on = snapshot?.matches('on') ?? false;
  return {
    subject_ref: subjectRef,
    family_share: on ? 'on' : 'off',
    link_status: !on ? null : snapshot!.matches({ on: 'linked' }) ? 'linked' : 'awaiting_link',
  };
}

export interface Binding {
  link: FamilyShareLink;
  purgedAt?: string;
}

function rowOf(id: string, snapshot: FamilyShareSnapshot | null): BindingRow {
  const link = snapshot ? activeLink(snapshot) : null;
  const state = !snapshot || !snapshot.matches('on') ? 'off' : link ? 'linked' : 'awaiting_link';
  return { _id: id, state, ...(link ? { link } : {}), ...(snapshot?.context.purgedAt ? { purgedAt: snapshot.context.purgedAt } : {}) };
}

export class FamilyShares {
  private readonly codes: Collection<LinkCodeRecord>;
  private readonly bindings: Collection<BindingRow>;
  constructor(
    db: Db,
    private readonly credentials: Credentials,
    readonly entities: EntityStore = new EntityStore(db),
    private readonly clock: () => number = Date.now,
  ) {
    this.codes = db.collection(FAMILY_SHARE_CODES);
    this.bindings = db.collection(FAMILY_SHARE_BINDINGS);
  }

  /**
   * Write the projection from the newest snapshot, then read the snapshot again: if a concurrent
   * transition changed it meanwhile, write again. The last writer always checks, so it converges.
   */
  private async project(institutionId: string, subjectRef: string): Promise<FamilyShareSnapshot | null> {
    const id = FamilyShares.entityId(institutionId, subjectRef);
    let snapshot = await this.load(institutionId, subjectRef);
    try {
      for (let attempt = 0; attempt < 5; attempt++) {
        const row = rowOf(id, snapshot);
        await this.bindings.replaceOne({ _id: id }, row, { upsert: true });
        const again = await this.load(institutionId, subjectRef);
        if (JSON.stringify(rowOf(id, again)) === JSON.stringify(row)) return again;
        snapshot = again;
      }
      return snapshot;
    } finally {
      await this.changed(id);
    }
  }

  /** Every process reads the binding again on its next event (resolves once each has acknowledged). */
  private changed(id: string): Promise<void> {
    return this.credentials.changed('binding', [id]);
  }

  static entityId(institutionId: string, subjectRef: string): string {
    return `${institutionId}:${subjectRef}`;
  }

  load(institutionId: string, subjectRef: string): Promise<FamilyShareSnapshot | null> {
    return this.entities.load(FAMILY_SHARE_MACHINE, FamilyShares.entityId(institutionId, subjectRef));
  }

  private async loadOrCreate(institutionId: string, subjectRef: string): Promise<FamilyShareSnapshot> {
    const id = FamilyShares.entityId(institutionId, subjectRef);
    const found = await this.entities.load(FAMILY_SHARE_MACHINE, id);
    if (found) return found;
    try {
      return await this.entities.create(FAMILY_SHARE_MACHINE, id, { institutionId, subjectRef });
    } catch (err) {
      if (!(err instanceof EntityConflict)) throw err;
      return (await this.entities.load(FAMILY_SHARE_MACHINE, id))!;
    }
  }

  /** Turn family-share on. A new link code comes back only when this call turned it on. */
  async enable(institutionId: string, subjectRef: string): Promise<{ snapshot: FamilyShareSnapshot; linkCode?: { code: string; expiresAt: Date } }> {
    const id = FamilyShares.entityId(institutionId, subjectRef);
    const current = await this.loadOrCreate(institutionId, subjectRef);
    if (current.matches('on')) return { snapshot: (await this.project(institutionId, subjectRef)) ?? current };
    const code = newLinkCode();
    const hash = hashLinkCode(normalizeLinkCode(code)!);
    const now = this.clock();
    const expiresAt = new Date(now + LINK_CODE_TTL_MS);
    await this.codes.insertOne({ _id: hash, entityId: id, institutionId, subjectRef, expiresAt });
    try {
      const snapshot = await this.entities.send(FAMILY_SHARE_MACHINE, id, {
        type: 'ENABLE',
        at: new Date(now).toISOString(),
        linkCodeHash: hash,
        linkCodeExpiresAt: expiresAt.toISOString(),
      });
      return { snapshot: (await this.project(institutionId, subjectRef)) ?? snapshot, linkCode: { code, expiresAt } };
    } catch (err) {
      await this.codes.deleteOne({ _id: hash });
      // Turned on by a concurrent call: that call has the code.
      if (err instanceof TransitionRefused) return { snapshot: (await this.project(institutionId, subjectRef))! };
      throw err;
    }
  }

  /** Turn family-share off: the mapping and any unused link code are gone at once. */
  async disable(institutionId: string, subjectRef: string): Promise<FamilyShareSnapshot> {
    const id = FamilyShares.entityId(institutionId, subjectRef);
    // Fail closed: events stop, on every process, before the transition is even attempted.
    await this.bindings.updateOne({ _id: id }, { $set: { state: 'blocked' }, $unset: { link: '' } }, { upsert: true });
    await this.changed(id);
    const current = await this.loadOrCreate(institutionId, subjectRef);
    let snapshot = current;
    if (current.matches('on')) {
      try {
        snapshot = await this.entities.send(FAMILY_SHARE_MACHINE, id, { type: 'DISABLE', at: new Date(this.clock()).toISOString() });
      } catch (err) {
        if (!(err instanceof TransitionRefused)) throw err;
        snapshot = (await this.load(institutionId, subjectRef))!;
      }
    }
    await this.codes.deleteMany({ entityId: id });
    return (await this.project(institutionId, subjectRef)) ?? snapshot;
  }

  /** Record a purge instant: events received up to now and still in flight are dropped, not stored. */
  async markPurged(institutionId: string, subjectRef: string): Promise<void> {
    const id = FamilyShares.entityId(institutionId, subjectRef);
    if (!(await this.entities.load(FAMILY_SHARE_MACHINE, id))) return;
    await this.entities.send(FAMILY_SHARE_MACHINE, id, { type: 'PURGE', at: new Date(this.clock()).toISOString() });
    await this.project(institutionId, subjectRef);
  }

  /**
   * Bind the client behind `code` to a loved one. The caller has already checked that the loved
   * one is in the signed-in family's workspace. Null when the code is unknown, used or expired.
   */
  async link(
    code: string,
    to: { lovedOneId: string; workspaceId: string; uid: string },
  ): Promise<{ institutionId: string; subjectRef: string; link: FamilyShareLink } | null> {
    const normalized = normalizeLinkCode(code);
    if (!normalized) return null;
    const hash = hashLinkCode(normalized);
    const record = await this.codes.findOne({ _id: hash });
    const now = this.clock();
    if (!record || record.expiresAt.getTime() <= now) return null;
    let snapshot: FamilyShareSnapshot;
    try {
      snapshot = await this.entities.send(FAMILY_SHARE_MACHINE, record.entityId, {
        type: 'LINK',
        at: new Date(now).toISOString(),
        linkCodeHash: hash,
        linkId: newId('lnk'),
        lovedOneId: to.lovedOneId,
        workspaceId: to.workspaceId,
        uid: to.uid,
      });
    } catch (err) {
      if (!(err instanceof TransitionRefused)) throw err;
      // Linked already, to this very loved one, while the code is still on record: an earlier try
      // got as far as the transition and no further. Finish it; anything else is refused.
      const current = await this.load(record.institutionId, record.subjectRef);
      const existing = current ? activeLink(current) : null;
      if (!existing || existing.lovedOneId !== to.lovedOneId || existing.workspaceId !== to.workspaceId) return null;
      snapshot = current!;
    }
    // Projection first, then the code is spent: a crash in between leaves the code to finish with.
    const projected = (await this.project(record.institutionId, record.subjectRef)) ?? snapshot;
    await this.codes.deleteOne({ _id: hash });
    const link = activeLink(projected);
    return link ? { institutionId: record.institutionId, subjectRef: record.subjectRef, link } : null;
  }

  /** Where the client's events go, or null when they stop at the boundary. */
  async binding(institutionId: string, subjectRef: string): Promise<Binding | null> {
    const row = await this.bindings.findOne({ _id: FamilyShares.entityId(institutionId, subjectRef) });
    if (row?.state !== 'linked' || !row.link) return null;
    return { link: row.link, ...(row.purgedAt ? { purgedAt: row.purgedAt } : {}) };
  }

  /** `binding`, kept in memory by every process: each write of a binding tells them all before it
   *  returns (src/auth/credentials.ts), so an event accepted after a change sees the change. */
  async currentBinding(institutionId: string, subjectRef: string): Promise<Binding | null> {
    const binding = await this.credentials.records.lookup('binding', FamilyShares.entityId(institutionId, subjectRef), () =>
      this.binding(institutionId, subjectRef),
    );
    // A copy: the kept one is shared by every later event.
    return binding && { ...binding, link: { ...binding.link } };
  }

  /** One current link of this workspace, by its id, with the agency behind it; null when it is not one (any more). */
  async linkIn(workspaceId: string, linkId: string): Promise<{ institutionId: string; link: FamilyShareLink } | null> {
    const row = await this.bindings.findOne({ state: 'linked', 'link.linkId': linkId, 'link.workspaceId': workspaceId });
    if (!row?.link) return null;
    return { institutionId: row._id.slice(0, row._id.indexOf(':')), link: row.link };
  }

  /** The partner clients whose events go to this loved one. */
  private linkedTo(workspaceId: string, lovedOneId: string): Promise<BindingRow[]> {
    return this.bindings.find({ state: 'linked', 'link.workspaceId': workspaceId, 'link.lovedOneId': lovedOneId }).toArray();
  }

  async countLinksTo(workspaceId: string, lovedOneId: string): Promise<number> {
    return (await this.linkedTo(workspaceId, lovedOneId)).length;
  }

  /** The family removed the loved one: family-share of each linked client is turned off, as if
   *  the agency had, so nothing more arrives and the agency sees it off. The number unlinked. */
  async unlinkLovedOne(workspaceId: string, lovedOneId: string): Promise<number> {
    const rows = await this.linkedTo(workspaceId, lovedOneId);
    for (const row of rows) {
      const cut = row._id.indexOf(':');
      await this.disable(row._id.slice(0, cut), row._id.slice(cut + 1));
    }
    return rows.length;
  }

  /** Link codes past their expiry can no longer be used. */
  async sweepCodes(): Promise<number> {
    return (await this.codes.deleteMany({ expiresAt: { $lt: new Date(this.clock()) } })).deletedCount;
  }
}
