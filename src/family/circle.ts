// The family circle: who belongs to a workspace and in which role, joining by invitation,
// removal, leaving and handing the workspace over. The primary caregiver manages the workspace;
// family members read it. An account belongs to at most one family workspace.
import type { Collection, Db } from 'mongodb';
import { isDuplicateKey } from '../store/errors.js';
import type { Credentials } from '../auth/credentials.js';
import {
  familyChanged,
  WORKSPACE_COLLECTIONS,
  type MemberAccess,
  type MemberRecord,
  type MemberRole,
  type UserRecord,
  type WorkspaceRecord,
} from './records.js';

export const ROLE_LABELS: Record<MemberRole, string> = { caregiver: 'Primary caregiver', family_member: 'Family member' };

/** Whether a member may manage the workspace: invite, remove, rename, add and link loved ones. */
export const canManage = (member: Pick<MemberRecord, 'role'>): boolean => member.role === 'caregiver';

/** Whether a member may add to the care record (entries, medications, appointments, tasks): the
 *  primary caregiver always, a family member when the primary caregiver allowed it. */
export const canWrite = (member: Pick<MemberRecord, 'role' | 'access'>): boolean => member.role === 'caregiver' || member.access === 'write';

/** The words the Family page uses for a member's access. */
export const ACCESS_LABELS: Record<MemberAccess, string> = { write: 'Can add and take things', read: 'Can only read' };

export interface CircleMember {
  uid: string;
  email: string;
  name?: string;
  role: MemberRole;
  joinedAt: Date;
  /** What they may do with the care record (the primary caregiver always writes). */
  access: MemberAccess;
}

export type JoinOutcome = 'joined' | 'has_workspace';
export type LeaveOutcome = 'left' | 'last_caregiver' | 'not_member';

const memberId = (workspaceId: string, uid: string) => `${workspaceId}:${uid}`;

/** One row per account that joined by invitation, `_id` = uid: the account's one workspace slot.
 *  Taken by an insert, because an insert on a unique `_id` is atomic on FerretDB v1 where a
 *  conditional update is read-then-write (see src/store/versioned.ts). */
export const FAMILY_SEATS = 'family_seats';
const STALE_SEAT_MS = 60_000;
interface Seat {
  _id: string;
  workspaceId: string;
  at: Date;
}

/** One row per person taken out of a workspace (removed, or left), `_id` = `${workspaceId}:${uid}`,
 *  kept a day: a removal sent again (a retry after a 503 or a lost answer) finds the person gone by
 *  this workspace's hand and is answered as the first was, not "not in your family circle". */
export const FAMILY_REMOVALS = 'family_removals';
const REMOVAL_KEPT_MS = 24 * 60 * 60 * 1000;
interface Removal {
  _id: string;
  workspaceId: string;
  uid: string;
  at: Date;
}

export class FamilyCircle {
  private readonly users: Collection<UserRecord>;
  private readonly workspaces: Collection<WorkspaceRecord>;
  private readonly membersOf: Collection<MemberRecord>;
  private readonly seats: Collection<Seat>;
  private readonly removals: Collection<Removal>;

  constructor(
    private readonly db: Db,
    private readonly credentials: Credentials,
    private readonly clock: () => number = Date.now,
  ) {
    this.seats = db.collection<Seat>(FAMILY_SEATS);
    this.removals = db.collection<Removal>(FAMILY_REMOVALS);
    this.users = db.collection(WORKSPACE_COLLECTIONS.users);
    this.workspaces = db.collection(WORKSPACE_COLLECTIONS.workspaces);
    this.membersOf = db.collection(WORKSPACE_COLLECTIONS.members);
  }

  /** Everyone in the workspace, the primary caregiver first, then by when they joined. */
  async members(workspaceId: string): Promise<CircleMember[]> {
    const found = await this.membersOf.find({ workspaceId }).sort({ joinedAt: 1 }).toArray();
    const users = found.length ? await this.users.find({ _id: { $in: found.map((m) => m.uid) } }, { projection: { name: 1, email: 1 } }).toArray() : [];
    const byUid = new Map(users.map((u) => [u._id, u]));
    const list = found.map((m): CircleMember => {
      const name = byUid.get(m.uid)?.name;
      return { uid: m.uid, email: m.email, role: m.role, joinedAt: m.joinedAt, access: canWrite(m) ? 'write' : 'read', ...(name ? { name } : {}) };
    });
    return [...list.filter((m) => m.role === 'caregiver'), ...list.filter((m) => m.role !== 'caregiver')];
  }

  member(workspaceId: string, uid: string): Promise<MemberRecord | null> {
    return this.membersOf.findOne({ _id: memberId(workspaceId, uid) });
  }

  /** Join as a family member. The account's one workspace slot is taken first and only if free,
   *  so two invitations accepted at once never make it a member of two workspaces. The caller
   *  has checked that the account is in no workspace now. */
  async join(workspaceId: string, who: { uid: string; email: string }): Promise<JoinOutcome> {
    if (!(await this.takeSeat(workspaceId, who.uid))) return 'has_workspace';
    await this.users.updateOne({ _id: who.uid }, { $set: { workspaceId } });
    await this.membersOf.updateOne(
      { _id: memberId(workspaceId, who.uid) },
      // Someone invited joins to help: they may add to the care record until the caregiver says otherwise.
      { $setOnInsert: { workspaceId, uid: who.uid, email: who.email, role: 'family_member', access: 'write', joinedAt: new Date(this.clock()) } },
      { upsert: true },
    );
    await familyChanged(this.credentials, 'member', [who.uid]);
    return 'joined';
  }

  /** True when the seat is now this workspace's: taken here, or already held for it (a repeated
   *  accept). A seat left by a join that stopped half-way, or whose membership is gone, is freed. */
  private async takeSeat(workspaceId: string, uid: string): Promise<boolean> {
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        await this.seats.insertOne({ _id: uid, workspaceId, at: new Date(this.clock()) });
        return true;
      } catch (err) {
        if (!isDuplicateKey(err)) throw err;
      }
      const seat = await this.seats.findOne({ _id: uid });
      if (!seat) continue;
      if (seat.workspaceId === workspaceId) return true;
      // A seat younger than a minute may be a join still writing its member row: never take it.
      if (seat.at.getTime() > this.clock() - STALE_SEAT_MS || (await this.member(seat.workspaceId, uid))) return false;
      await this.seats.deleteOne({ _id: uid, workspaceId: seat.workspaceId });
    }
    return false;
  }

  /** Take someone out of the workspace at once: their sessions then show no workspace. The
   *  caller revokes their keys and app grants (those live with the credentials). Safe to repeat:
   *  every step is, so a repeat finishes what an attempt cut short left undone. */
  async remove(workspaceId: string, uid: string): Promise<boolean> {
    const now = this.clock();
    // Rows nobody will look for again are cleared here: no sweep job for so small a thing.
    await this.removals.deleteMany({ at: { $lt: new Date(now - REMOVAL_KEPT_MS) } });
    // Before the member goes: whoever finds them gone finds this too.
    try {
      await this.removals.updateOne({ _id: memberId(workspaceId, uid) }, { $set: { workspaceId, uid, at: new Date(now) } }, { upsert: true });
    } catch (err) {
      if (!isDuplicateKey(err)) throw err; // the same removal at the same moment wrote it
    }
    const res = await this.membersOf.deleteOne({ _id: memberId(workspaceId, uid) });
    await this.users.updateOne({ _id: uid, workspaceId }, { $unset: { workspaceId: '' } });
    await this.seats.deleteOne({ _id: uid, workspaceId });
    // Before this returns, no process serves them the workspace any more.
    await familyChanged(this.credentials, 'member', [uid]);
    return res.deletedCount === 1;
  }

  /** Set what a family member may do with the care record; every process reads it again before
   *  this returns. False when they are not a member (or are the primary caregiver, who always writes). */
  async setAccess(workspaceId: string, uid: string, access: MemberAccess): Promise<boolean> {
    const res = await this.membersOf.updateOne({ _id: memberId(workspaceId, uid), role: 'family_member' }, { $set: { access } });
    await familyChanged(this.credentials, 'member', [uid]);
    return res.matchedCount === 1;
  }

  /** Whether the person was taken out of this workspace within the last day (and is not back). */
  async removedRecently(workspaceId: string, uid: string): Promise<boolean> {
    const removal = await this.removals.findOne({ _id: memberId(workspaceId, uid) });
    return !!removal && removal.at.getTime() > this.clock() - REMOVAL_KEPT_MS && !(await this.member(workspaceId, uid));
  }

  /** Leave the workspace, unless that would leave it with no primary caregiver. */
  async leave(workspaceId: string, uid: string): Promise<LeaveOutcome> {
    const me = await this.member(workspaceId, uid);
    if (!me) return 'not_member';
    if (me.role === 'caregiver' && (await this.membersOf.countDocuments({ workspaceId, role: 'caregiver' })) <= 1) return 'last_caregiver';
    await this.remove(workspaceId, uid);
    return 'left';
  }

  /** The primary caregiver hands the workspace to another member and becomes a family member. */
  async handOver(workspaceId: string, fromUid: string, toUid: string): Promise<boolean> {
    const [from, to] = await Promise.all([this.member(workspaceId, fromUid), this.member(workspaceId, toUid)]);
    if (!from || !to || from.role !== 'caregiver' || fromUid === toUid) return false;
    // The new caregiver first: a hand-over cut short leaves two caregivers, never none.
    await this.membersOf.updateOne({ _id: to._id }, { $set: { role: 'caregiver' } });
    await this.workspaces.updateOne({ _id: workspaceId }, { $set: { ownerUid: toUid } });
    await this.membersOf.updateOne({ _id: from._id }, { $set: { role: 'family_member' } });
    await Promise.all([familyChanged(this.credentials, 'member', [fromUid, toUid]), familyChanged(this.credentials, 'workspace', [workspaceId])]);
    return true;
  }
}
