// Appointments and shared tasks of a loved one, and the one place that reads and writes them: every
// change keeps a history row saying who made it and how (in the app, or through an assistant), and
// is filed on the loved one's care timeline: an appointment at its start time, a task when done.
import { createHash } from 'node:crypto';
import type { Collection, Db, IndexDescription } from 'mongodb';
import { isDuplicateKey } from '../store/errors.js';
import { newId } from '../store/ids.js';
import { AlreadySuperseded, type Timeline, type Timelines } from '../store/timeline/port.js';
import { CARE_EVENT_STREAM, type CareEventRecord } from './careEvents.js';
import { WORKSPACE_COLLECTIONS, type LovedOneRecord, type UserRecord } from './records.js';

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
  /** The care event this version is listed as on the loved one's timeline; absent on an
   *  appointment from before they were filed, until its first change. */
  eventId?: string;
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

/** A change to an appointment made from a version someone else changed first. */
export class AppointmentChanged extends Error {
  override name = 'AppointmentChanged';
  constructor() {
    super('Someone else changed this appointment just now; look at it again.');
  }
}

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

/** The care event of an appointment's version: one id per (appointment, sequence, who made it), so
 *  the same person's change sent twice is filed once, and two people's changes of one version are
 *  two claims, of which one wins. Without `uid`: a version from before versions were filed. */
export const appointmentEventId = (appointmentId: string, sequence: number, uid?: string): string =>
  `${appointmentId}.v${sequence}${uid === undefined ? '' : `.${createHash('sha256').update(uid).digest('base64url').slice(0, 8)}`}`;
/** The care event of a task done: a task is done once. */
export const taskDoneEventId = (taskId: string): string => `${taskId}.done`;

export class PlansStore {
  private readonly appointments: Collection<AppointmentRecord>;
  private readonly tasks: Collection<TaskRecord>;
  private readonly claims: Collection<Claim>;
  private readonly changes: Collection<PlanChange>;
  private readonly users: Collection<UserRecord>;
  private readonly lovedOnes: Collection<LovedOneRecord>;
  private readonly timeline?: Timeline<CareEventRecord>;

  /** `timelines`: where changes are filed; a store without them only reads. */
  constructor(
    db: Db,
    private readonly clock: () => number = Date.now,
    timelines?: Timelines,
  ) {
    this.appointments = db.collection(APPOINTMENTS);
    this.tasks = db.collection(TASKS);
    this.claims = db.collection(TASK_CLAIMS);
    this.changes = db.collection(PLAN_CHANGES);
    this.users = db.collection(WORKSPACE_COLLECTIONS.users);
    this.lovedOnes = db.collection(WORKSPACE_COLLECTIONS.lovedOnes);
    if (timelines) this.timeline = timelines.of(CARE_EVENT_STREAM);
  }

  private filed(): Timeline<CareEventRecord> {
    if (!this.timeline) throw new Error('PlansStore: a store that writes needs the timelines to file changes on');
    return this.timeline;
  }

  /** The care event of an appointment as it now is, by whoever made this version. */
  private async appointmentEvent(a: AppointmentRecord, by: Author, id = appointmentEventId(a._id, a.sequence, by.uid)): Promise<CareEventRecord> {
    const [lovedOne, taker] = await Promise.all([
      this.lovedOnes.findOne({ _id: a.lovedOneId }, { projection: { firstName: 1 } }),
      a.takenBy ? this.users.findOne({ _id: a.takenBy }, { projection: { name: 1, email: 1 } }) : null,
    ]);
    return {
      _id: id,
      lovedOneId: a.lovedOneId,
      workspaceId: a.workspaceId,
      source: 'family',
      author: by,
      eventType: 'appointment',
      occurredAt: a.start,
      receivedAt: new Date(this.clock()),
      payload: {
        appointment_id: a._id,
        title: a.title,
        ...(a.withWhom ? { with_whom: a.withWhom } : {}),
        ...(a.place ? { place: a.place } : {}),
        start: a.start.toISOString(),
        end: a.end.toISOString(),
        time_zone: a.timeZone,
        ...(a.takenBy ? { taken_by: a.takenBy, taken_by_name: taker?.name ?? taker?.email ?? 'a former member' } : {}),
        ...(lovedOne ? { loved_one_name: lovedOne.firstName } : {}),
        ...(a.notes ? { notes: a.notes } : {}),
        status: a.status,
        ...(a.cancelReason ? { cancel_reason: a.cancelReason } : {}),
      },
      provenance: { plan: 'appointment', id: a._id, version: a.sequence },
    };
  }

  /**
   * Take the appointment from the version it was read at to `next`, on the timeline first: the
   * supersession of the read version is a claim (an insert on a unique id, atomic on FerretDB v1,
   * where a conditional update is read-then-write), so of two changes made from one version one
   * is filed and the other refused, and the store is written only by the one that was filed. An
   * appointment from before they were filed is filed as it was read, so there is one to supersede.
   */
  private async claimVersion(current: AppointmentRecord, next: AppointmentRecord, by: Author): Promise<string> {
    const timeline = this.filed();
    const read = current.eventId ?? appointmentEventId(current._id, current.sequence);
    if (!(await timeline.get(current.lovedOneId, read))) await timeline.append([await this.appointmentEvent(current, current.createdBy, read)]);
    const newer = await this.appointmentEvent(next, by);
    try {
      await timeline.supersede(current.lovedOneId, read, newer);
    } catch (err) {
      if (err instanceof AlreadySuperseded) throw new AppointmentChanged();
      throw err;
    }
    return newer._id;
  }

  /** File a task's being done, at the time it was done, in the name of whoever did it. */
  private async fileTaskDone(t: TaskRecord, by: Author): Promise<void> {
    await this.filed().append([
      {
        _id: taskDoneEventId(t._id),
        lovedOneId: t.lovedOneId,
        workspaceId: t.workspaceId,
        source: 'family',
        author: by,
        eventType: 'task_done',
        occurredAt: t.doneAt ?? new Date(this.clock()),
        receivedAt: new Date(this.clock()),
        payload: { task_id: t._id, title: t.title, due: t.due.toISOString(), time_zone: t.timeZone },
        provenance: { plan: 'task', id: t._id, version: 0 },
      },
    ]);
  }

  private async note(change: Omit<PlanChange, '_id' | 'at'>): Promise<void> {
    await this.changes.insertOne({ _id: newId('chg'), at: new Date(this.clock()), ...change });
  }

  history(recordId: string): Promise<PlanChange[]> {
    return this.changes.find({ recordId }).sort({ at: 1 }).limit(200).toArray();
  }

  async addAppointment(where: { workspaceId: string; lovedOneId: string }, fields: AppointmentFields, by: Author): Promise<AppointmentRecord> {
    const now = new Date(this.clock());
    const id = newId('apt');
    const record: AppointmentRecord = {
      _id: id,
      ...where,
      ...fields,
      status: 'scheduled',
      sequence: 0,
      eventId: appointmentEventId(id, 0, by.uid),
      createdBy: by,
      createdAt: now,
      updatedAt: now,
    };
    const timeline = this.filed();
    await this.appointments.insertOne(record);
    await this.note({ workspaceId: where.workspaceId, recordId: record._id, kind: 'appointment', action: 'added', by });
    await timeline.append([await this.appointmentEvent(record, by, record.eventId)]);
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
    const updatedAt = new Date(this.clock());
    const sequence = current.sequence + 1;
    const kept = Object.fromEntries(Object.entries(current).filter(([k]) => !(k in unset))) as AppointmentRecord;
    const eventId = await this.claimVersion(current, { ...kept, ...fields, sequence, updatedAt }, by);
    await this.appointments.updateOne(
      { _id: current._id },
      { $set: { ...fields, sequence, updatedAt, eventId }, ...(Object.keys(unset).length ? { $unset: unset } : {}) },
    );
    await this.note({ workspaceId: current.workspaceId, recordId: current._id, kind: 'appointment', action: 'changed', by, before });
  }

  async cancelAppointment(current: AppointmentRecord, by: Author, reason?: string): Promise<void> {
    if (current.status === 'cancelled') return;
    const cancelled = {
      status: 'cancelled' as const,
      sequence: current.sequence + 1,
      updatedAt: new Date(this.clock()),
      ...(reason ? { cancelReason: reason } : {}),
    };
    const eventId = await this.claimVersion(current, { ...current, ...cancelled }, by);
    await this.appointments.updateOne({ _id: current._id }, { $set: { ...cancelled, eventId } });
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
    this.filed();
    if (task.state === 'done') {
      // Filed again (changing nothing when it was): a repeat finishes what a cut-short first try began.
      if (move === 'done' && task.doneBy === by.uid) {
        await this.fileTaskDone(task, by);
        return task;
      }
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
    const done: TaskRecord = { ...task, state: 'done', takenBy: by.uid, doneBy: by.uid, doneAt: now, updatedAt: now };
    await this.fileTaskDone(done, by);
    return done;
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
