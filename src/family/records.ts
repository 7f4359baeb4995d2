// The family workspace's records and the one place that reads and writes them: other slices
// (ingest, inbox, sandbox) call the functions here and never open these collections themselves.
// Every read that serves a caller takes the caller's uid and re-derives ownership from it.
// A caller's membership, workspace and loved ones are kept in memory per process; every writer of
// them tells every process before it returns (`familyChanged`), as a revoked credential does.
import type { Collection, Db, IndexDescription } from 'mongodb';
import type { Credentials } from '../auth/credentials.js';
import { isDuplicateKey } from '../store/errors.js';
import { newId, randomBase32 } from '../store/ids.js';
import type { Timelines } from '../store/timeline/port.js';
import { CARE_EVENTS, listCareEvents, purgeWorkspaceCareEvents, type CareEventPage, type CareEventQuery, type CareEventRecord } from './careEvents.js';
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
  /** What a family member may do with the care record: `write` adds entries, medications,
   *  appointments and tasks; absent or `read`: reads only (members from before writes existed). */
  access?: MemberAccess;
}

export type MemberAccess = 'read' | 'write';

export interface LovedOneRecord {
  _id: string;
  workspaceId: string;
  firstName: string;
  lastName: string;
  displayName: string;
  inboxAddress: string;
  sandbox: boolean;
  createdAt: Date;
  /** Their IANA zone: where new medications, appointments and tasks are meant unless one names
   *  another. Set when they are added (the adding caregiver's, unless given) or on their edit page;
   *  loved ones added before it existed have none until then. */
  timeZone?: string;
}

/** A loved one as the JSON API and the workspace tools show them: no internal fields beyond the id. */
export const lovedOneView = (l: LovedOneRecord) => ({
  id: l._id,
  name: l.displayName,
  firstName: l.firstName,
  lastName: l.lastName,
  inboxAddress: l.inboxAddress,
  ...(l.timeZone ? { timeZone: l.timeZone } : {}),
});

export {
  appendCareEvents,
  careEventStored,
  countLovedOneCareEvents,
  deleteLovedOneCareEvents,
  purgePartnerCareEvents,
  withdrawPartnerCareEvent,
  CARE_EVENT_STREAM,
} from './careEvents.js';
export type { CareEventPage, CareEventQuery, CareEventRecord } from './careEvents.js';

/** How many store pages one page filtered by writer reads at most before it offers the next. */
const MAX_FILTERED_READS = 20;

export const WORKSPACE_COLLECTIONS = {
  users: 'users',
  workspaces: 'workspaces',
  members: 'workspace_members',
  lovedOnes: 'loved_ones',
  careEvents: CARE_EVENTS,
} as const;

export const WORKSPACE_INDEXES: Record<string, IndexDescription[]> = {
  [WORKSPACE_COLLECTIONS.users]: [{ key: { email: 1 }, name: 'by_email' }],
  [WORKSPACE_COLLECTIONS.workspaces]: [{ key: { ownerUid: 1 }, name: 'by_owner' }],
  [WORKSPACE_COLLECTIONS.members]: [
    { key: { uid: 1 }, name: 'by_uid' },
    { key: { workspaceId: 1 }, name: 'by_workspace' },
  ],
  [WORKSPACE_COLLECTIONS.lovedOnes]: [
    { key: { workspaceId: 1 }, name: 'by_workspace' },
    { key: { inboxAddress: 1 }, name: 'by_inbox', unique: true },
  ],
  [WORKSPACE_COLLECTIONS.careEvents]: [
    { key: { lovedOneId: 1, occurredAt: -1 }, name: 'by_loved_one_time' },
    { key: { workspaceId: 1 }, name: 'by_workspace' },
    { key: { institutionId: 1, subjectRef: 1 }, name: 'by_partner_subject' },
  ],
};

/** Call after writing a member (by uid), a workspace or a loved one (by id): every process reads
 *  it again on its next request, and this resolves once each has acknowledged. A record created
 *  with a new id needs no call: a miss is never kept. */
export function familyChanged(credentials: Credentials, kind: 'member' | 'workspace' | 'lovedOne', ids: readonly string[]): Promise<void> {
  return credentials.changed(kind, ids);
}

const lovedOnesIn = (db: Db): Collection<LovedOneRecord> => db.collection(WORKSPACE_COLLECTIONS.lovedOnes);
/** Whether the loved one still exists in that workspace (a binding may outlive it); kept in
 *  memory like `lovedOneIn`, and forgotten everywhere when the loved one changes or goes. */
export async function hasLovedOne(db: Db, credentials: Credentials, workspaceId: string, lovedOneId: string): Promise<boolean> {
  return (await keptLovedOne(db, credentials, lovedOneId))?.workspaceId === workspaceId;
}

/** A loved one by id from this process's memory (filled from the store on a miss). Shared with
 *  every later reader: never change what it returns. */
const keptLovedOne = (db: Db, credentials: Credentials, lovedOneId: string): Promise<LovedOneRecord | null> =>
  credentials.records.lookup('lovedOne', lovedOneId, () => lovedOnesIn(db).findOne({ _id: lovedOneId }));

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

export class WorkspaceStore {
  private readonly users: Collection<UserRecord>;
  private readonly workspaces: Collection<WorkspaceRecord>;
  private readonly members: Collection<MemberRecord>;
  private readonly lovedOnes: Collection<LovedOneRecord>;

  constructor(
    private readonly db: Db,
    private readonly credentials: Credentials,
    private readonly inboxDomain: string,
    /** The store's timelines: the care events' stream among them (src/family/entries.ts writes there). */
    readonly timelines: Timelines,
  ) {
    this.users = db.collection(WORKSPACE_COLLECTIONS.users);
    this.workspaces = db.collection(WORKSPACE_COLLECTIONS.workspaces);
    this.members = db.collection(WORKSPACE_COLLECTIONS.members);
    this.lovedOnes = lovedOnesIn(db);
  }

  /** Record a verified sign-in; the tenant of a new user is `family`. */
  async upsertUser(identity: { uid: string; email: string; name?: string }, now = new Date()): Promise<UserRecord> {
    await this.users.updateOne(
      { _id: identity.uid },
      {
        $set: { email: identity.email, lastSignInAt: now, ...(identity.name ? { name: identity.name } : {}) },
        $setOnInsert: { tenant: 'family', createdAt: now },
      },
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
    const kept = this.credentials.records;
    const member = await kept.lookup('member', uid, () => this.memberOf(uid));
    if (!member) return null;
    const workspace = await kept.lookup('workspace', member.workspaceId, () => this.workspaces.findOne({ _id: member.workspaceId }));
    // Copies: a caller that changed one would change what every later request is served.
    return workspace ? { workspace: { ...workspace }, member: { ...member } } : null;
  }

  private async memberOf(uid: string): Promise<MemberRecord | null> {
    const user = await this.users.findOne({ _id: uid }, { projection: { workspaceId: 1 } });
    return user?.workspaceId ? this.members.findOne({ _id: `${user.workspaceId}:${uid}` }) : this.members.findOne({ uid });
  }

  workspace(workspaceId: string): Promise<WorkspaceRecord | null> {
    return this.workspaces.findOne({ _id: workspaceId });
  }

  memberCount(workspaceId: string): Promise<number> {
    return this.members.countDocuments({ workspaceId });
  }

  /** A new workspace and, unless a sandbox, its owner as primary caregiver. With `id` (chosen
   *  before a first attempt, see src/app/creations.ts) it is safe to repeat: a workspace of that
   *  owner already under the id is the one an earlier attempt wrote, and the member is written again. */
  async createWorkspace(
    input: { id?: string; name: string; owner: { uid: string; email: string }; sandbox: boolean; careContext?: string; primaryCaregiverEmail?: string },
    now = new Date(),
  ): Promise<WorkspaceRecord> {
    let workspace: WorkspaceRecord = {
      _id: input.id ?? newId('ws'),
      name: input.name,
      ownerUid: input.owner.uid,
      sandbox: input.sandbox,
      createdAt: now,
      ...(input.careContext ? { careContext: input.careContext } : {}),
      ...(input.primaryCaregiverEmail ? { primaryCaregiverEmail: input.primaryCaregiverEmail } : {}),
    };
    try {
      await this.workspaces.insertOne(workspace);
    } catch (err) {
      const earlier = input.id && isDuplicateKey(err) ? await this.workspaces.findOne({ _id: input.id, ownerUid: input.owner.uid }) : null;
      if (!earlier) throw err;
      workspace = earlier;
    }
    if (!input.sandbox) await this.addMember(workspace._id, input.owner, 'caregiver', now);
    return workspace;
  }

  async addMember(workspaceId: string, who: { uid: string; email: string }, role: MemberRole, now = new Date()): Promise<void> {
    try {
      await this.members.updateOne(
        { _id: `${workspaceId}:${who.uid}` },
        { $setOnInsert: { workspaceId, uid: who.uid, email: who.email, role, joinedAt: now } },
        { upsert: true },
      );
    } catch (err) {
      // The same upsert at the same moment (a repeated creation) inserted it first: FerretDB v1
      // reads, then writes, so the second insert meets the first.
      if (!isDuplicateKey(err)) throw err;
    }
    await this.users.updateOne({ _id: who.uid }, { $set: { workspaceId } });
    await familyChanged(this.credentials, 'member', [who.uid]);
  }

  /** A new loved one. With `id` it is safe to repeat, as `createWorkspace` with one: a loved one of
   *  that workspace already under the id is the one an earlier attempt wrote. */
  async addLovedOne(
    workspaceId: string,
    name: { firstName: string; lastName: string; timeZone?: string | undefined },
    sandbox: boolean,
    now = new Date(),
    id?: string,
  ): Promise<LovedOneRecord> {
    const lovedOne: LovedOneRecord = {
      _id: id ?? newId('lo'),
      workspaceId,
      firstName: name.firstName,
      lastName: name.lastName,
      displayName: `${name.firstName} ${name.lastName}`,
      inboxAddress: `${inboxSlug(name.firstName, name.lastName)}@${this.inboxDomain}`,
      sandbox,
      createdAt: now,
      ...(name.timeZone ? { timeZone: name.timeZone } : {}),
    };
    try {
      await this.lovedOnes.insertOne(lovedOne);
    } catch (err) {
      const earlier = id && isDuplicateKey(err) ? await this.lovedOnes.findOne({ _id: id, workspaceId }) : null;
      if (!earlier) throw err;
      return earlier;
    }
    return lovedOne;
  }

  lovedOnesOf(workspaceId: string): Promise<LovedOneRecord[]> {
    return this.lovedOnes.find({ workspaceId }).sort({ createdAt: 1 }).toArray();
  }

  /** The loved one only if it is in the given workspace: ownership is never taken on trust. */
  async lovedOneIn(workspaceId: string, lovedOneId: string): Promise<LovedOneRecord | null> {
    const lovedOne = await keptLovedOne(this.db, this.credentials, lovedOneId);
    return lovedOne?.workspaceId === workspaceId ? { ...lovedOne } : null;
  }

  /** Newest care events of one loved one. */
  async recentEvents(lovedOneId: string, limit: number): Promise<CareEventRecord[]> {
    return (await this.listCareEvents(lovedOneId, { limit })).events;
  }

  /** One page of a loved one's care events, newest first, filtered by time (`since` inclusive,
   *  `until` exclusive) and type; `nextCursor` continues it, and only it (a cursor of another
   *  query throws CursorRefused). The caller checks ownership. */
  async listCareEvents(lovedOneId: string, q: CareEventQuery): Promise<CareEventPage> {
    const page = await listCareEvents(this.timelines, lovedOneId, q);
    return { ...page, events: await this.withFormerMembers(page.events) };
  }

  /** One page of the events one kind of writer made (`partner`: the agency; `family`; `inbox`):
   *  store pages are read, each asking for what is still missing, until the page is full; the
   *  cursor is the store's own, so the next page goes on where this one stopped reading. */
  async listCareEventsFrom(lovedOneId: string, q: CareEventQuery, source: CareEventRecord['source']): Promise<CareEventPage> {
    const events: CareEventRecord[] = [];
    let cursor = q.cursor;
    for (let reads = 0; reads < MAX_FILTERED_READS; reads++) {
      const page = await this.listCareEvents(lovedOneId, { ...q, limit: q.limit - events.length, ...(cursor ? { cursor } : {}) });
      events.push(...page.events.filter((e) => e.source === source));
      cursor = page.nextCursor;
      if (!cursor || events.length >= q.limit) break;
    }
    return cursor ? { events, nextCursor: cursor } : { events };
  }

  /** Family entries of people who have since deleted their account, marked so: they stay in the
   *  family's record, shown as written by "a former member", without their uid or name. */
  async withFormerMembers(events: CareEventRecord[]): Promise<CareEventRecord[]> {
    const uids = [...new Set(events.flatMap((e) => (e.author ? [e.author.uid] : [])))];
    if (!uids.length) return events;
    const present = new Set((await this.users.find({ _id: { $in: uids } }, { projection: { _id: 1 } }).toArray()).map((u) => u._id));
    return events.map((e) =>
      e.author && !present.has(e.author.uid) ? { ...e, author: { uid: '', name: 'a former member', via: e.author.via, former: true } } : e,
    );
  }

  /** Delete a person's profile (their account): the caller has ended their membership, sessions,
   *  keys and app grants first. What they wrote stays in the family's record (see withFormerMembers). */
  async deleteUser(uid: string): Promise<void> {
    await this.users.deleteOne({ _id: uid });
    await familyChanged(this.credentials, 'member', [uid]);
  }

  /** Sandbox workspaces created before `before`: what the sandbox sweep looks at. */
  sandboxesCreatedBefore(before: Date): Promise<WorkspaceRecord[]> {
    return this.workspaces.find({ sandbox: true, createdAt: { $lt: before } }).toArray();
  }

  /** A claimed sandbox becomes an ordinary workspace of `ownerUid`; ids are kept. Safe to repeat. */
  async leaveSandbox(workspaceId: string, ownerUid: string): Promise<void> {
    await this.lovedOnes.updateMany({ workspaceId }, { $set: { sandbox: false } });
    await this.workspaces.updateOne({ _id: workspaceId }, { $set: { ownerUid, sandbox: false } });
    const ids = (await this.lovedOnes.find({ workspaceId }, { projection: { _id: 1 } }).toArray()).map((l) => l._id);
    await Promise.all([familyChanged(this.credentials, 'lovedOne', ids), familyChanged(this.credentials, 'workspace', [workspaceId])]);
  }

  /** First step of purging a workspace: its loved ones (so their inbox addresses stop taking
   *  mail), then their care events. */
  async purgeLovedOnes(workspaceId: string): Promise<void> {
    const ids = (await this.lovedOnes.find({ workspaceId }, { projection: { _id: 1 } }).toArray()).map((l) => l._id);
    await this.lovedOnes.deleteMany({ workspaceId });
    await familyChanged(this.credentials, 'lovedOne', ids);
    await purgeWorkspaceCareEvents(this.timelines, workspaceId, ids);
  }

  /** Last step: the members, then the workspace record, so a purge that stops half-way is still
   *  found (and finished) by looking for the workspace. */
  async purgeWorkspace(workspaceId: string): Promise<void> {
    const uids = (await this.members.find({ workspaceId }, { projection: { uid: 1 } }).toArray()).map((m) => m.uid);
    await this.members.deleteMany({ workspaceId });
    await this.workspaces.deleteOne({ _id: workspaceId });
    await Promise.all([familyChanged(this.credentials, 'member', uids), familyChanged(this.credentials, 'workspace', [workspaceId])]);
  }
}
