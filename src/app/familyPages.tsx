// The family circle's pages: who is in the workspace and in which role, inviting someone (with
// the link to copy), and the confirmations before removing, handing over and leaving.
import { ACCESS_LABELS, ROLE_LABELS, type CircleMember } from '../family/circle.js';
import type { InviteRecord } from '../family/invites.js';
import type { MemberRecord, WorkspaceRecord } from '../family/records.js';
import type { Markup } from '../http/html.js';

export const personName = (p: { name?: string; email: string }): string => p.name?.trim() || p.email;
const day = (d: Date) => d.toLocaleDateString('en-US', { year: 'numeric', month: 'short', day: 'numeric', timeZone: 'UTC' });
const memberPath = (uid: string, action: string) => `/family/members/${encodeURIComponent(uid)}/${action}`;

export interface FamilyView {
  workspace: WorkspaceRecord;
  me: MemberRecord;
  members: CircleMember[];
  invites: InviteRecord[];
  manages: boolean;
  mailOn: boolean;
}

function memberTable(v: FamilyView) {
  // Two columns: who (with email and since when), and role (with the changes a manager can make);
  // on a phone each person is one block, so an address does not squeeze the role into letters.
  return (
    <table id="members" class="stack">
      <caption>People in {v.workspace.name}</caption>
      <thead>
        <tr>
          <th scope="col">Person</th>
          <th scope="col">Role</th>
        </tr>
      </thead>
      <tbody>
        {v.members.map((m) => {
          const you = m.uid === v.me.uid;
          return (
            <tr>
              <th scope="row">
                {personName(m)}
                {you ? ' (you)' : ''}
                <br />
                <span class="muted">
                  {m.name ? `${m.email}, ` : ''}since {day(m.joinedAt)}
                </span>
              </th>
              <td data-label="Role">
                {ROLE_LABELS[m.role]}
                <br />
                <span class="access">{ACCESS_LABELS[m.access]}</span>
                {v.manages && m.role === 'family_member' ? <AccessForm m={m} /> : null}
                {v.manages && !you ? (
                  <>
                    <br />
                    <a href={memberPath(m.uid, 'remove')}>Remove {personName(m)}</a>
                    {m.role === 'family_member' ? (
                      <>
                        <br />
                        <a href={memberPath(m.uid, 'hand-over')}>Make {personName(m)} the primary caregiver</a>
                      </>
                    ) : null}
                  </>
                ) : null}
              </td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}

/** The primary caregiver's choice of what a member may do: a plain form, saved with its button. */
function AccessForm({ m }: { m: CircleMember }) {
  const id = `access-${m.uid}`;
  return (
    <form method="post" action={memberPath(m.uid, 'access')} class="access-form">
      <label for={id}>What {personName(m)} may do</label>
      <select id={id} name="access">
        {(['write', 'read'] as const).map((a) => (
          <option value={a} selected={m.access === a}>
            {ACCESS_LABELS[a]}
          </option>
        ))}
      </select>
      <button type="submit" class="secondary">
        Save
      </button>
    </form>
  );
}

function inviteSection(v: FamilyView, error: Markup) {
  return (
    <section class="card">
      <h2>Invite someone</h2>
      <p>
        {v.mailOn
          ? 'We email them a link. They sign in with that email address and then see everything here as a family member who can add and take things; once they have joined, you can make that reading only.'
          : 'Email is not set up on this carecircle, so you get a link to send them yourself. They sign in with that email address and then see everything here as a family member who can add and take things; once they have joined, you can make that reading only.'}
      </p>
      {error}
      <form method="post" action="/family/invites">
        <label for="invite-email">Their email address</label>
        <input id="invite-email" name="email" type="email" required maxLength={254} autocomplete="off" placeholder="sam@example.com" />
        <button type="submit" id="invite">
          {v.mailOn ? 'Send invitation' : 'Create invitation link'}
        </button>
      </form>
      {v.invites.length ? (
        <>
          <h3 id="pending-heading">Invitations not yet accepted</h3>
          <ul id="invites-pending" aria-labelledby="pending-heading">
            {v.invites.map((i) => (
              <li>
                <strong>{i.email}</strong>: the link works until {day(i.expiresAt)}.
                <form method="post" action={`/family/invites/${encodeURIComponent(i._id)}/revoke`}>
                  <button type="submit" class="secondary" aria-label={`Withdraw the invitation for ${i.email}`}>
                    Withdraw
                  </button>
                </form>
              </li>
            ))}
          </ul>
        </>
      ) : null}
    </section>
  );
}

export function familyBody(v: FamilyView, error: Markup = null) {
  const caregiver = v.members.find((m) => m.role === 'caregiver');
  return (
    <>
      <h1>Family circle</h1>
      <section class="card">
        <h2>Members</h2>
        {memberTable(v)}
        {v.manages ? null : (
          <p>
            {caregiver ? `${personName(caregiver)} is the primary caregiver and manages this workspace.` : 'The primary caregiver manages this workspace.'} You
            can read everything in it, and connect your own assistant with a key from <a href="/settings">Settings</a>.
          </p>
        )}
      </section>
      {v.manages ? inviteSection(v, error) : null}
      <section class="card">
        <h2>Leave</h2>
        <p>
          <a href="/family/leave" id="leave">
            Leave {v.workspace.name}
          </a>
        </p>
      </section>
    </>
  );
}

export function invitationBody(r: { email: string; link: string; sent: boolean; mailFailed: boolean }) {
  const says = r.sent
    ? `We emailed ${r.email} a link to join. If it does not arrive, you can send them the same link yourself:`
    : r.mailFailed
      ? 'The email could not be sent just now. Copy this link and send it to them yourself, by text message or email:'
      : 'Email is not set up on this carecircle, so nothing was sent. Copy this link and send it to them yourself, by text message or email:';
  return (
    <>
      <h1>{r.sent ? 'Invitation sent' : 'Invitation link ready'}</h1>
      <section class="card" id="invitation">
        <p role="status">{says}</p>
        <p class="secret" id="invite-url">
          {r.link}
        </p>
        <button type="button" class="secondary" data-copy="invite-url" data-copy-fallback="Select and copy the link above">
          Copy link
        </button>
        <p>The link works once, for 7 days, and only for someone who signs in as {r.email}.</p>
        <p>
          <a href="/family">Back to the family circle</a>
        </p>
      </section>
    </>
  );
}

/** A yes-or-no page naming what will happen, with the one button that does it. */
export function confirmBody(o: { title: string; lines: Markup[]; action: string; button: string; id: string }) {
  return (
    <>
      <h1>{o.title}</h1>
      <section class="card">
        <ul>
          {o.lines.map((l) => (
            <li>{l}</li>
          ))}
        </ul>
        <form method="post" action={o.action}>
          <button type="submit" class="danger" id={o.id}>
            {o.button}
          </button>
        </form>
        <p>
          <a href="/family">No, go back</a>
        </p>
      </section>
    </>
  );
}

export function noticeBody(title: string, text: Markup, link: { href: string; label: string } = { href: '/family', label: 'Back to the family circle' }) {
  return (
    <>
      <h1>{title}</h1>
      <section class="card">
        <p>{text}</p>
        <p>
          <a href={link.href}>{link.label}</a>
        </p>
      </section>
    </>
  );
}
