// Changing the workspace with care: renaming it, adding a loved one (a second one of the same name
// is flagged first), editing a loved one's names, and removing a loved one only after a page that
// says what goes with them. Each request re-derives the workspace and the loved one from the caller.
import type { Credentials } from '../auth/credentials.js';
import type { Db } from 'mongodb';
import type { SessionCaller } from '../auth/sessions.js';
import type { HttpReplyEnvelope, HttpRequestEnvelope } from '../bus/envelopes.js';
import { deleteLovedOne, duplicateLovedOne, renameLovedOne, renameWorkspace } from '../family/changes.js';
import { countLovedOneCareEvents, deleteLovedOneCareEvents, type LovedOneRecord, type WorkspaceRecord } from '../family/records.js';
import { TextField } from '../http/fields.js';
import type { Markup } from '../http/html.js';
import { redirect } from '../http/page.js';
import { countInboxItemsOf, deleteInboxOf } from '../inbox/records.js';
import { PlansStore } from '../family/plans.js';
import { FamilyShares } from '../ingest/familyShare.js';
import { friendlyIssues, lovedOneInput, workspaceNameInput } from './actions.js';
import type { AppHelpers } from './helpers.js';
import type { AppRouteBuilder } from './routeTable.js';
import { errorBox } from './settings.js';

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

const nameFields = (values: { firstName?: string; lastName?: string }) => (
  <>
    <TextField id="firstName" label="First name" required maxLength={60} value={values.firstName ?? ''} />
    <TextField id="lastName" label="Last name" required maxLength={60} value={values.lastName ?? ''} />
  </>
);

/** The loved one's zone: new medications, appointments and tasks are meant in it. */
const zoneField = (value: string, placeholder: string) => (
  <TextField
    id="timeZone"
    label="Their time zone"
    maxLength={64}
    value={value}
    placeholder={placeholder}
    hint="A place name such as America/New_York. New medicines, appointments and tasks are meant in it; what is already planned keeps its own."
  />
);

const back = (
  <p>
    <a href="/">Back to the workspace</a>
  </p>
);

export function editingRoutes(routes: AppRouteBuilder, h: AppHelpers, db: Db, credentials: Credentials): void {
  const shares = new FamilyShares(db, credentials);
  const form = (req: HttpRequestEnvelope) => (req.body ?? {}) as Record<string, unknown>;
  /** The zone the caller's own times are shown in: a new loved one's, unless the form names another. */
  const callerZone = async (req: HttpRequestEnvelope, caller: SessionCaller) => (await h.clockFor(caller, req)).zone;

  const page = (caller: SessionCaller, status: number, title: string, body: Markup) => h.cardPage(status, title, body, caller);

  /** The caller's workspace, if they manage it; otherwise the page to answer with. */
  const managed = async (
    req: HttpRequestEnvelope,
    next: string,
    change: boolean,
  ): Promise<{ caller: SessionCaller; workspace: WorkspaceRecord } | HttpReplyEnvelope> => {
    const caller = await h.currentCaller(req);
    if (!caller) return change ? redirect(`/signin?next=${encodeURIComponent(next)}`) : h.signedOutPage(next);
    const membership = await h.store.workspaceOf(caller.uid);
    if (!membership) return redirect('/onboarding');
    if (membership.member.role !== 'caregiver')
      return page(
        caller,
        403,
        'Only the primary caregiver can change this',
        <p>Ask the primary caregiver of {membership.workspace.name} to make the change.</p>,
      );
    return { caller, workspace: membership.workspace };
  };

  /** As `managed`, and the loved one must be in that workspace. */
  const managedLovedOne = async (req: HttpRequestEnvelope, id: string, next: string, change: boolean) => {
    const m = await managed(req, next, change);
    if (!('caller' in m)) return m;
    const lovedOne = await h.store.lovedOneIn(m.workspace._id, id);
    if (!lovedOne)
      return page(
        m.caller,
        404,
        'No such loved one in your workspace',
        <p>
          Pick a loved one from <a href="/">your workspace</a>.
        </p>,
      );
    return { ...m, lovedOne };
  };

  const renameForm = (workspace: WorkspaceRecord, value: string, error: Markup = null) => (
    <>
      {error}
      <form method="post" action="/workspace/name">
        <TextField id="familyName" label="Family name" required maxLength={120} value={value} />
        <button type="submit">Save the name</button>
      </form>
      <p>
        <a href="/">Keep “{workspace.name}”</a>
      </p>
    </>
  );

  const editForm = (l: LovedOneRecord, values: { firstName?: string; lastName?: string; timeZone?: string }, zone: string, error: Markup = null) => (
    <>
      {error}
      <form method="post" action={`/workspace/loved-ones/${encodeURIComponent(l._id)}/edit`}>
        {nameFields(values)}
        {zoneField(values.timeZone ?? l.timeZone ?? zone, zone)}
        <button type="submit">Save</button>
      </form>
      <p class="muted">The private inbox address stays the same, so mail forwarded to it keeps arriving.</p>
      {back}
    </>
  );

  const addAnyway = (first: string, last: string, zone: string | undefined, existing: LovedOneRecord) => (
    <>
      <p class="notice" id="duplicate">
        {existing.displayName} is already in your workspace. Adding {first} {last} again makes a second loved one with their own timeline and inbox address.
      </p>
      <form method="post" action="/workspace/loved-ones">
        <input type="hidden" name="firstName" value={first} />
        <input type="hidden" name="lastName" value={last} />
        {zone ? <input type="hidden" name="timeZone" value={zone} /> : null}
        <input type="hidden" name="anyway" value="yes" />
        <button type="submit" class="secondary" id="create-anyway">
          Create anyway: a second {first} {last}
        </button>
      </form>
      <p>
        <a href="/">Don't add them</a>
      </p>
    </>
  );

  routes
    .on('workspaceName', 'GET', async (req) => {
      const m = await managed(req, '/workspace/name', false);
      if (!('caller' in m)) return m;
      return page(m.caller, 200, 'Rename the workspace', renameForm(m.workspace, m.workspace.name));
    })
    .on('workspaceName', 'POST', async (req) => {
      const m = await managed(req, '/workspace/name', true);
      if (!('caller' in m)) return m;
      const input = workspaceNameInput.safeParse(form(req));
      if (!input.success)
        return page(m.caller, 400, 'Rename the workspace', renameForm(m.workspace, String(form(req).familyName ?? ''), errorBox(friendlyIssues(input.error))));
      await renameWorkspace(db, credentials, m.workspace._id, input.data.familyName);
      return redirect('/');
    })
    .on('workspaceLovedOnes', 'POST', async (req) => {
      const m = await managed(req, '/', true);
      if (!('caller' in m)) return m;
      const input = lovedOneInput.safeParse(form(req));
      if (!input.success)
        return page(
          m.caller,
          400,
          'Add a loved one',
          <>
            {errorBox(friendlyIssues(input.error))}
            <form method="post" action="/workspace/loved-ones">
              {nameFields({ firstName: String(form(req).firstName ?? ''), lastName: String(form(req).lastName ?? '') })}
              {zoneField(String(form(req).timeZone ?? ''), await callerZone(req, m.caller))}
              <button type="submit">Add</button>
            </form>
            {back}
          </>,
        );
      const { firstName, lastName } = input.data;
      const existing = form(req).anyway === 'yes' ? null : await duplicateLovedOne(db, m.workspace._id, input.data);
      if (existing) return page(m.caller, 200, `${existing.displayName} is already here`, addAnyway(firstName, lastName, input.data.timeZone, existing));
      // Their zone, unless given, is the adding caregiver's.
      await h.store.addLovedOne(m.workspace._id, { ...input.data, timeZone: input.data.timeZone ?? (await callerZone(req, m.caller)) }, false);
      return redirect('/');
    })
    .on('lovedOneEdit', 'GET', async (req, params) => {
      const id = params.id ?? '';
      const m = await managedLovedOne(req, id, `/workspace/loved-ones/${encodeURIComponent(id)}/edit`, false);
      if (!('caller' in m)) return m;
      return page(m.caller, 200, `Edit ${m.lovedOne.displayName}`, editForm(m.lovedOne, m.lovedOne, await callerZone(req, m.caller)));
    })
    .on('lovedOneEdit', 'POST', async (req, params) => {
      const id = params.id ?? '';
      const m = await managedLovedOne(req, id, `/workspace/loved-ones/${encodeURIComponent(id)}/edit`, true);
      if (!('caller' in m)) return m;
      const input = lovedOneInput.safeParse(form(req));
      const values = { firstName: String(form(req).firstName ?? ''), lastName: String(form(req).lastName ?? ''), timeZone: String(form(req).timeZone ?? '') };
      if (!input.success)
        return page(
          m.caller,
          400,
          `Edit ${m.lovedOne.displayName}`,
          editForm(m.lovedOne, values, await callerZone(req, m.caller), errorBox(friendlyIssues(input.error))),
        );
      await renameLovedOne(db, credentials, m.workspace._id, m.lovedOne._id, input.data);
      return redirect('/');
    })
    .on('lovedOneRemove', 'GET', async (req, params) => {
      const id = params.id ?? '';
      const m = await managedLovedOne(req, id, `/workspace/loved-ones/${encodeURIComponent(id)}/remove`, false);
      if (!('caller' in m)) return m;
      const l = m.lovedOne;
      const [events, mail, links] = await Promise.all([
        countLovedOneCareEvents(h.timelines, l._id),
        countInboxItemsOf(h.timelines, l._id),
        shares.countLinksTo(m.workspace._id, l._id),
      ]);
      return page(
        m.caller,
        200,
        `Remove ${l.displayName}?`,
        <>
          <p>Removing {l.displayName} deletes, for everyone in the family, and cannot be undone:</p>
          <ul id="what-goes">
            <li>{plural(events, 'entry', 'entries')} on their timeline (visits, medications, vital signs, notes and mail)</li>
            <li>their appointments and shared tasks, with their history</li>
            <li>{plural(mail, 'message', 'messages')} in their inbox, with the attachments; their inbox address stops taking mail</li>
            <li>{plural(links, 'link to a home-care agency', 'links to home-care agencies')}: the agency stops sending and sees family sharing turned off</li>
          </ul>
          <form method="post" action={`/workspace/loved-ones/${encodeURIComponent(l._id)}/remove`}>
            <button type="submit" class="danger" id="remove">
              Remove {l.displayName} and all of this
            </button>
          </form>
          <p>
            <a href="/">Keep {l.displayName}</a>
          </p>
        </>,
      );
    })
    .on('lovedOneRemove', 'POST', async (req, params) => {
      const id = params.id ?? '';
      const m = await managedLovedOne(req, id, `/workspace/loved-ones/${encodeURIComponent(id)}/remove`, true);
      if (!('caller' in m)) return m;
      const { workspace, lovedOne } = m;
      // Agencies first so nothing new arrives, and the record last, so a removal that fails half-way
      // can be asked again; what arrived meanwhile (mail) is swept once more after the record goes.
      const sweep = async () => {
        await deleteLovedOneCareEvents(h.timelines, lovedOne._id);
        await new PlansStore(db).deleteLovedOne(lovedOne._id);
        await deleteInboxOf(db, h.timelines, workspace._id, lovedOne._id);
      };
      await shares.unlinkLovedOne(workspace._id, lovedOne._id);
      await sweep();
      await deleteLovedOne(db, credentials, workspace._id, lovedOne._id);
      await sweep();
      return redirect('/');
    });
}
