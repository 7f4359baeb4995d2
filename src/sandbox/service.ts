// Sandbox workspaces: created by an agent with no sign-in, claimed by the human with the same
// verified email, purged when nobody claims them. The machine decides; this module applies its
// decisions to the records, in an order that a retry or the next sweep can always finish.
import type { Credentials } from '../auth/credentials.js';
import type { Collection, Db, IndexDescription } from 'mongodb';
import { SANDBOX_WORKSPACE_MACHINE } from '../../machines/sandboxWorkspace.js';
import { purgeInboxOf } from '../inbox/records.js';
import { EntityStore, TransitionRefused } from '../store/entities.js';
import { newId } from '../store/ids.js';
import { WorkspaceStore, type LovedOneRecord, type WorkspaceRecord } from '../family/records.js';
import type { Timelines } from '../store/timeline/port.js';

export const ANONYMOUS_OWNER = 'anonymous-mcp';
export const INVITE_DRAFTS = 'invite_drafts';
export const SANDBOX_INDEXES: Record<string, IndexDescription[]> = {
  [INVITE_DRAFTS]: [{ key: { workspaceId: 1 }, name: 'by_workspace' }],
};

export interface InviteDraft {
  _id: string;
  workspaceId: string;
  email: string;
  role: 'family_member';
  status: 'draft' | 'sent';
  createdAt: Date;
  sentAt?: Date;
}

export interface SandboxInput {
  lovedOneFirstName: string;
  lovedOneLastName: string;
  familyName?: string;
  primaryCaregiverEmail?: string;
  careContext?: string;
  familyMemberEmails: string[];
}

export interface SandboxCreated {
  workspace: WorkspaceRecord;
  lovedOne: LovedOneRecord;
  drafts: InviteDraft[];
}

export type ClaimOutcome =
  | { outcome: 'claimed'; workspace: WorkspaceRecord }
  | { outcome: 'orphaned' }
  | { outcome: 'not_found' }
  | { outcome: 'already_has_workspace' }
  | { outcome: 'not_claimable'; state: string };

export const defaultFamilyName = (lastName: string) => `The ${lastName} Family (sandbox)`;

export class SandboxService {
  readonly store: WorkspaceStore;
  private readonly entities: EntityStore;
  readonly drafts: Collection<InviteDraft>;

  constructor(
    private readonly db: Db,
    credentials: Credentials,
    inboxDomain: string,
    private readonly timelines: Timelines,
    private readonly clock: () => number = Date.now,
  ) {
    this.store = new WorkspaceStore(db, credentials, inboxDomain, timelines);
    this.entities = new EntityStore(db, clock);
    this.drafts = db.collection<InviteDraft>(INVITE_DRAFTS);
  }

  async create(input: SandboxInput): Promise<SandboxCreated> {
    const now = new Date(this.clock());
    const workspace = await this.store.createWorkspace(
      {
        name: input.familyName ?? defaultFamilyName(input.lovedOneLastName),
        owner: { uid: ANONYMOUS_OWNER, email: '' },
        sandbox: true,
        ...(input.careContext ? { careContext: input.careContext } : {}),
        ...(input.primaryCaregiverEmail ? { primaryCaregiverEmail: input.primaryCaregiverEmail } : {}),
      },
      now,
    );
    await this.entities.create(SANDBOX_WORKSPACE_MACHINE, workspace._id, {
      workspaceId: workspace._id,
      createdAt: now.toISOString(),
      ...(input.primaryCaregiverEmail ? { primaryCaregiverEmail: input.primaryCaregiverEmail } : {}),
    });
    const lovedOne = await this.store.addLovedOne(workspace._id, { firstName: input.lovedOneFirstName, lastName: input.lovedOneLastName }, true, now);
    const drafts: InviteDraft[] = input.familyMemberEmails.map((email) => ({
      _id: newId('inv'),
      workspaceId: workspace._id,
      email,
      role: 'family_member',
      status: 'draft',
      createdAt: now,
    }));
    if (drafts.length) await this.drafts.insertMany(drafts);
    return { workspace, lovedOne, drafts };
  }

  async find(workspaceId: string): Promise<WorkspaceRecord | null> {
    return this.store.workspace(workspaceId);
  }

  /** The machine's current state of a sandbox, or null if it never was one. */
  async state(workspaceId: string): Promise<string | null> {
    const snapshot = await this.entities.load(SANDBOX_WORKSPACE_MACHINE, workspaceId);
    return snapshot ? String(snapshot.value) : null;
  }

  /** A signed-in human with a verified email confirms the claim link. */
  async claim(workspaceId: string, who: { uid: string; email: string }): Promise<ClaimOutcome> {
    const workspace = await this.find(workspaceId);
    const snapshot = workspace ? await this.entities.load(SANDBOX_WORKSPACE_MACHINE, workspaceId) : null;
    if (!workspace || !snapshot) return { outcome: 'not_found' };
    // Re-applying a claim that a crash interrupted is safe: the machine already says who.
    if (snapshot.value === 'claimed' && snapshot.context.claimedBy === who.uid) return { outcome: 'claimed', workspace: await this.applyClaim(workspace, who) };
    if (snapshot.value !== 'sandbox') return { outcome: 'not_claimable', state: String(snapshot.value) };
    const existing = await this.store.workspaceOf(who.uid);
    if (existing) return { outcome: 'already_has_workspace' };
    let next;
    try {
      next = await this.entities.send(SANDBOX_WORKSPACE_MACHINE, workspaceId, {
        type: 'CLAIM',
        uid: who.uid,
        email: who.email,
        at: new Date(this.clock()).toISOString(),
      });
    } catch (err) {
      if (err instanceof TransitionRefused) return { outcome: 'not_claimable', state: String(err.state) };
      throw err;
    }
    if (next.value === 'orphaned') return { outcome: 'orphaned' };
    return { outcome: 'claimed', workspace: await this.applyClaim(workspace, who) };
  }

  /** The real owner replaces the synthetic one; sandbox flags are cleared; ids are kept. */
  private async applyClaim(workspace: WorkspaceRecord, who: { uid: string; email: string }): Promise<WorkspaceRecord> {
    await this.store.addMember(workspace._id, who, 'caregiver');
    await this.store.leaveSandbox(workspace._id, who.uid);
    return { ...workspace, ownerUid: who.uid, sandbox: false };
  }

  /** Purge sandboxes (unclaimed or orphaned) created before `before`; resumable. */
  async sweep(before: Date): Promise<{ purged: number; repaired: number }> {
    let purged = 0;
    let repaired = 0;
    const expired = await this.store.sandboxesCreatedBefore(before);
    for (const workspace of expired) {
      const snapshot = await this.entities.load(SANDBOX_WORKSPACE_MACHINE, workspace._id);
      if (snapshot?.value === 'claimed' && snapshot.context.claimedBy) {
        // A claim whose projection a crash interrupted: finish it, never purge it.
        const user = await this.store.user(snapshot.context.claimedBy);
        await this.applyClaim(workspace, { uid: snapshot.context.claimedBy, email: user?.email ?? '' });
        repaired++;
        continue;
      }
      if (snapshot && snapshot.value !== 'purged') {
        try {
          await this.entities.send(SANDBOX_WORKSPACE_MACHINE, workspace._id, { type: 'EXPIRE', at: new Date(this.clock()).toISOString() });
        } catch (err) {
          if (!(err instanceof TransitionRefused)) throw err; // another sweeper got there first
        }
      }
      await this.purgeRecords(workspace._id);
      purged++;
    }
    return { purged, repaired };
  }

  /** Everything tagged to the workspace goes; the workspace record goes last, so a sweep that
   *  stops half-way is found and finished by the next one. */
  private async purgeRecords(workspaceId: string): Promise<void> {
    await this.store.purgeLovedOnes(workspaceId);
    // The inbox's loved ones are found from its items: the loved ones' records are gone by now.
    await purgeInboxOf(this.db, this.timelines, workspaceId, []);
    await this.drafts.deleteMany({ workspaceId });
    await this.store.purgeWorkspace(workspaceId);
  }
}
