// Appointments and shared tasks of a loved one, and the one place that reads and writes them: every
// change keeps a history row saying who made it and how (in the app, or through an assistant).
import type { Collection, Db, IndexDescription } from 'mongodb';
import { isDuplicateKey } from '../store/errors.js';
import { newId } from '../store/ids.js';

export const APPOINTMENTS = 'plan_appointments';
export const TASKS = 'plan_tasks';
/** One row per taking of a task, `_id` = `${taskId}:${round}`: the claim is an insert on a unique
 *  `_id`, atomic on FerretDB v1 where a conditional update is read-then-write (see src/store/versioned.ts). */
export const TASK_CLAIMS = 'plan_task_claims';
export const PLAN_CHANGES = 'plan_changes';

/** Who made a change, and how: "Ana, in the app", "Ana's assistant, Claude". */
export interface Author {
  uid: string;
  name: string;
  via: 'app' | 'assistant';
  /** The assistant's client (an OAuth app's name or id, or "an API key"). */
  client?: string;
}

export const authorWords = (a: Author): string => (a.via === 'app' ? `${a.name}, in the app` : `${a.name}'s assistant, ${a.client ?? 'an assistant'}`);

export interface AppointmentFields {
  title: string;
  withWhom?: string;
  place?: string;
  start: Date;
  end: Date;
  /** The IANA zone the times were given in: the loved one's. */
  timeZone: string;
  /** The member taking the loved one there. */
  takenBy?: string;
  notes?: string;
}

export interface AppointmentRecord extends AppointmentFields {
  _id: string;
  workspaceId: string;
  lovedOneId: string;
  status: 'scheduled' | 'cancelled';
  /** Counts every change: the iCalendar SEQUENCE, so subscribed calendars take the latest. */
  sequence: number;
  createdBy: Author;
  createdAt: Date;
  updatedAt: Date;
  cancelReason?: string;
}

export interface TaskFields {
  title: string;
  due: Date;
  timeZone: string;
  notes?: string;
}

export type TaskState = 'open' | 'taken' | 'done';

export interface TaskRecord extends TaskFields {
  _id: string;
  workspaceId: string;
  lovedOneId: string;
  state: TaskState;
  /** How many times it was handed back: each round can be taken once. */
  round: number;
  takenBy?: string;
  doneBy?: string;
  doneAt?: Date;
  createdBy: Author;
  createdAt: Date;
  updatedAt: Date;
}

interface Claim {
  _id: string;
  taskId: string;
  uid: string;
  at: Date;
}

export type PlanAction = 'added' | 'changed' | 'cancelled' | 'taken' | 'handed back' | 'done';

export interface PlanChange {
  _id: string;
  workspaceId: string;
  recordId: string;
  kind: 'appointment' | 'task';
  action: PlanAction;
  by: Author;
  at: Date;
  /** The fields as they were before a change (an edit's earlier values stay visible). */
  before?: Record<string, unknown>;
}

export const PLAN_INDEXES: Record<string, IndexDescription[]> = {
  [APPOINTMENTS]: [
    { key: { lovedOneId: 1, start: 1 }, name: 'by_loved_one_start' },
    { key: { workspaceId: 1, start: 1 }, name: 'by_workspace_start' },
  ],
  [TASKS]: [{ key: { lovedOneId: 1, state: 1, due: 1 }, name: 'by_loved_one_state_due' }],
  [TASK_CLAIMS]: [{ key: { taskId: 1 }, name: 'by_task' }],
  [PLAN_CHANGES]: [{ key: { recordId: 1, at: 1 }, name: 'by_record' }],
};

/** A take refused: someone else holds the task, or it is done. */
export class TaskRefused extends Error {
  override name = 'TaskRefused';
  constructor(
    message: string,
    readonly holder?: string,
  ) {
    super(message);
  }
}

export type TaskMove = 'take' | 'hand_back' | 'done';

export class PlansStore {
  private readonly appointments: Collection<AppointmentRecord>;
  private readonly tasks: Collection<TaskRecord>;
  private readonly claims: Collection<Claim>;
  private readonly changes: Collection<PlanChange>;

  constructor(
    db: Db,
    private readonly clock: () => number = Date.now,
  ) {
    this.appointments = db.collection(APPOINTMENTS);
    this.tasks = db.collection(TASKS);
    this.claims = db.collection(TASK_CLAIMS);
    this.changes = db.collection(PLAN_CHANGES);
  }

  private async note(change: Omit<PlanChange, '_id' | 'at'>): Promise<void> {
    await this.changes.insertOne({ _id: newId('chg'), at: new Date(this.clock()), ...change });
  }

  history(recordId: string): Promise<PlanChange[]> {
    return this.changes.find({ recordId }).sort({ at: 1 }).limit(200).toArray();
  }

  async addAppointment(where: { workspaceId: string; lovedOneId: string }, fields: AppointmentFields, by: Author): Promise<AppointmentRecord> {
    const now = new Date(this.clock());
    const record: AppointmentRecord = {
      _id: newId('apt'),
      ...where,
      ...fields,
      status: 'scheduled',
      sequence: 0,
      createdBy: by,
      createdAt: now,
      updatedAt: now,
    };
    await this.appointments.insertOne(record);
    await this.note({ workspaceId: where.workspaceId, recordId: record._id, kind: 'appointment', action: 'added', by });
    return record;
  }

  /** One appointment of this loved one; another loved one's (or workspace's) id finds nothing. */
  appointment(lovedOneId: string, id: string): Promise<AppointmentRecord | null> {
    return this.appointments.findOne({ _id: id, lovedOneId });
  }

  async changeAppointment(current: AppointmentRecord, fields: AppointmentFields, by: Author): Promise<void> {
    const before = Object.fromEntries(
      (['title', 'withWhom', 'place', 'start', 'end', 'timeZone', 'takenBy', 'notes'] as const).map((k) => [k, current[k] ?? null]),
    );
    const unset: Record<string, ''> = Object.fromEntries(
      (['withWhom', 'place', 'takenBy', 'notes'] as const).filter((k) => fields[k] === undefined).map((k) => [k, ''] as const),
    );
    await this.appointments.updateOne(
      { _id: current._id },
      { $set: { ...fields, updatedAt: new Date(this.clock()) }, $inc: { sequence: 1 }, ...(Object.keys(unset).length ? { $unset: unset } : {}) },
    );
    await this.note({ workspaceId: current.workspaceId, recordId: current._id, kind: 'appointment', action: 'changed', by, before });
  }

  async cancelAppointment(current: AppointmentRecord, by: Author, reason?: string): Promise<void> {
    if (current.status === 'cancelled') return;
    await this.appointments.updateOne(
      { _id: current._id },
      { $set: { status: 'cancelled', updatedAt: new Date(this.clock()), ...(reason ? { cancelReason: reason } : {}) }, $inc: { sequence: 1 } },
    );
    await this.note({ workspaceId: current.workspaceId, recordId: current._id, kind: 'appointment', action: 'cancelled', by });
  }

  /** Scheduled appointments of a loved one from `since` on, soonest first. */
  upcoming(lovedOneId: string, since: Date, limit = 50): Promise<AppointmentRecord[]> {
    return this.appointments
      .find({ lovedOneId, status: 'scheduled', end: { $gte: since } })
      .sort({ start: 1 })
      .limit(limit)
      .toArray();
  }

  /** Appointments of a loved one between two instants (any status), soonest first. */
  between(lovedOneId: string, from: Date, to: Date, limit = 200): Promise<AppointmentRecord[]> {
    return this.appointments
      .find({ lovedOneId, start: { $gte: from, $lt: to } })
      .sort({ start: 1 })
      .limit(limit)
      .toArray();
  }

  /** Every appointment of a workspace from `since` on, for its calendar feeds. */
  forFeed(workspaceId: string, since: Date, limit = 500): Promise<AppointmentRecord[]> {
    return this.appointments
      .find({ workspaceId, end: { $gte: since } })
      .sort({ start: 1 })
      .limit(limit)
      .toArray();
  }

  async addTask(where: { workspaceId: string; lovedOneId: string }, fields: TaskFields, by: Author): Promise<TaskRecord> {
    const now = new Date(this.clock());
    const record: TaskRecord = { _id: newId('tsk'), ...where, ...fields, state: 'open', round: 0, createdBy: by, createdAt: now, updatedAt: now };
    await this.tasks.insertOne(record);
    await this.note({ workspaceId: where.workspaceId, recordId: record._id, kind: 'task', action: 'added', by });
    return record;
  }

  task(lovedOneId: string, id: string): Promise<TaskRecord | null> {
    return this.tasks.findOne({ _id: id, lovedOneId });
  }

  /** Open and taken tasks, soonest due first. */
  openTasks(lovedOneId: string, limit = 100): Promise<TaskRecord[]> {
    return this.tasks
      .find({ lovedOneId, state: { $in: ['open', 'taken'] } })
      .sort({ due: 1 })
      .limit(limit)
      .toArray();
  }

  /** Tasks done since an instant, latest first. */
  doneSince(lovedOneId: string, since: Date, limit = 50): Promise<TaskRecord[]> {
    return this.tasks
      .find({ lovedOneId, state: 'done', doneAt: { $gte: since } })
      .sort({ doneAt: -1 })
      .limit(limit)
      .toArray();
  }

  /**
   * Take a task ("I'll do it"), hand it back, or mark it done. Taking claims the task's current
   * round with an insert: of two members taking it at once, one insert wins and the other is
   * refused with who holds it. Marking an open task done takes it first, by the same rule. Repeating
   * one's own move answers as the first did. Returns the task as it now is.
   */
  async move(task: TaskRecord, move: TaskMove, by: Author, nameOf: (uid: string) => Promise<string>): Promise<TaskRecord> {
    const now = new Date(this.clock());
    if (task.state === 'done') {
      if (move === 'done' && task.doneBy === by.uid) return task;
      throw new TaskRefused('This task is already done.');
    }
    if (move === 'hand_back') {
      const holder = await this.holder(task);
      if (holder !== by.uid) {
        if (!holder) return task; // nobody holds it: a hand-back sent twice
        throw new TaskRefused(`${await nameOf(holder)} is doing this, so only they can hand it back.`, holder);
      }
      // Next round: the task can be taken again, by anyone.
      await this.tasks.updateOne(
        { _id: task._id, round: task.round },
        { $set: { state: 'open', round: task.round + 1, updatedAt: now }, $unset: { takenBy: '' } },
      );
      await this.note({ workspaceId: task.workspaceId, recordId: task._id, kind: 'task', action: 'handed back', by });
      const { takenBy: _gone, ...rest } = task;
      return { ...rest, state: 'open', round: task.round + 1, updatedAt: now };
    }
    const holder = await this.claim(task, by.uid);
    if (holder !== by.uid) {
      // The claim is the truth: a task row a cut-short take left open is brought up to date.
      if (task.state !== 'taken' || task.takenBy !== holder)
        await this.tasks.updateOne({ _id: task._id, round: task.round }, { $set: { state: 'taken', takenBy: holder } });
      throw new TaskRefused(`${await nameOf(holder)} already took this task.`, holder);
    }
    if (move === 'take') {
      if (task.state === 'taken' && task.takenBy === by.uid) return task;
      await this.tasks.updateOne({ _id: task._id, round: task.round }, { $set: { state: 'taken', takenBy: by.uid, updatedAt: now } });
      await this.note({ workspaceId: task.workspaceId, recordId: task._id, kind: 'task', action: 'taken', by });
      return { ...task, state: 'taken', takenBy: by.uid, updatedAt: now };
    }
    await this.tasks.updateOne({ _id: task._id, round: task.round }, { $set: { state: 'done', takenBy: by.uid, doneBy: by.uid, doneAt: now, updatedAt: now } });
    await this.note({ workspaceId: task.workspaceId, recordId: task._id, kind: 'task', action: 'done', by });
    return { ...task, state: 'done', takenBy: by.uid, doneBy: by.uid, doneAt: now, updatedAt: now };
  }

  /** Everything planned for a loved one, with its history: they are being removed. */
  async deleteLovedOne(lovedOneId: string): Promise<void> {
    const ids = [
      ...(await this.appointments.find({ lovedOneId }, { projection: { _id: 1 } }).toArray()),
      ...(await this.tasks.find({ lovedOneId }, { projection: { _id: 1 } }).toArray()),
    ].map((r) => r._id);
    if (ids.length) {
      await this.changes.deleteMany({ recordId: { $in: ids } });
      await this.claims.deleteMany({ taskId: { $in: ids } });
    }
    await this.appointments.deleteMany({ lovedOneId });
    await this.tasks.deleteMany({ lovedOneId });
  }

  /** Who holds the task's current round, if anyone. */
  private async holder(task: TaskRecord): Promise<string | undefined> {
    return (await this.claims.findOne({ _id: `${task._id}:${task.round}` }))?.uid;
  }

  /** Claim the current round for `uid`; the uid that holds it afterwards. */
  private async claim(task: TaskRecord, uid: string): Promise<string> {
    try {
      await this.claims.insertOne({ _id: `${task._id}:${task.round}`, taskId: task._id, uid, at: new Date(this.clock()) });
      return uid;
    } catch (err) {
      if (!isDuplicateKey(err)) throw err;
    }
    const holder = await this.holder(task);
    if (!holder) throw new TaskRefused('This task changed just now; look again.');
    return holder;
  }
}
