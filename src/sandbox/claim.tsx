// The human side of a sandbox: the claim page behind the link in the tool's result, sending the
// invitation drafts once claimed, and a loved one's family inbox.
import type { Credentials } from '../auth/credentials.js';
import type { Db } from 'mongodb';
import { issueInvitation } from '../app/familyAccess.js';
import type { AppHelpers } from '../app/helpers.js';
import { canManage } from '../family/circle.js';
import { InviteStore } from '../family/invites.js';
import { ApiProblem } from '../http/reply.js';
import type { Config } from '../config.js';
import type { HttpReplyEnvelope, HttpRequestEnvelope } from '../bus/envelopes.js';
import { stamp } from '../app/time.js';
import { keptAttachments, recentInboxItems } from '../inbox/records.js';
import type { SessionCaller } from '../auth/sessions.js';
import type { Markup } from '../http/html.js';
import { redirect } from '../http/page.js';
import type { handlers } from '../slice/contract.js';
import type { SANDBOX_ROUTES } from './routes.js';
import { SandboxService } from './service.js';

/** What the sandbox's app pages work with. */
interface ClaimDeps {
  h: AppHelpers;
  config: Config;
  db: Db;
  service: SandboxService;
  invites: InviteStore;
}

const claimPath = (id: string) => `/onboarding/claim?workspace=${encodeURIComponent(id)}`;
/** A card page that says why not, and leads back to the workspace. */
const notice = (h: AppHelpers, status: number, title: string, heading: string, text: Markup, caller: SessionCaller) =>
  h.cardPage(
    status,
    title,
    <>
      <p>{text}</p>
      <p>
        <a href="/">Go to your workspace</a>
      </p>
    </>,
    caller,
    { heading },
  );

const notClaimable = (h: AppHelpers, caller: SessionCaller) =>
  notice(h, 404, 'Not claimable', 'This sandbox cannot be claimed', 'The link is unknown, or the sandbox was already claimed, orphaned or deleted.', caller);

/** What a signed-out visitor of a claim link is told: which sandbox, and which email claims it. */
const claimLead = async (service: SandboxService, id: string): Promise<Markup> => {
  const workspace = await service.find(id);
  if (!workspace?.sandbox || (await service.state(id)) !== 'sandbox') return undefined;
  return (
    <>
      <p>
        An AI assistant started the sandbox workspace <strong id="claim-workspace">“{workspace.name}”</strong> for your family on carecircle, a place where a
        family coordinates the care of someone they love: the agency's visits, medications and vital signs, and the mail from doctors, on one timeline.
      </p>
      <p>
        {workspace.primaryCaregiverEmail ? (
          <>
            It can be claimed by signing in with <strong id="claim-email">{workspace.primaryCaregiverEmail}</strong>, the email address the assistant was given.
            Signing in with another address makes it unclaimable.
          </>
        ) : (
          'Sign in with the email address you gave the assistant to claim it.'
        )}
      </p>
    </>
  );
};

/** Page that asks a signed-in visitor to claim the sandbox (or says why it cannot be claimed). */
async function claimPage(d: ClaimDeps, req: HttpRequestEnvelope): Promise<HttpReplyEnvelope> {
  const { h, service } = d;
  const id = req.query.workspace ?? '';
  const caller = await h.currentCaller(req);
  if (!caller) return h.signedOutPage(claimPath(id), await claimLead(service, id));
  const workspace = await service.find(id);
  const state = workspace ? await service.state(id) : null;
  if (!workspace || state !== 'sandbox' || !workspace.sandbox) return notClaimable(h, caller);
  return h.cardPage(
    200,
    'Claim your workspace',
    <>
      <p>
        An assistant started this sandbox workspace for your family. Claiming it makes it yours: the loved one, the private inbox address and the invitation
        drafts are kept.
      </p>
      <p>
        You are signed in as <strong>{caller.email}</strong>. Only{' '}
        {workspace.primaryCaregiverEmail ? <strong>{workspace.primaryCaregiverEmail}</strong> : 'the email address the assistant named'} can claim it; any other
        account that tries makes it unclaimable.
      </p>
      <form method="post" action="/onboarding/claim">
        <input type="hidden" name="workspace" value={workspace._id} />
        <button type="submit" id="claim">
          Claim this workspace
        </button>
      </form>
    </>,
    caller,
    { heading: `Claim “${workspace.name}”` },
  );
}

/** The claim itself: the workspace becomes the caller's, or the page says why not. */
async function claim(d: ClaimDeps, req: HttpRequestEnvelope): Promise<HttpReplyEnvelope> {
  const { h, service } = d;
  const id = String((req.body as { workspace?: unknown } | undefined)?.workspace ?? '');
  const caller = await h.currentCaller(req);
  if (!caller) return redirect(`/signin?next=${encodeURIComponent(claimPath(id))}`);
  const result = await service.claim(id, caller);
  switch (result.outcome) {
    case 'claimed': {
      const drafts = await service.drafts.countDocuments({ workspaceId: id, status: 'draft' });
      return redirect(drafts ? '/workspace/invites' : '/');
    }
    case 'orphaned':
      return notice(
        h,
        403,
        'Not claimed',
        'This sandbox was started for a different email address',
        <>
          You are signed in as {caller.email}. The sandbox can no longer be claimed and will be deleted when it times out. You can{' '}
          <a href="/onboarding">create your own workspace</a>.
        </>,
        caller,
      );
    case 'already_has_workspace':
      return notice(
        h,
        409,
        'Not claimed',
        'You already have a family workspace',
        'An account has one family workspace; this sandbox was left as it was.',
        caller,
      );
    default:
      return notClaimable(h, caller);
  }
}

/** The invitation drafts the sandbox left, and the button that sends them. */
async function invitesPage(d: ClaimDeps, req: HttpRequestEnvelope): Promise<HttpReplyEnvelope> {
  const { h, config, service } = d;
  const caller = await h.currentCaller(req);
  if (!caller) return h.signedOutPage('/workspace/invites');
  const membership = await h.store.workspaceOf(caller.uid);
  if (!membership) return redirect('/onboarding');
  const drafts = await service.drafts.find({ workspaceId: membership.workspace._id }).sort({ createdAt: 1 }).toArray();
  const clock = await h.clockFor(caller, req);
  const pending = drafts.some((d) => d.status === 'draft');
  const sending = !pending ? null : config.smtpUrl ? (
    <form method="post" action="/workspace/invites/send">
      <button type="submit" id="send-invites">
        Send invitations
      </button>
    </form>
  ) : (
    <p class="notice">Mail is not configured in this deployment (SMTP_URL), so invitations stay drafts.</p>
  );
  return h.cardPage(
    200,
    'Invitations',
    <>
      {drafts.length ? (
        <table id="invites" class="stack">
          <caption>Invitations from the sandbox</caption>
          <thead>
            <tr>
              <th scope="col">Email</th>
              <th scope="col">Role</th>
              <th scope="col">Status</th>
            </tr>
          </thead>
          <tbody>
            {drafts.map((d) => (
              <tr>
                <td data-label="Email">{d.email}</td>
                <td data-label="Role">{d.role.replace('_', ' ')}</td>
                <td data-label="Status">{d.status === 'sent' ? `sent ${stamp(clock, d.sentAt, '')}` : 'draft'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : (
        <p class="muted">No invitation drafts.</p>
      )}
      {sending}
      <p>
        Sent invitations, and new ones, are on the <a href="/family">Family page</a>.
      </p>
      <p>
        <a href="/">Go to your workspace</a>
      </p>
    </>,
    caller,
    { heading: 'Invite your family' },
  );
}

/** Each draft sent as a real invitation of the family circle, by the primary caregiver only. */
async function sendInvites(d: ClaimDeps, req: HttpRequestEnvelope): Promise<HttpReplyEnvelope> {
  const { h, config, service, invites } = d;
  const caller = await h.requireCaller(req);
  const membership = await h.store.workspaceOf(caller.uid);
  // Only a claimed (or ordinary) workspace sends mail, and only its primary caregiver: a sandbox never does.
  if (!membership || membership.workspace.sandbox || !canManage(membership.member) || !config.smtpUrl) return redirect('/workspace/invites');
  const drafts = await service.drafts.find({ workspaceId: membership.workspace._id, status: 'draft' }).toArray();
  const lovedOnes = (await h.store.lovedOnesOf(membership.workspace._id)).map((l) => l.displayName);
  const invitedBy = { uid: caller.uid, email: caller.email, ...(caller.name ? { name: caller.name } : {}) };
  for (const d of drafts) {
    // Each draft becomes a real invitation of the family circle, with its own link.
    const issued = await issueInvitation(
      { config, invites },
      { workspaceId: membership.workspace._id, workspaceName: membership.workspace.name, lovedOnes, email: d.email, invitedBy },
    );
    if (!issued.sent)
      throw new ApiProblem(
        503,
        'UNAVAILABLE',
        'The invitation email could not be sent',
        'Try again in a minute, or invite from the Family page to get links to copy.',
        { 'retry-after': '60' },
      );
    await service.drafts.updateOne({ _id: d._id }, { $set: { status: 'sent', sentAt: new Date() } });
  }
  return redirect('/workspace/invites');
}

/** A loved one's family inbox: the latest mail with its kept attachments. */
async function inboxPage(d: ClaimDeps, req: HttpRequestEnvelope, params: Record<string, string>): Promise<HttpReplyEnvelope> {
  const { h, db } = d;
  const caller = await h.currentCaller(req);
  if (!caller) return h.signedOutPage(`/inbox/${encodeURIComponent(params.lovedOneId ?? '')}`);
  const membership = await h.store.workspaceOf(caller.uid);
  const lovedOne = membership ? await h.store.lovedOneIn(membership.workspace._id, params.lovedOneId ?? '') : null;
  if (!lovedOne) return notice(h, 404, 'Not found', 'No such loved one in your workspace', 'Pick a loved one from your workspace.', caller);
  const mail = await recentInboxItems(h.timelines, lovedOne._id, 50);
  const [clock, kept] = await Promise.all([
    h.clockFor(caller, req),
    keptAttachments(
      db,
      mail.map((m) => m._id),
    ),
  ]);
  const base = `/inbox/${encodeURIComponent(lovedOne._id)}/attachments`;
  const list = mail.length ? (
    mail.map((m) => (
      <article class="card">
        <h2>{m.subject || '(no subject)'}</h2>
        <p class="muted">
          From {m.from} · {stamp(clock, m.receivedAt)}
        </p>
        {m.attachmentNames.length ? (
          <ul class="attachments">
            {m.attachmentNames.map((name, i) => (
              <li>
                {kept.has(`${m._id}:${i}`) ? (
                  <a href={`${base}/${encodeURIComponent(m._id)}/${i}`} download={name}>
                    {name}
                  </a>
                ) : (
                  <>
                    {name} <span class="muted">(too large to keep: ask the sender for it)</span>
                  </>
                )}
              </li>
            ))}
          </ul>
        ) : null}
        <p>
          {m.excerpt.split('\n').map((line, i) => (
            <>
              {i > 0 ? <br /> : null}
              {line}
            </>
          ))}
        </p>
      </article>
    ))
  ) : (
    <p class="muted">No mail yet.</p>
  );
  return h.pageFor(
    200,
    `${lovedOne.displayName}'s inbox`,
    <>
      <h1>{lovedOne.displayName}'s inbox</h1>
      <p>
        Forward provider mail to <code id="inbox-address">{lovedOne.inboxAddress}</code>.{' '}
        <button type="button" class="secondary small" data-copy="inbox-address" hidden>
          Copy the inbox address
        </button>
      </p>
      <section id="inbox">{list}</section>
    </>,
    caller,
  );
}

export function sandboxAppRoutes(
  routes: ReturnType<typeof handlers<typeof SANDBOX_ROUTES>>,
  h: AppHelpers,
  config: Config,
  db: Db,
  credentials: Credentials,
): void {
  const d: ClaimDeps = { h, config, db, service: new SandboxService(db, credentials, config.inboxDomain, h.timelines), invites: new InviteStore(db) };
  routes
    .on('onboardingClaim', 'GET', (req) => claimPage(d, req))
    .on('onboardingClaim', 'POST', (req) => claim(d, req))
    .on('workspaceInvites', 'GET', (req) => invitesPage(d, req))
    .on('workspaceInvitesSend', 'POST', (req) => sendInvites(d, req))
    .on('inbox', 'GET', (req, params) => inboxPage(d, req, params));
}
