// Deleting one's own carecircle account from Settings: a page that says what goes and what stays,
// then, confirmed, the memberships end, the API keys and app grants are revoked, no browser gets
// notifications any more, every session ends and the profile is removed. What the person wrote stays in the family's record, shown as
// written by "a former member". A primary caregiver first hands the workspace over.
import type { Credentials } from '../auth/credentials.js';
import type { Db } from 'mongodb';
import { clearedSessionCookie, SessionStore } from '../auth/sessions.js';
import type { HttpRequestEnvelope } from '../bus/envelopes.js';
import type { Config } from '../config.js';
import { FamilyCircle } from '../family/circle.js';
import { redirect } from '../http/page.js';
import type { KeyStore } from '../keys/keys.js';
import { OAuthStore } from '../oauth/store.js';
import { PushSubscriptions } from '../push/subscriptions.js';
import { revokeCredentialsOf } from './familyAccess.js';
import { noticeBody } from './familyPages.js';
import type { AppHelpers } from './helpers.js';
import type { AppRouteBuilder } from './routeTable.js';

export function accountRoutes(routes: AppRouteBuilder, h: AppHelpers, deps: { config: Config; db: Db; credentials: Credentials; keys: KeyStore }): void {
  const circle = new FamilyCircle(deps.db, deps.credentials);
  const oauth = new OAuthStore(deps.db, deps.credentials);
  const sessions = new SessionStore(deps.db, deps.credentials);
  const pushes = new PushSubscriptions(deps.db);
  const path = '/settings/delete-account';
  const settingsLink = { href: '/settings', label: 'Back to Settings' };

  /** Why the account cannot go yet, or null: a primary caregiver hands the workspace over first. */
  const blocked = async (uid: string) => {
    const membership = await h.store.workspaceOf(uid);
    if (membership?.member.role !== 'caregiver') return null;
    const others = (await circle.members(membership.workspace._id)).length > 1;
    return others
      ? `You are the primary caregiver of ${membership.workspace.name}. First make another member the primary caregiver on the Family circle page; then you can delete your account.`
      : `You are the primary caregiver of ${membership.workspace.name} and the only person in it. Invite someone and make them the primary caregiver first; then you can delete your account.`;
  };

  routes
    .on('settingsDeleteAccount', 'GET', async (req: HttpRequestEnvelope) => {
      const caller = await h.currentCaller(req);
      if (!caller) return h.signedOutPage(path);
      const reason = await blocked(caller.uid);
      if (reason)
        return h.pageFor(
          200,
          'Delete my account',
          noticeBody('You cannot delete your account yet', reason, { href: '/family', label: 'Go to the Family circle' }),
          caller,
        );
      const membership = await h.store.workspaceOf(caller.uid);
      return h.pageFor(
        200,
        'Delete my account',
        <>
          <h1>Delete my account?</h1>
          <section class="card" id="what-goes">
            <h2>What goes</h2>
            <ul>
              <li>Your profile: your name, email address and time zone.</li>
              {membership ? <li>Your place in {membership.workspace.name}: you no longer see its loved ones or their record.</li> : null}
              <li>Your MCP API keys and the assistants you connected: they stop on their next request.</li>
              <li>Every place you are signed in, including this one.</li>
            </ul>
            <h2>What stays</h2>
            <ul>
              <li>
                What you added to a loved one's record (notes, doses, readings) stays in the family's record, shown as written by "a former member". The text of
                an entry stays as written.
              </li>
              <li>The record of your assistants' calls (which tool, when), kept for the family's audit as long as it is kept for everyone.</li>
            </ul>
            <form method="post" action={path}>
              <button type="submit" class="danger" id="confirm-delete-account">
                Delete my account
              </button>
            </form>
            <p>
              <a href="/settings">No, keep my account</a>
            </p>
          </section>
        </>,
        caller,
      );
    })
    .on('settingsDeleteAccount', 'POST', async (req: HttpRequestEnvelope) => {
      const caller = await h.currentCaller(req);
      if (!caller) return redirect(`/signin?next=${encodeURIComponent(path)}`);
      const reason = await blocked(caller.uid);
      if (reason) return h.pageFor(409, 'Delete my account', noticeBody('You cannot delete your account yet', reason, settingsLink), caller);
      // Each step is safe to repeat, so a deletion cut short is finished by sending it again.
      const membership = await h.store.workspaceOf(caller.uid);
      if (membership) await circle.remove(membership.workspace._id, caller.uid);
      await revokeCredentialsOf(caller.uid, { keys: deps.keys, oauth });
      await pushes.removeAll(caller.uid);
      await h.store.deleteUser(caller.uid);
      await sessions.revokeAllOf(caller.uid);
      return h.pageFor(
        200,
        'Account deleted',
        noticeBody(
          'Your account is deleted',
          'Your profile, keys, connected apps, notifications and sessions are gone. Thank you for helping look after someone.',
          {
            href: '/',
            label: 'carecircle home',
          },
        ),
        null,
        { 'set-cookie': clearedSessionCookie(deps.config) },
      );
    });
}
