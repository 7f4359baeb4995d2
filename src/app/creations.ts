// Creating a workspace once per submission. The onboarding form carries a one-time token (the JSON
// API an Idempotency-Key); before anything is written, the token claims the ids of the workspace
// and its first loved one, so a retry of that submission (after a 503, a lost answer, a double
// click, while the first attempt is still writing) writes what is missing under the same ids and
// answers as the first attempt would have.
import { createHash, randomBytes } from 'node:crypto';
import type { Collection, Db } from 'mongodb';
import type { SessionCaller } from '../auth/sessions.js';
import { knownZone } from '../family/changes.js';
import type { WorkspaceStore } from '../family/records.js';
import { isDuplicateKey } from '../store/errors.js';
import { newId } from '../store/ids.js';

export const WORKSPACE_CREATIONS = 'workspace_creations';
/** How long a submission can be retried: well past any gateway retry or a person trying again. */
const CLAIM_TTL_MS = 24 * 60 * 60 * 1000;
/** What a token may look like: the form's (22 base64url characters) or a client's key (as on the pipe host). */
const TOKEN = /^[\x21-\x7e]{1,200}$/;

/** What the first attempt answered: a repeat of the submission gets the same. */
export interface CreatedWorkspace {
  workspace: { id: string; name: string };
  lovedOne: { id: string; name: string; inboxAddress: string; timeZone?: string };
}

interface CreationClaim {
  _id: string; // sha256 of the caller's uid and the token: one caller's token names nothing of another's
  /** sha256 of the input: the same token with other names is another submission. */
  input: string;
  workspaceId: string;
  lovedOneId: string;
  at: Date;
  /** Set once every write is done. */
  created?: CreatedWorkspace;
}

export interface WorkspaceInput {
  familyName: string;
  firstName: string;
  lastName: string;
  /** The loved one's IANA zone; without one, the creating caregiver's. */
  timeZone?: string | undefined;
}

export type CreationOutcome = { created: CreatedWorkspace } | 'has_workspace';

/** A token for one rendering of the onboarding form (128 random bits). */
export const newFormToken = (): string => randomBytes(16).toString('base64url');

/** Whether a value can be a token: 1-200 printable ASCII characters without spaces. */
export const isFormToken = (value: unknown): value is string => typeof value === 'string' && TOKEN.test(value);

const sha256 = (parts: readonly string[]) => createHash('sha256').update(JSON.stringify(parts)).digest('hex');

export class WorkspaceCreations {
  private readonly claims: Collection<CreationClaim>;

  constructor(
    db: Db,
    private readonly store: WorkspaceStore,
    private readonly clock: () => number = Date.now,
  ) {
    this.claims = db.collection(WORKSPACE_CREATIONS);
  }

  /**
   * The caller's workspace for this submission: created now, or, when the token already claimed
   * one for the same input, what the first attempt answered (its writes finished first if it
   * stopped half-way). 'has_workspace' when the caller is in a workspace this submission did not
   * create. Without a token, with one used for other names, or for a workspace the caller has left
   * since, it is a new submission: created unless the caller has a workspace.
   */
  async create(caller: SessionCaller, input: WorkspaceInput, token: string | undefined): Promise<CreationOutcome> {
    const inputHash = sha256([input.familyName, input.firstName, input.lastName]);
    if (token) {
      const key = sha256([caller.uid, token]);
      const earlier = await this.claims.findOne({ _id: key });
      if (earlier?.input === inputHash) {
        if (!earlier.created) return { created: await this.finish(caller, input, earlier) };
        if ((await this.store.workspaceOf(caller.uid))?.workspace._id === earlier.workspaceId) return { created: earlier.created };
      }
      if (!earlier) {
        if (await this.store.workspaceOf(caller.uid)) return 'has_workspace';
        const now = this.clock();
        const claim: CreationClaim = { _id: key, input: inputHash, workspaceId: newId('ws'), lovedOneId: newId('lo'), at: new Date(now) };
        // Claims nobody will retry are cleared here: no sweep job for so small a thing (creations are rare).
        await this.claims.deleteMany({ at: { $lt: new Date(now - CLAIM_TTL_MS) } });
        try {
          await this.claims.insertOne(claim);
        } catch (err) {
          // The same submission at the same moment: this one then writes under the ids the other claimed.
          if (!isDuplicateKey(err)) throw err;
          return this.create(caller, input, token);
        }
        return { created: await this.finish(caller, input, claim) };
      }
    }
    if (await this.store.workspaceOf(caller.uid)) return 'has_workspace';
    return { created: await this.write(caller, input, { workspaceId: newId('ws'), lovedOneId: newId('lo') }) };
  }

  /** The claimed writes, then the answer kept on the claim. */
  private async finish(caller: SessionCaller, input: WorkspaceInput, claim: CreationClaim): Promise<CreatedWorkspace> {
    const created = await this.write(caller, input, claim);
    await this.claims.updateOne({ _id: claim._id }, { $set: { created } });
    return created;
  }

  /** Every step takes the given ids, so a step an earlier attempt did is found, not done twice. */
  private async write(caller: SessionCaller, input: WorkspaceInput, ids: { workspaceId: string; lovedOneId: string }): Promise<CreatedWorkspace> {
    const workspace = await this.store.createWorkspace({ id: ids.workspaceId, name: input.familyName, owner: caller, sandbox: false });
    // The loved one's zone, unless given, is the creating caregiver's (Settings; their browser's at first sign-in).
    const timeZone = input.timeZone ?? (knownZone((await this.store.user(caller.uid))?.timeZone ?? '') || undefined);
    const lovedOne = await this.store.addLovedOne(workspace._id, { ...input, timeZone }, false, new Date(this.clock()), ids.lovedOneId);
    return {
      workspace: { id: workspace._id, name: workspace.name },
      lovedOne: {
        id: lovedOne._id,
        name: lovedOne.displayName,
        inboxAddress: lovedOne.inboxAddress,
        ...(lovedOne.timeZone ? { timeZone: lovedOne.timeZone } : {}),
      },
    };
  }
}
