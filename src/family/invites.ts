// Invitations to a family workspace: one per invited email, single use, revocable, expiring after
// seven days. The link's token is `<invite id>.<secret>`; only a SHA-256 of the secret is stored,
// so a copy of the database opens no workspace, and the id lets a lookup read by primary key.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Collection, Db, IndexDescription } from 'mongodb';
import { newId } from '../store/ids.js';

export const FAMILY_INVITES = 'family_invites';
export const FAMILY_INVITE_INDEXES: IndexDescription[] = [{ key: { workspaceId: 1, status: 1 }, name: 'by_workspace' }];
export const INVITE_TTL_MS = 7 * 24 * 60 * 60 * 1000;
/** Enough for any family; a cap keeps one account from turning the app into a mailer. */
export const MAX_PENDING_INVITES = 20;

export type InviteStatus = 'pending' | 'accepted' | 'revoked';

export interface InviteRecord {
  _id: string;
  workspaceId: string;
  /** Lower-cased: accepting compares the signed-in email without regard to case. */
  email: string;
  secretHash: string;
  invitedBy: { uid: string; email: string; name?: string };
  status: InviteStatus;
  createdAt: Date;
  expiresAt: Date;
  acceptedAt?: Date;
  acceptedBy?: string;
  revokedAt?: Date;
}

export class TooManyInvites extends Error {
  override name = 'TooManyInvites';
}

const sha256 = (value: string): string => createHash('sha256').update(value).digest('hex');
export const normalEmail = (email: string): string => email.trim().toLowerCase();

export class InviteStore {
  private readonly invites: Collection<InviteRecord>;

  constructor(
    db: Db,
    private readonly clock: () => number = Date.now,
  ) {
    this.invites = db.collection<InviteRecord>(FAMILY_INVITES);
  }

  /** A new invitation; the token is returned here and nowhere else. A pending invitation to the
   *  same email in the same workspace is revoked, so a resent link is the only one that works. */
  async create(workspaceId: string, email: string, invitedBy: InviteRecord['invitedBy']): Promise<{ token: string; invite: InviteRecord }> {
    const now = new Date(this.clock());
    const address = normalEmail(email);
    await this.invites.updateMany({ workspaceId, email: address, status: 'pending' }, { $set: { status: 'revoked', revokedAt: now } });
    if ((await this.pending(workspaceId)).length >= MAX_PENDING_INVITES)
      throw new TooManyInvites(`at most ${MAX_PENDING_INVITES} invitations can wait at once`);
    const secret = randomBytes(32).toString('base64url');
    const invite: InviteRecord = {
      _id: newId('inv'),
      workspaceId,
      email: address,
      secretHash: sha256(secret),
      invitedBy,
      status: 'pending',
      createdAt: now,
      expiresAt: new Date(now.getTime() + INVITE_TTL_MS),
    };
    await this.invites.insertOne(invite);
    return { token: `${invite._id}.${secret}`, invite };
  }

  /** Invitations of a workspace still waiting for an answer, oldest first. */
  async pending(workspaceId: string): Promise<InviteRecord[]> {
    const now = this.clock();
    const found = await this.invites.find({ workspaceId, status: 'pending' }).sort({ createdAt: 1 }).toArray();
    return found.filter((i) => i.expiresAt.getTime() > now);
  }

  /** Revoke one pending invitation of this workspace; false when it is not one. */
  async revoke(workspaceId: string, inviteId: string): Promise<boolean> {
    const res = await this.invites.updateOne(
      { _id: inviteId, workspaceId, status: 'pending' },
      { $set: { status: 'revoked', revokedAt: new Date(this.clock()) } },
    );
    return res.modifiedCount === 1;
  }

  /** The invitation a link's token opens, only while it is pending and unexpired. */
  async open(token: string): Promise<InviteRecord | null> {
    const invite = await this.byToken(token);
    return invite && invite.status === 'pending' && invite.expiresAt.getTime() > this.clock() ? invite : null;
  }

  /** Any invitation a token names, whatever its state (to say why a link no longer works). */
  async byToken(token: string): Promise<InviteRecord | null> {
    const [id, secret] = token.split('.');
    if (!id || !secret || token.length > 200) return null;
    const invite = await this.invites.findOne({ _id: id });
    if (!invite) return null;
    return timingSafeEqual(Buffer.from(invite.secretHash, 'hex'), Buffer.from(sha256(secret), 'hex')) ? invite : null;
  }

  /** Use the invitation up, only while it is pending and unexpired. FerretDB v1 applies this
   *  check as read-then-write, so two requests at once may both pass; both are then the one
   *  account the invitation admits, and its one workspace seat (circle.ts) makes that harmless. */
  async consume(inviteId: string, uid: string): Promise<boolean> {
    const now = new Date(this.clock());
    const res = await this.invites.updateOne(
      { _id: inviteId, status: 'pending', expiresAt: { $gt: now } },
      { $set: { status: 'accepted', acceptedAt: now, acceptedBy: uid } },
    );
    return res.modifiedCount === 1;
  }

  /** Give back an invitation whose acceptance could not finish (the account joined elsewhere first). */
  async restore(inviteId: string, uid: string): Promise<void> {
    await this.invites.updateOne(
      { _id: inviteId, status: 'accepted', acceptedBy: uid },
      { $set: { status: 'pending' }, $unset: { acceptedAt: '', acceptedBy: '' } },
    );
  }
}
