// The care pages' handlers: each re-derives the caller's workspace from the session and answers
// only for a loved one in it, then renders the timeline, medications or vital signs, or the
// family's entries (./entryPages.tsx).
import type { SessionCaller } from '../auth/sessions.js';
import type { Db } from 'mongodb';
import type { HttpReplyEnvelope, HttpRequestEnvelope } from '../bus/envelopes.js';
import type { AppHelpers } from '../app/helpers.js';
import type { Markup } from '../http/html.js';
import { redirect } from '../http/page.js';
import { handlers, type RouteHandlers } from '../slice/contract.js';
import { MedicationList } from '../family/medications.js';
import { medicationListRoutes } from './medicationForms.js';
import { medicationsBody } from './medications.js';
import { CARE_ROUTES } from './routes.js';
import type { CareView } from './parts.js';
import { timelineBody } from './timeline.js';
import { entryHandlers } from './entryPages.js';
import { exportHandlers } from './exportPages.js';
import { vitalsBody } from './vitalsPage.js';

/** `maxReplyBytes`: the largest reply a worker sends (MAX_REPLY_BYTES), which bounds the record's download. */
export function carePages(h: AppHelpers, db: Db, maxReplyBytes = Infinity): RouteHandlers {
  const notFound = (caller: SessionCaller) =>
    h.pageFor(
      404,
      'Not found',
      <>
        <h1>No such loved one in your workspace</h1>
        <section class="card">
          <p>
            Pick a loved one from <a href="/">your workspace</a>.
          </p>
        </section>
      </>,
      caller,
    );

  /** Ownership is re-derived on every request: the session's user, their workspace, the loved one in it. */
  const render =
    (path: (id: string) => string, build: (v: CareView) => Promise<{ title: string; body: Markup }>) =>
    async (req: HttpRequestEnvelope, params: Record<string, string>): Promise<HttpReplyEnvelope> => {
      const id = params.lovedOneId ?? '';
      const caller = await h.currentCaller(req);
      if (!caller) return h.signedOutPage(path(id));
      const membership = await h.store.workspaceOf(caller.uid);
      if (!membership) return redirect('/onboarding');
      const lovedOne = await h.store.lovedOneIn(membership.workspace._id, id);
      if (!lovedOne) return notFound(caller);
      const now = new Date();
      const page = await build({ caller, lovedOne, clock: await h.clockFor(caller, req, now), query: req.query, now });
      return h.pageFor(200, page.title, page.body, caller);
    };

  const base = (id: string) => `/care/${encodeURIComponent(id)}`;
  const list = new MedicationList(db);
  const meds = medicationListRoutes(h, list);
  const entries = entryHandlers(h, async (req, params, path) => {
    const caller = await h.currentCaller(req);
    if (!caller) return req.method === 'GET' ? h.signedOutPage(path) : redirect(`/signin?next=${encodeURIComponent(path)}`);
    const membership = await h.store.workspaceOf(caller.uid);
    if (!membership) return redirect('/onboarding');
    const lovedOne = await h.store.lovedOneIn(membership.workspace._id, params.lovedOneId ?? '');
    if (!lovedOne) return notFound(caller);
    const now = new Date();
    return { caller, member: membership.member, lovedOne, clock: await h.clockFor(caller, req, now), now };
  });
  const exports = exportHandlers(h, db, maxReplyBytes, async (req, lovedOneId, path) => {
    const caller = await h.currentCaller(req);
    if (!caller) return h.signedOutPage(path);
    const membership = await h.store.workspaceOf(caller.uid);
    if (!membership) return redirect('/onboarding');
    const lovedOne = await h.store.lovedOneIn(membership.workspace._id, lovedOneId);
    if (!lovedOne) return notFound(caller);
    return { caller, member: membership.member, lovedOne };
  });
  return handlers(CARE_ROUTES)
    .on('careExport', 'GET', exports.page)
    .on('careExportFile', 'GET', exports.file)
    .on('careAdd', 'GET', entries.addGet)
    .on('careAdd', 'POST', entries.addPost)
    .on('careEntry', 'GET', entries.show)
    .on('careEntryCorrect', 'GET', entries.correctGet)
    .on('careEntryCorrect', 'POST', entries.correctPost)
    .on('careEntryWithdraw', 'GET', entries.withdrawGet)
    .on('careEntryWithdraw', 'POST', entries.withdrawPost)
    .on(
      'careTimeline',
      'GET',
      render(base, (v) => timelineBody(h.store, db, v)),
    )
    .on(
      'careMedications',
      'GET',
      render(
        (id) => `${base(id)}/medications`,
        (v) => medicationsBody(h.store, db, list, v),
      ),
    )
    .on('careMedicationList', 'GET', meds.listPage)
    .on('careMedicationAdd', 'GET', meds.addPage)
    .on('careMedicationAdd', 'POST', meds.add)
    .on('careMedicationEdit', 'GET', meds.editPage)
    .on('careMedicationEdit', 'POST', meds.edit)
    .on('careMedicationStop', 'GET', meds.stopPage)
    .on('careMedicationStop', 'POST', meds.stop)
    .on(
      'careVitals',
      'GET',
      render(
        (id) => `${base(id)}/vitals`,
        (v) => vitalsBody(h.store, db, v),
      ),
    )
    .done();
}
