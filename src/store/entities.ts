// Long-lived entities as XState actors whose persisted snapshots live in MongoDB.
//
// A worker loads the snapshot, applies one event with the pure `transition`, and writes the
// next snapshot as a new version (store/versioned.ts): if another process wrote first, it
// reloads and tries again, so no transition is lost or applied on a stale state. The machine's
// name and version are stored beside the snapshot; a stored snapshot is untrusted input and
// is checked against the machine before use.
import type { Db, Document } from 'mongodb';
import {
  createActor,
  initialTransition,
  transition,
  type AnyMachineSnapshot,
  type AnyStateMachine,
  type EventFromLogic,
  type InputFrom,
  type SnapshotFrom,
} from 'xstate';
import { VersionedStore } from './versioned.js';

export const ENTITY_SNAPSHOTS = 'entity_snapshots';

interface StoredSnapshot extends Document {
  machine: string;
  machineVersion: number;
  snapshot: Record<string, unknown>;
}

export interface MachineSpec<M extends AnyStateMachine> {
  /** Stable name, also the key prefix (`apiKey`, `familyShare`, `sandboxWorkspace`). */
  name: string;
  /** Bump when a change makes old snapshots unreadable. */
  version: number;
  machine: M;
}

/** The event cannot happen in the entity's current state (a refused transition). */
export class TransitionRefused extends Error {
  override name = 'TransitionRefused';
  constructor(
    readonly entity: string,
    readonly event: string,
    readonly state: unknown,
  ) {
    super(`${entity}: ${event} is not possible in state ${JSON.stringify(state)}`);
  }
}

export class EntityNotFound extends Error {
  override name = 'EntityNotFound';
}

export class EntityConflict extends Error {
  override name = 'EntityConflict';
}

const MAX_ATTEMPTS = 20;

export class EntityStore {
  private readonly rows: VersionedStore<StoredSnapshot>;

  constructor(
    db: Db,
    private readonly clock: () => number = Date.now,
  ) {
    this.rows = new VersionedStore<StoredSnapshot>(db, ENTITY_SNAPSHOTS);
  }

  private key(spec: MachineSpec<AnyStateMachine>, id: string) {
    return `${spec.name}:${id}`;
  }

  /** Restore a stored snapshot, refusing one from another machine or version. */
  private restore<M extends AnyStateMachine>(spec: MachineSpec<M>, stored: StoredSnapshot): SnapshotFrom<M> {
    if (stored.machine !== spec.name || stored.machineVersion !== spec.version)
      throw new EntityConflict(`stored snapshot is ${stored.machine} v${stored.machineVersion}, expected ${spec.name} v${spec.version}`);
    return (
      createActor(spec.machine as AnyStateMachine, { snapshot: stored.snapshot as never }) as { getSnapshot(): unknown }
    ).getSnapshot() as SnapshotFrom<M>;
  }

  async load<M extends AnyStateMachine>(spec: MachineSpec<M>, id: string): Promise<SnapshotFrom<M> | null> {
    const row = await this.rows.latest(this.key(spec, id));
    return row ? this.restore(spec, row.state) : null;
  }

  /** Create the entity in its initial state; false if it already exists. */
  async create<M extends AnyStateMachine>(spec: MachineSpec<M>, id: string, input: InputFrom<M>): Promise<SnapshotFrom<M>> {
    const [snapshot] = initialTransition(spec.machine, input as never);
    const ok = await this.rows.tryWrite(this.key(spec, id), 1, this.toStored(spec, snapshot), this.clock());
    if (!ok) throw new EntityConflict(`${spec.name} ${id} already exists`);
    return snapshot as SnapshotFrom<M>;
  }

  /** Apply one event to the newest snapshot; refused events throw TransitionRefused. */
  async send<M extends AnyStateMachine>(spec: MachineSpec<M>, id: string, event: EventFromLogic<M>): Promise<SnapshotFrom<M>> {
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const row = await this.rows.latest(this.key(spec, id));
      if (!row) throw new EntityNotFound(`${spec.name} ${id} does not exist`);
      const current = this.restore(spec, row.state) as AnyMachineSnapshot;
      if (!current.can(event)) throw new TransitionRefused(spec.name, event.type, current.value);
      const [next] = transition(spec.machine as AnyStateMachine, current, event);
      if (await this.rows.tryWrite(this.key(spec, id), row.v + 1, this.toStored(spec, next), this.clock())) return next as SnapshotFrom<M>;
    }
    throw new EntityConflict(`${spec.name} ${id}: too many concurrent changes`);
  }

  /** Forget an entity entirely (purges). */
  remove(spec: MachineSpec<AnyStateMachine>, id: string): Promise<void> {
    return this.rows.remove(this.key(spec, id));
  }

  private toStored(spec: MachineSpec<AnyStateMachine>, snapshot: unknown): StoredSnapshot {
    return { machine: spec.name, machineVersion: spec.version, snapshot: spec.machine.getPersistedSnapshot(snapshot as never) as Record<string, unknown> };
  }
}
