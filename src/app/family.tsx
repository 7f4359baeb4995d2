// The family circle's handlers on the app host: the Family page, inviting and withdrawing
// invitations, removing a member, handing the workspace over and leaving. Every change re-derives
// the caller's workspace and role from the session; only the primary caregiver manages.
import type { Credentials } from '../auth/credentials.js';
import type { Db } from 'mongodb';
import { z } from 'zod';
import type { SessionCaller } from '../auth/sessions.js';
import type { HttpReplyEnvelope, HttpRequestEnvelope } from '../bus/envelopes.js';
import type { Config } from '../config.js';
import { canManage, FamilyCircle } from '../family/circle.js';
import { InviteStore, normalEmail, TooManyInvites } from '../family/invites.js';
import type { MemberRecord, WorkspaceRecord } from '../family/records.js';
import type { Markup } from '../http/html.js';
import { redirect } from '../http/page.js';
import { json } from '../http/reply.js';
import { KeyStore } from '../keys/keys.js';
import { OAuthStore } from '../oauth/store.js';
import { issueInvitation, revokeCredentialsOf } from './familyAccess.js';
import { confirmBody, familyBody, invitationBody, noticeBody, personName } from './familyPages.js';
import type { AppHelpers } from './helpers.js';
import { joinRoutes } from './join.js';
import type { AppRouteBuilder } from './routeTable.js';

const inviteInput = z.object({ email: z.string().trim().max(254).email() });

interface Membership {
  caller: SessionCaller;
  workspace: WorkspaceRecord;
  member: MemberRecord;
}

/** What the family circle's handlers work with. */
interface FamilyDeps {
  h: AppHelpers;
  config: Config;
  circle: FamilyCircle;
  invites: InviteStore;
  credentials: { keys: KeyStore; oauth: OAuthStore };
}

/** The signed-in caller and their workspace, or the page to show instead. */
const membershipOf = async (f: FamilyDeps, req: HttpRequestEnvelope, path: string): Promise<Membership | HttpReplyEnvelope> => {
  const caller = await f.h.currentCaller(req);
  if (!caller) return req.method === 'GET' ? f.h.signedOutPage(path) : redirect(`/signin?next=${encodeURIComponent(path)}`);
  const membership = await f.h.store.workspaceOf(caller.uid);
  if (!membership) return redirect('/onboarding');
  return { caller, ...membership };
};
const isReply = (m: Membership | HttpReplyEnvelope): m is HttpReplyEnvelope => 'status' in m;
const notManager = (f: FamilyDeps, m: Membership) =>
  f.h.pageFor(
    403,
    'Only the primary caregiver',
    noticeBody(
      'Only the primary caregiver can do that',
      'Inviting, removing and handing over are for the primary caregiver of this workspace. You can read everything in it.',
    ),
    m.caller,
  );
const noSuchMember = (f: FamilyDeps, m: Membership) =>
  f.h.pageFor(404, 'Not found', noticeBody('That person is not in your family circle', 'They may have left or been removed already.'), m.caller);

const familyPage = async (f: FamilyDeps, m: Membership, status = 200, error: Markup = null) => {
  const manages = canManage(m.member);
  const [members, pending] = await Promise.all([f.circle.members(m.workspace._id), manages ? f.invites.pending(m.workspace._id) : Promise.resolve([])]);
  return f.h.pageFor(
    status,
    'Family circle',
    familyBody({ workspace: m.workspace, me: m.member, members, invites: pending, manages, mailOn: !!f.config.smtpUrl }, error),
    m.caller,
  );
};
const formError = (text: string) => (
  <p class="error" role="alert">
    {text}
  </p>
);

/** A member other than the caller, for a manager's change to them. */
const otherMember = async (f: FamilyDeps, m: Membership, uid: string) => {
  if (uid === m.caller.uid) return null;
  const target = await f.circle.member(m.workspace._id, uid);
  if (!target) return null;
  const user = await f.h.store.user(uid);
  return { ...target, ...(user?.name ? { name: user.name } : {}) };
};

/** A manager's change to another member: the caller (who must manage) and that member, or the
 *  page to show instead. */
const managerAndTarget = async (f: FamilyDeps, req: HttpRequestEnvelope, uid: string) => {
  const m = await membershipOf(f, req, '/family');
  if (isReply(m)) return m;
  if (!canManage(m.member)) return notManager(f, m);
  const target = await otherMember(f, m, uid);
  return target ? { m, target } : noSuchMember(f, m);
};

function lastCaregiver(f: FamilyDeps, m: Membership, othersExist: boolean) {
  const text = othersExist
    ? 'You are the primary caregiver, and a workspace cannot be left with nobody to manage it. First make another member the primary caregiver on the Family page; then you can leave.'
    : 'You are the primary caregiver and the only person here, and a workspace cannot be left with nobody to manage it. Invite someone and make them the primary caregiver first; then you can leave. Deleting a whole workspace is not offered in the app yet.';
  return f.h.pageFor(409, 'You cannot leave yet', noticeBody('You cannot leave yet', text), m.caller);
}

/** The Family page. */
async function showFamily(f: FamilyDeps, req: HttpRequestEnvelope): Promise<HttpReplyEnvelope> {
  const m = await membershipOf(f, req, '/family');
  return isReply(m) ? m : familyPage(f, m);
}

/** The primary caregiver sets what another member may do with the care record. */
async function setAccess(f: FamilyDeps, req: HttpRequestEnvelope, params: Record<string, string>): Promise<HttpReplyEnvelope> {
  const found = await managerAndTarget(f, req, params.uid ?? '');
  if ('status' in found) return found;
  const { m, target } = found;
  const input = z.object({ access: z.enum(['read', 'write']) }).safeParse(req.body ?? {});
  if (!input.success) return familyPage(f, m, 400, formError('Choose "Can add and take things" or "Can only read".'));
  if (target.role !== 'family_member') return familyPage(f, m, 409, formError('The primary caregiver can always add and take things.'));
  if (!(await f.circle.setAccess(m.workspace._id, target.uid, input.data.access))) return noSuchMember(f, m);
  return redirect('/family');
}

/** An invitation by email, its link shown once. */
async function invite(f: FamilyDeps, req: HttpRequestEnvelope): Promise<HttpReplyEnvelope> {
  const m = await membershipOf(f, req, '/family');
  if (isReply(m)) return m;
  if (!canManage(m.member)) return notManager(f, m);
  const input = inviteInput.safeParse(req.body ?? {});
  if (!input.success) return familyPage(f, m, 400, formError('Enter the email address of the person to invite, like sam@example.com.'));
  const email = normalEmail(input.data.email);
  if ((await f.circle.members(m.workspace._id)).some((p) => normalEmail(p.email) === email))
    return familyPage(f, m, 409, formError(`${email} is already in the family circle.`));
  const lovedOnes = (await f.h.store.lovedOnesOf(m.workspace._id)).map((l) => l.displayName);
  try {
    const invitedBy = { uid: m.caller.uid, email: m.caller.email, ...(m.caller.name ? { name: m.caller.name } : {}) };
    const result = await issueInvitation(
      { config: f.config, invites: f.invites },
      { workspaceId: m.workspace._id, workspaceName: m.workspace.name, lovedOnes, email, invitedBy },
    );
    // The link is shown on this reply only; a reload makes a new one and withdraws this one.
    return f.h.pageFor(200, 'Invitation', invitationBody(result), m.caller, { 'cache-control': 'no-store' });
  } catch (err) {
    if (err instanceof TooManyInvites) return familyPage(f, m, 409, formError('Twenty invitations are already waiting. Withdraw some before inviting more.'));
    throw err;
  }
}

/** An invitation withdrawn. */
async function revokeInvite(f: FamilyDeps, req: HttpRequestEnvelope, params: Record<string, string>): Promise<HttpReplyEnvelope> {
  const m = await membershipOf(f, req, '/family');
  if (isReply(m)) return m;
  if (!canManage(m.member)) return notManager(f, m);
  await f.invites.revoke(m.workspace._id, params.id ?? '');
  return redirect('/family');
}

/** The page that confirms removing a member. */
async function confirmRemove(f: FamilyDeps, req: HttpRequestEnvelope, params: Record<string, string>): Promise<HttpReplyEnvelope> {
  const found = await managerAndTarget(f, req, params.uid ?? '');
  if ('status' in found) return found;
  const { m, target } = found;
  const who = personName(target);
  const lovedOnes = (await f.h.store.lovedOnesOf(m.workspace._id)).map((l) => l.displayName);
  return f.h.pageFor(
    200,
    `Remove ${who}`,
    confirmBody({
      title: `Remove ${who} from ${m.workspace.name}?`,
      lines: [
        ...(target.name ? [`${who} signs in as ${target.email}.`] : []),
        lovedOnes.length
          ? `${who} will no longer see ${lovedOnes.join(', ')}: timeline, medications, vital signs or inbox.`
          : `${who} will no longer see this workspace.`,
        `Their MCP API keys and connected apps stop working at once.`,
        `They keep their carecircle account, and you can invite them again later.`,
      ],
      action: `/family/members/${encodeURIComponent(target.uid)}/remove`,
      button: `Remove ${who}`,
      id: 'confirm-remove',
    }),
    m.caller,
  );
}

/** A member removed: their credentials first, then their place. */
async function remove(f: FamilyDeps, req: HttpRequestEnvelope, params: Record<string, string>): Promise<HttpReplyEnvelope> {
  const uid = params.uid ?? '';
  const m = await membershipOf(f, req, '/family');
  if (isReply(m)) return m;
  if (!canManage(m.member)) return notManager(f, m);
  const target = await otherMember(f, m, uid);
  if (!target) {
    if (uid === m.caller.uid || !(await f.circle.removedRecently(m.workspace._id, uid))) return noSuchMember(f, m);
    // The same removal again (its answer lost to a 503 or a closed tab): the first attempt's
    // remaining steps are repeated, harmlessly, and the answer is the same.
    await f.circle.remove(m.workspace._id, uid);
    return redirect('/family');
  }
  // Credentials first: an attempt cut short before the member goes is repeated in full, and
  // one cut short after it finds the credentials revoked already.
  await revokeCredentialsOf(target.uid, f.credentials);
  await f.circle.remove(m.workspace._id, target.uid);
  return redirect('/family');
}

/** The page that confirms handing the workspace over. */
async function confirmHandOver(f: FamilyDeps, req: HttpRequestEnvelope, params: Record<string, string>): Promise<HttpReplyEnvelope> {
  const found = await managerAndTarget(f, req, params.uid ?? '');
  if ('status' in found) return found;
  const { m, target } = found;
  const who = personName(target);
  return f.h.pageFor(
    200,
    `Hand over to ${who}`,
    confirmBody({
      title: `Make ${who} the primary caregiver of ${m.workspace.name}?`,
      lines: [
        `${who} will manage the workspace: invite and remove people, add loved ones and link agencies.`,
        'You become a family member: you can still read everything, but no longer manage.',
      ],
      action: `/family/members/${encodeURIComponent(target.uid)}/hand-over`,
      button: `Make ${who} the primary caregiver`,
      id: 'confirm-hand-over',
    }),
    m.caller,
  );
}

/** The workspace handed over to another member. */
async function handOver(f: FamilyDeps, req: HttpRequestEnvelope, params: Record<string, string>): Promise<HttpReplyEnvelope> {
  const found = await managerAndTarget(f, req, params.uid ?? '');
  if ('status' in found) return found;
  const { m, target } = found;
  if (!(await f.circle.handOver(m.workspace._id, m.caller.uid, target.uid))) return noSuchMember(f, m);
  return redirect('/family');
}

/** The page that confirms leaving (or says why the caller cannot leave yet). */
async function confirmLeave(f: FamilyDeps, req: HttpRequestEnvelope): Promise<HttpReplyEnvelope> {
  const m = await membershipOf(f, req, '/family/leave');
  if (isReply(m)) return m;
  if (canManage(m.member)) {
    const others = (await f.circle.members(m.workspace._id)).filter((p) => p.uid !== m.caller.uid);
    if (!others.some((p) => p.role === 'caregiver')) return lastCaregiver(f, m, others.length > 0);
  }
  return f.h.pageFor(
    200,
    `Leave ${m.workspace.name}`,
    confirmBody({
      title: `Leave ${m.workspace.name}?`,
      lines: [
        'You will no longer see its loved ones, timelines, medications, vital signs or inbox.',
        'Your MCP API keys and connected apps stop working at once.',
        'To come back, the primary caregiver has to invite you again.',
      ],
      action: '/family/leave',
      button: `Leave ${m.workspace.name}`,
      id: 'confirm-leave',
    }),
    m.caller,
  );
}

/** The caller leaves the workspace. */
async function leave(f: FamilyDeps, req: HttpRequestEnvelope): Promise<HttpReplyEnvelope> {
  const m = await membershipOf(f, req, '/family/leave');
  if (isReply(m)) return m;
  const outcome = await f.circle.leave(m.workspace._id, m.caller.uid);
  if (outcome === 'last_caregiver') return lastCaregiver(f, m, (await f.circle.members(m.workspace._id)).length > 1);
  await revokeCredentialsOf(m.caller.uid, f.credentials);
  return f.h.pageFor(
    200,
    'You left',
    noticeBody(`You left ${m.workspace.name}`, 'Your account is still here. You can start your own family workspace, or accept an invitation to another.', {
      href: '/onboarding',
      label: 'Start a family workspace',
    }),
    m.caller,
  );
}

/** The family circle as JSON for the app. */
async function familyJson(f: FamilyDeps, req: HttpRequestEnvelope): Promise<HttpReplyEnvelope> {
  const caller = await f.h.requireCaller(req);
  const membership = await f.h.store.workspaceOf(caller.uid);
  if (!membership) return json(200, { workspace: null, members: [] });
  const manages = canManage(membership.member);
  const [members, pending] = await Promise.all([
    f.circle.members(membership.workspace._id),
    manages ? f.invites.pending(membership.workspace._id) : Promise.resolve([]),
  ]);
  return json(200, {
    workspace: { name: membership.workspace.name, role: membership.member.role },
    members: members.map((p) => ({ name: p.name ?? null, email: p.email, role: p.role, joinedAt: p.joinedAt.toISOString(), you: p.uid === caller.uid })),
    ...(manages ? { invitations: pending.map((i) => ({ email: i.email, createdAt: i.createdAt.toISOString(), expiresAt: i.expiresAt.toISOString() })) } : {}),
  });
}

export function familyRoutes(routes: AppRouteBuilder, h: AppHelpers, deps: { config: Config; db: Db; credentials: Credentials }): void {
  const { config, db } = deps;
  const circle = new FamilyCircle(db, deps.credentials);
  const invites = new InviteStore(db);
  const credentials = { keys: new KeyStore(db, deps.credentials), oauth: new OAuthStore(db, deps.credentials) };
  const f: FamilyDeps = { h, config, circle, invites, credentials };
  routes
    .on('family', 'GET', (req) => showFamily(f, req))
    .on('familyInvites', 'POST', (req) => invite(f, req))
    .on('familyInviteRevoke', 'POST', (req, params) => revokeInvite(f, req, params))
    .on('familyRemove', 'GET', (req, params) => confirmRemove(f, req, params))
    .on('familyRemove', 'POST', (req, params) => remove(f, req, params))
    .on('familyHandOver', 'GET', (req, params) => confirmHandOver(f, req, params))
    .on('familyHandOver', 'POST', (req, params) => handOver(f, req, params))
    .on('familyAccess', 'POST', (req, params) => setAccess(f, req, params))
    .on('familyLeave', 'GET', (req) => confirmLeave(f, req))
    .on('familyLeave', 'POST', (req) => leave(f, req))
    .on('apiFamily', 'GET', (req) => familyJson(f, req));
  joinRoutes(routes, h, { circle, invites });
}
