// The invitation link's page: whose workspace, for which loved ones, and for which email; then
// joining, only when signed in with that email (any case) and not already in a workspace.
import type { SessionCaller } from '../auth/sessions.js';
import type { HttpReplyEnvelope, HttpRequestEnvelope } from '../bus/envelopes.js';
import type { FamilyCircle } from '../family/circle.js';
import { normalEmail, type InviteRecord, type InviteStore } from '../family/invites.js';
import type { WorkspaceRecord } from '../family/records.js';
import type { Markup } from '../http/html.js';
import { redirect } from '../http/page.js';
import { stopAfter } from '../http/prose.js';
import { noticeBody } from './familyPages.js';
import type { AppHelpers } from './helpers.js';
import type { AppRouteBuilder } from './routeTable.js';

/** Why a link no longer opens anything, in words. */
function deadLink(invite: InviteRecord | null, now: number): string {
  if (!invite) return 'The link is incomplete or unknown. Check that you copied all of it, or ask for a new invitation.';
  if (invite.status === 'accepted') return 'This invitation was already used. If that was you, your workspace is one click away.';
  if (invite.status === 'revoked') return 'This invitation was withdrawn. Ask the person who invited you for a new one if you still need it.';
  return invite.expiresAt.getTime() <= now ? 'This invitation has expired: links work for 7 days. Ask for a new one.' : 'This invitation cannot be used.';
}

export function joinRoutes(routes: AppRouteBuilder, h: AppHelpers, deps: { circle: FamilyCircle; invites: InviteStore }): void {
  const { circle, invites } = deps;
  const joinPath = (token: string) => `/join/${encodeURIComponent(token)}`;
  const home = { href: '/', label: 'Go to carecircle' };

  /** The open invitation, its workspace and loved ones; or the page saying why not. */
  const load = async (
    token: string,
    caller: SessionCaller | null,
  ): Promise<{ invite: InviteRecord; workspace: WorkspaceRecord; lovedOnes: string[] } | HttpReplyEnvelope> => {
    const invite = await invites.open(token);
    const workspace = invite ? await h.store.workspace(invite.workspaceId) : null;
    if (!invite || !workspace)
      return h.pageFor(
        404,
        'Invitation not valid',
        noticeBody('This invitation link does not work', deadLink(invite ?? (await invites.byToken(token)), Date.now()), home),
        caller,
      );
    return { invite, workspace, lovedOnes: (await h.store.lovedOnesOf(workspace._id)).map((l) => l.displayName) };
  };

  /** What stands between a signed-in caller and joining, as a page; null when nothing does. */
  const obstacle = async (
    caller: SessionCaller,
    invite: InviteRecord,
    workspace: WorkspaceRecord,
  ): Promise<{ status: number; title: string; text: Markup } | null> => {
    if (normalEmail(caller.email) !== invite.email)
      return {
        status: 403,
        title: 'This invitation is for another email address',
        text: `You are signed in as ${caller.email}, but this invitation is for ${invite.email}. Sign out, open this link again and sign in as ${invite.email}.`,
      };
    const current = await h.store.workspaceOf(caller.uid);
    if (current?.workspace._id === workspace._id)
      return { status: 200, title: `You are already in ${workspace.name}`, text: 'Nothing to do: you are in this family circle already.' };
    if (current)
      return {
        status: 409,
        title: 'You already belong to a family workspace',
        text: `Your account is in "${current.workspace.name}", and an account belongs to one family workspace. carecircle will not move you. To join "${workspace.name}", first leave "${current.workspace.name}" from its Family page, then open this link again.`,
      };
    return null;
  };

  const describe = (invite: InviteRecord, workspace: WorkspaceRecord, lovedOnes: string[]) => (
    <>
      <p>
        {invite.invitedBy.name ?? invite.invitedBy.email} invited you to the family workspace <strong>{workspace.name}</strong>
        {lovedOnes.length ? `, to help look after ${lovedOnes.join(' and ')}` : ''}
        {stopAfter(lovedOnes.length ? lovedOnes.join(' and ') : workspace.name)}
      </p>
      <p>
        This invitation is for <strong id="invited-email">{invite.email}</strong>. As a family member you can read the timeline, medications, vital signs and
        inbox, add notes, doses, medications, appointments and tasks, and connect your own assistant.
      </p>
    </>
  );

  const answer = async (req: HttpRequestEnvelope, token: string) => {
    const caller = await h.currentCaller(req);
    const found = await load(token, caller);
    if ('status' in found) return found;
    const { invite, workspace, lovedOnes } = found;
    const title = `Join ${workspace.name}`;
    // Signed out: a way to sign in as the invited email. Signed in: the accept button.
    const page = (action: Markup, as?: SessionCaller) =>
      h.pageFor(
        200,
        title,
        <>
          <h1>{title}</h1>
          <section class="card">
            {describe(invite, workspace, lovedOnes)}
            {action}
          </section>
        </>,
        as,
      );
    if (!caller)
      return page(
        <p>
          <a href={h.signInUrl(joinPath(token))} id="signin">
            Sign in as {invite.email} to accept
          </a>
        </p>,
      );
    const blocked = await obstacle(caller, invite, workspace);
    if (blocked) return h.pageFor(blocked.status, blocked.title, noticeBody(blocked.title, blocked.text, home), caller);
    return page(
      <form method="post" action={joinPath(token)}>
        <button type="submit" id="accept">
          Join {workspace.name}
        </button>
      </form>,
      caller,
    );
  };

  routes
    .on('join', 'GET', async (req, params) => answer(req, params.token ?? ''))
    .on('join', 'POST', async (req, params) => {
      const token = params.token ?? '';
      const caller = await h.currentCaller(req);
      if (!caller) return redirect(`/signin?next=${encodeURIComponent(joinPath(token))}`);
      const found = await load(token, caller);
      if ('status' in found) return found;
      const blocked = await obstacle(caller, found.invite, found.workspace);
      if (blocked) return h.pageFor(blocked.status, blocked.title, noticeBody(blocked.title, blocked.text, home), caller);
      if (!(await invites.consume(found.invite._id, caller.uid))) return answer(req, token);
      if ((await circle.join(found.workspace._id, caller)) === 'has_workspace') {
        await invites.restore(found.invite._id, caller.uid);
        return answer(req, token);
      }
      return redirect('/');
    });
}
