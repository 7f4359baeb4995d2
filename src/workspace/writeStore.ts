// Where the workspace keeps write tools' claims and first results, and the changes waiting for a
// person to approve in the app: plain collections, each record expiring by a field checked on read
// and removed by the cron sweep.
import { hkdfSync } from 'node:crypto';
import type { Collection, Db, IndexDescription } from 'mongodb';
import type { Tenant } from '../tenants.js';
import { isDuplicateKey } from '../store/errors.js';
import type { SweepJob } from '../slice/contract.js';
import {
  IDEMPOTENCY_WINDOW_MS,
  pendingIdOf,
  RequestStates,
  type IdempotencyStore,
  type PendingChange,
  type PendingChanges,
  type StoredWrite,
} from '../rpc/writes.js';
import type { WorkspaceCaller } from './caller.js';

export const MCP_WRITES = 'mcp_writes';
export const MCP_PENDING_CHANGES = 'mcp_pending_changes';
export const WRITE_STORE_INDEXES: Record<string, IndexDescription[]> = {
  [MCP_WRITES]: [{ key: { expiresAt: 1 }, name: 'by_expiry' }],
  [MCP_PENDING_CHANGES]: [
    { key: { uid: 1, createdAt: -1 }, name: 'by_uid_time' },
    { key: { expiresAt: 1 }, name: 'by_expiry' },
  ],
};

/** How long a change waits for the person in the app before the assistant must ask again. */
export const PENDING_TTL_MS = 24 * 3600_000;

interface WriteRow {
  _id: string;
  digest: string;
  result?: string;
  expiresAt: Date;
}

/** Claims by insert on a unique `_id`: the one write FerretDB v1 makes atomic across connections. */
export class MongoIdempotencyStore implements IdempotencyStore {
  private readonly rows: Collection<WriteRow>;

  constructor(
    db: Db,
    private readonly windowMs = IDEMPOTENCY_WINDOW_MS,
  ) {
    this.rows = db.collection<WriteRow>(MCP_WRITES);
  }

  async find(id: string, now: number): Promise<StoredWrite | null> {
    const row = await this.rows.findOne({ _id: id });
    return row && row.expiresAt.getTime() > now ? storedOf(row) : null;
  }

  async claim(id: string, digest: string, now: number): Promise<StoredWrite | null> {
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        await this.rows.insertOne({ _id: id, digest, expiresAt: new Date(now + this.windowMs) });
        return null;
      } catch (err) {
        if (!isDuplicateKey(err)) throw err;
      }
      const row = await this.rows.findOne({ _id: id });
      if (row && row.expiresAt.getTime() > now) return storedOf(row);
      // Expired and not swept yet: removed (only if still that row), then claimed afresh.
      if (row) await this.rows.deleteOne({ _id: id, expiresAt: row.expiresAt });
    }
    // Another caller claimed it between our delete and insert: theirs is the live one.
    const row = await this.rows.findOne({ _id: id });
    return row ? storedOf(row) : { digest };
  }

  async complete(id: string, result: string): Promise<void> {
    await this.rows.updateOne({ _id: id }, { $set: { result } });
  }

  async release(id: string): Promise<void> {
    await this.rows.deleteOne({ _id: id, result: { $exists: false } });
  }

  async sweep(now: number): Promise<number> {
    return (await this.rows.deleteMany({ expiresAt: { $lte: new Date(now) } })).deletedCount;
  }
}

const storedOf = (row: WriteRow): StoredWrite => ({ digest: row.digest, ...(row.result !== undefined ? { result: row.result } : {}) });

/** A change an assistant asked for, waiting for the person to approve or decline in the app. */
export interface PendingRow {
  _id: string;
  uid: string;
  tenant: Tenant;
  tool: string;
  question: string;
  /** Who asked: the key's id or the connected app's client id, to name it on the page. */
  keyId?: string;
  clientId?: string;
  /** The caller as verified when it asked, and the write's idempotency scope and digest: to apply it on approval. */
  caller?: WorkspaceCaller;
  callerKey?: string;
  digest?: string;
  /** The arguments, as JSON (a row stored before changes were applied on approval has none). */
  args?: string;
  basis?: string;
  /** `applying` while the approval makes it; `applied` once made, with its first reply and targets. */
  status: 'waiting' | 'approved' | 'declined' | 'applying' | 'applied';
  result?: string;
  createdAt: Date;
  expiresAt: Date;
}

export class PendingStore implements PendingChanges {
  private readonly rows: Collection<PendingRow>;

  constructor(db: Db) {
    this.rows = db.collection<PendingRow>(MCP_PENDING_CHANGES);
  }

  async park(change: Parameters<PendingChanges['park']>[0]): Promise<PendingChange> {
    const caller = change.caller as WorkspaceCaller;
    const id = pendingIdOf(change.callerKey, change.digest);
    const row: PendingRow = {
      _id: id,
      uid: caller.uid,
      tenant: caller.tenant,
      tool: change.tool,
      question: change.question,
      ...(caller.keyId ? { keyId: caller.keyId } : {}),
      ...(caller.clientId ? { clientId: caller.clientId } : {}),
      caller: {
        uid: caller.uid,
        email: caller.email,
        tenant: caller.tenant,
        via: caller.via,
        scopes: caller.scopes,
        ...(caller.keyId ? { keyId: caller.keyId } : {}),
        ...(caller.clientId ? { clientId: caller.clientId } : {}),
      },
      callerKey: change.callerKey,
      digest: change.digest,
      args: JSON.stringify(change.args),
      ...(change.basis !== undefined ? { basis: change.basis } : {}),
      status: 'waiting',
      createdAt: new Date(change.now),
      expiresAt: new Date(change.now + PENDING_TTL_MS),
    };
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        await this.rows.insertOne(row);
        return { id, status: 'waiting' };
      } catch (err) {
        if (!isDuplicateKey(err)) throw err;
      }
      const found = await this.rows.findOne({ _id: id });
      if (found && found.expiresAt.getTime() > change.now) return { id, status: found.status, ...(found.result !== undefined ? { result: found.result } : {}) };
      if (found) await this.rows.deleteOne({ _id: id, expiresAt: found.expiresAt });
    }
    return { id, status: 'waiting' };
  }

  async used(id: string): Promise<void> {
    await this.rows.deleteOne({ _id: id });
  }

  /** A person's changes still waiting for their answer, newest first. */
  async waiting(uid: string, now: number): Promise<PendingRow[]> {
    return this.rows
      .find({ uid, status: 'waiting', expiresAt: { $gt: new Date(now) } })
      .sort({ createdAt: -1 })
      .limit(50)
      .toArray();
  }

  /**
   * A waiting change of this person's, taken to be applied (`applying`), so a second approval finds
   * nothing; null when there is none.
   */
  async take(uid: string, id: string, now: number): Promise<PendingRow | null> {
    const taken = await this.rows.updateOne({ _id: id, uid, status: 'waiting', expiresAt: { $gt: new Date(now) } }, { $set: { status: 'applying' } });
    return taken.modifiedCount === 1 ? this.rows.findOne({ _id: id }) : null;
  }

  /** The change made on approval: later identical calls get `result` until the change expires. */
  async applied(id: string, result: string): Promise<void> {
    await this.rows.updateOne({ _id: id, status: 'applying' }, { $set: { status: 'applied', result } });
  }

  /**
   * An approval that did not make the change here: back to waiting (it could not finish for now), or
   * approved, for the assistant's next identical call to make.
   */
  async untake(id: string, status: 'waiting' | 'approved'): Promise<void> {
    await this.rows.updateOne({ _id: id, status: 'applying' }, { $set: { status } });
  }

  /** The person's answer; false when there is no such waiting change of theirs. */
  async decide(uid: string, id: string, decision: 'approved' | 'declined', now: number): Promise<boolean> {
    const done = await this.rows.updateOne({ _id: id, uid, status: 'waiting', expiresAt: { $gt: new Date(now) } }, { $set: { status: decision } });
    return done.modifiedCount === 1;
  }

  async sweep(now: number): Promise<number> {
    return (await this.rows.deleteMany({ expiresAt: { $lte: new Date(now) } })).deletedCount;
  }
}

/** The key that signs confirmations' requestState: derived from the service's data key, never stored. */
export function requestStates(dataKey: Buffer): RequestStates {
  return new RequestStates(new Uint8Array(hkdfSync('sha256', dataKey, Buffer.alloc(0), 'carecircle mcp request state v1', 32)));
}

/** Expired claims, results and pending changes, removed every ten minutes. */
export function writeSweepJobs(db: Db, clock: () => number): SweepJob[] {
  const writes = new MongoIdempotencyStore(db);
  const pending = new PendingStore(db);
  return [
    {
      name: 'mcp-writes',
      schedule: '*/10 * * * *',
      run: async () => ({ writes: await writes.sweep(clock()), pending: await pending.sweep(clock()) }),
    },
  ];
}
