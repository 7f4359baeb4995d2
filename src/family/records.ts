// The family workspace's records and the one place that reads and writes them: other slices
// (ingest, inbox, sandbox) call the functions here and never open these collections themselves.
// Every read that serves a caller takes the caller's uid and re-derives ownership from it.
import type { Collection, Db, IndexDescription } from 'mongodb';
import { newId, randomBase32 } from '../store/ids.js';
import type { Tenant } from '../tenants.js';

export type MemberRole = 'caregiver' | 'family_member';

export interface UserRecord {
  _id: string; // uid from the identity provider
  email: string;
  name?: string;
  tenant: Tenant;
  createdAt: Date;
  lastSignInAt: Date;
  /** The family workspace this user is a member of (one per user). */
  workspaceId?: string;
  timeZone?: string; // IANA zone for every time shown: the browser's at first sign-in, then Settings
}

export interface WorkspaceRecord {
  _id: string;
  name: string;
  ownerUid: string;
  sandbox: boolean;
  createdAt: Date;
  careContext?: string;
  primaryCaregiverEmail?: string;
}

export interface MemberRecord {
  _id: string; // `${workspaceId}:${uid}`
  workspaceId: string;
  uid: string;
  email: string;
  role: MemberRole;
  joinedAt: Date;
}

export interface LovedOneRecord {
  _id: string;
  workspaceId: string;
  firstName: string;
  lastName: string;
  displayName: string;
  inboxAddress: string;
  sandbox: boolean;
  createdAt: Date;
}

export interface CareEventRecord {
  _id: string;
  lovedOneId: string;
  workspaceId: string;
  source: 'partner' | 'inbox';
  institutionId?: string;
  eventType: string;
  occurredAt: Date;
  receivedAt: Date;
  payload: Record<string, unknown>;
  sourceEventId?: string;
  /** The partner's subject of a partner event: what the partner's purge deletes by. */
  subjectRef?: string;
}

export const WORKSPACE_COLLECTIONS = {
  users: 'users',
  workspaces: 'workspaces',
  members: 'workspace_members',
  lovedOnes: 'loved_ones',
  careEvents: 'care_events',
} as const;

export const WORKSPACE_INDEXES: Record<string, IndexDescription[]> = {
  [WORKSPACE_COLLECTIONS.users]: [{ key: { email: 1 }, name: 'by_email' }],
  [WORKSPACE_COLLECTIONS.workspaces]: [{ key: { ownerUid: 1 }, name: 'by_owner' }],
  [WORKSPACE_COLLECTIONS.members]: [{ key: { uid: 1 }, name: 'by_uid' }, { key: { workspaceId: 1 }, name: 'by_workspace' }],
  [WORKSPACE_COLLECTIONS.lovedOnes]: [{ key: { workspaceId: 1 }, name: 'by_workspace' }, { key: { inboxAddress: 1 }, name: 'by_inbox', unique: true }],
  [WORKSPACE_COLLECTIONS.careEvents]: [
    { key: { lovedOneId: 1, occurredAt: -1 }, name: 'by_loved_one_time' },
    { key: { workspaceId: 1 }, name: 'by_workspace' },
    { key: { institutionId: 1, subjectRef: 1 }, name: 'by_partner_subject' },
  ],
};

const lovedOnesIn = (db: Db): Collection<LovedOneRecord> => db.collection(WORKSPACE_COLLECTIONS.lovedOnes);
const careEventsIn = (db: Db): Collection<CareEventRecord> => db.collection(WORKSPACE_COLLECTIONS.careEvents);

/** Store a care event under its `_id`. A second append of the same `_id` fails with a duplicate-key
 *  error, which a writer that delivers at least once takes as "already stored". */
export async function appendCareEvent(db: Db, event: CareEventRecord): Promise<void> {
  await careEventsIn(db).insertOne(event);
}

/** Store a batch of care events, each under its `_id`, in any order. Events already stored (a
 *  redelivery) are reported, not failed; any other refusal throws and says nothing about the rest,
 *  so a caller retries the whole batch, which the `_id`s make harmless. */
export async function appendCareEvents(db: Db, events: CareEventRecord[]): Promise<{ stored: string[]; duplicates: string[] }> {
  if (events.length === 0) return { stored: [], duplicates: [] };
  try {
    await careEventsIn(db).insertMany(events, { ordered: false });
    return { stored: events.map((e) => e._id), duplicates: [] };
  } catch (err) {
    const writeErrors = (err as { writeErrors?: { code?: number; index: number }[] | { code?: number; index: number } }).writeErrors;
    const list = writeErrors === undefined ? undefined : Array.isArray(writeErrors) ? writeErrors : [writeErrors];
    if (!list || list.length === 0 || list.some((w) => w.code !== 11000)) throw err;
    const dup = new Set(list.map((w) => w.index));
    return { stored: events.filter((_, i) => !dup.has(i)).map((e) => e._id), duplicates: events.filter((_, i) => dup.has(i)).map((e) => e._id) };
  }
}

/** Delete every care event of one loved one (removing the loved one); the number deleted. */
export async function deleteLovedOneCareEvents(db: Db, workspaceId: string, lovedOneId: string): Promise<number> {
  return (await careEventsIn(db).deleteMany({ workspaceId, lovedOneId })).deletedCount;
}

/** Delete what one partner sent about one of its subjects; the number deleted. */
export async function purgePartnerCareEvents(db: Db, institutionId: string, subjectRef: string): Promise<number> {
  return (await careEventsIn(db).deleteMany({ institutionId, subjectRef })).deletedCount;
}

/** Whether the loved one still exists in that workspace (a binding may outlive it). */
export async function hasLovedOne(db: Db, workspaceId: string, lovedOneId: string): Promise<boolean> {
  return (await lovedOnesIn(db).findOne({ _id: lovedOneId, workspaceId }, { projection: { _id: 1 } })) !== null;
}

/** The loved one behind a family inbox address, in any case and with stray spaces. */
export function lovedOneByInbox(db: Db, address: string): Promise<LovedOneRecord | null> {
  return lovedOnesIn(db).findOne({ inboxAddress: address.trim().toLowerCase() });
}

/** `<first>-<last>-<8 random base32>`: readable, unguessable, ASCII only. */
export function inboxSlug(firstName: string, lastName: string): string {
  const part = (s: string) =>
    s
      .normalize('NFKD')
      .replace(/[\u0300-\u036f]/g, '')
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 20) || 'family';
  return `${part(firstName)}-${part(lastName)}-${randomBase32(8)}`;
}

/** A cursor from listCareEvents, or null when it is not one (a page then starts from the newest). */
function decodeCursor(cursor: string): { at: Date; id: string } | null {
  try {
    const [at, id] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown[];
    const when = typeof at === 'string' ? new Date(at) : null;
    return when && !Number.isNaN(when.getTime()) && typeof id === 'string' ? { at: when, id } : null;
  } catch {
    return null;
  }
}

export class WorkspaceStore {
  private readonly users: Collection<UserRecord>;
  private readonly workspaces: Collection<WorkspaceRecord>;
  private readonly members: Collection<MemberRecord>;
  private readonly lovedOnes: Collection<LovedOneRecord>;
  private readonly careEvents: Collection<CareEventRecord>;

  constructor(
    db: Db,
    private readonly inboxDomain: string,
  ) {
    this.users = db.collection(WORKSPACE_COLLECTIONS.users);
    this.workspaces = db.collection(WORKSPACE_COLLECTIONS.workspaces);
    this.members = db.collection(WORKSPACE_COLLECTIONS.members);
    this.lovedOnes = lovedOnesIn(db);
    this.careEvents = careEventsIn(db);
  }

  /** Record a verified sign-in; the tenant of a new user is `family`. */
  async upsertUser(identity: { uid: string; email: string; name?: string }, now = new Date()): Promise<UserRecord> {
    await this.users.updateOne(
      { _id: identity.uid },
      { $set: { email: identity.email, lastSignInAt: now, ...(identity.name ? { name: identity.name } : {}) }, $setOnInsert: { tenant: 'family', createdAt: now } },
      { upsert: true },
    );
    return (await this.users.findOne({ _id: identity.uid }))!;
  }

  user(uid: string): Promise<UserRecord | null> {
    return this.users.findOne({ _id: uid });
  }

  /** The family workspace the user belongs to, if any. Read by primary keys through the user's
   *  `workspaceId` (FerretDB v1 scans for a query by any other field); the query by uid is the
   *  fallback for a user whose record does not carry it. */
  async workspaceOf(uid: string): Promise<{ workspace: WorkspaceRecord; member: MemberRecord } | null> {
    const user = await this.users.findOne({ _id: uid }, { projection: { workspaceId: 1 } });
    const member = user?.workspaceId ? await this.members.findOne({ _id: `${user.workspaceId}:${uid}` }) : await this.members.findOne({ uid });
    if (!member) return null;
    const workspace = await this.workspaces.findOne({ _id: member.workspaceId });
    return workspace ? { workspace, member } : null;
  }

  workspace(workspaceId: string): Promise<WorkspaceRecord | null> {
    return this.workspaces.findOne({ _id: workspaceId });
  }

  memberCount(workspaceId: string): Promise<number> {
    return this.members.countDocuments({ workspaceId });
  }

  async createWorkspace(input: { name: string; owner: { uid: string; email: string }; sandbox: boolean; careContext?: string; primaryCaregiverEmail?: string }, now = new Date()): Promise<WorkspaceRecord> {
    const workspace: WorkspaceRecord = {
      _id: newId('ws'),
      name: input.name,
      ownerUid: input.owner.uid,
      sandbox: input.sandbox,
      createdAt: now,
      ...(input.careContext ? { careContext: input.careContext } : {}),
      ...(input.primaryCaregiverEmail ? { primaryCaregiverEmail: input.primaryCaregiverEmail } : {}),
    };
    await this.workspaces.insertOne(workspace);
    if (!input.sandbox) await this.addMember(workspace._id, input.owner, 'caregiver', now);
    return workspace;
  }

  async addMember(workspaceId: string, who: { uid: string; email: string }, role: MemberRole, now = new Date()): Promise<void> {
    await this.members.updateOne(
      { _id: `${workspaceId}:${who.uid}` },
      { $setOnInsert: { workspaceId, uid: who.uid, email: who.email, role, joinedAt: now } },
      { upsert: true },
    );
    await this.users.updateOne({ _id: who.uid }, { $set: { workspaceId } });
  }

  async addLovedOne(workspaceId: string, name: { firstName: string; lastName: string }, sandbox: boolean, now = new Date()): Promise<LovedOneRecord> {
    const lovedOne: LovedOneRecord = {
      _id: newId('lo'),
      workspaceId,
      firstName: name.firstName,
      lastName: name.lastName,
      displayName: `${name.firstName} ${name.lastName}`,
      inboxAddress: `${inboxSlug(name.firstName, name.lastName)}@${this.inboxDomain}`,
      sandbox,
      createdAt: now,
    };
    await this.lovedOnes.insertOne(lovedOne);
    return lovedOne;
  }

  lovedOnesOf(workspaceId: string): Promise<LovedOneRecord[]> {
    return this.lovedOnes.find({ workspaceId }).sort({ createdAt: 1 }).toArray();
  }

  /** The loved one only if it is in the given workspace: ownership is never taken on trust. */
  lovedOneIn(workspaceId: string, lovedOneId: string): Promise<LovedOneRecord | null> {
    return this.lovedOnes.findOne({ _id: lovedOneId, workspaceId });
  }

  /** Newest care events of one loved one. */
  recentEvents(lovedOneId: string, limit: number): Promise<CareEventRecord[]> {
    return this.careEvents.find({ lovedOneId }).sort({ occurredAt: -1, _id: -1 }).limit(limit).toArray();
  }

  /** One page of a loved one's care events, newest first (occurredAt, then _id); the cursor is
   *  base64url of the last position returned, so a page never repeats or skips an event. */
  async listCareEvents(lovedOneId: string, q: { since?: Date; until?: Date; types?: string[]; limit: number; cursor?: string }): Promise<{ events: CareEventRecord[]; nextCursor?: string }> {
    const and: Record<string, unknown>[] = [{ lovedOneId }];
    if (q.since) and.push({ occurredAt: { $gte: q.since } });
    if (q.until) and.push({ occurredAt: { $lt: q.until } });
    if (q.types?.length) and.push({ eventType: { $in: q.types } });
    const after = q.cursor ? decodeCursor(q.cursor) : null;
    if (after) and.push({ $or: [{ occurredAt: { $lt: after.at } }, { occurredAt: after.at, _id: { $lt: after.id } }] });
    const found = await this.careEvents.find({ $and: and }).sort({ occurredAt: -1, _id: -1 }).limit(q.limit + 1).toArray();
    const events = found.slice(0, q.limit);
    const last = events[events.length - 1];
    return found.length > q.limit && last ? { events, nextCursor: Buffer.from(JSON.stringify([last.occurredAt.toISOString(), last._id])).toString('base64url') } : { events };
  }

  /** Sandbox workspaces created before `before`: what the sandbox sweep looks at. */
  sandboxesCreatedBefore(before: Date): Promise<WorkspaceRecord[]> {
    return this.workspaces.find({ sandbox: true, createdAt: { $lt: before } }).toArray();
  }

  /** A claimed sandbox becomes an ordinary workspace of `ownerUid`; ids are kept. Safe to repeat. */
  async leaveSandbox(workspaceId: string, ownerUid: string): Promise<void> {
    await this.lovedOnes.updateMany({ workspaceId }, { $set: { sandbox: false } });
    await this.workspaces.updateOne({ _id: workspaceId }, { $set: { ownerUid, sandbox: false } });
  }

  /** First step of purging a workspace: its loved ones (so their inbox addresses stop taking
   *  mail), then their care events. */
  async purgeLovedOnes(workspaceId: string): Promise<void> {
    await this.lovedOnes.deleteMany({ workspaceId });
    await this.careEvents.deleteMany({ workspaceId });
  }

  /** Last step: the members, then the workspace record, so a purge that stops half-way is still
   *  found (and finished) by looking for the workspace. */
  async purgeWorkspace(workspaceId: string): Promise<void> {
    await this.members.deleteMany({ workspaceId });
    await this.workspaces.deleteOne({ _id: workspaceId });
  }
}
