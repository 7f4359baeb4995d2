// The plans' app pages: a loved one's appointments (add, change, cancel after a confirmation page)
// and shared tasks (add, take, hand back, mark done), plain forms that work without script. Every
// request re-derives the workspace and the loved one from the session; writing needs `canWrite`.
import type { Db } from 'mongodb';
import type { SessionCaller } from '../auth/sessions.js';
import type { Credentials } from '../auth/credentials.js';
import type { HttpReplyEnvelope, HttpRequestEnvelope } from '../bus/envelopes.js';
import type { AppHelpers } from '../app/helpers.js';
import { errorBox } from '../app/settings.js';
import { CareNav, ZoneNote } from '../care/parts.js';
import type { Clock } from '../care/time.js';
import { plannedZone } from '../family/changes.js';
import { canWrite, FamilyCircle } from '../family/circle.js';
import type { LovedOneRecord, MemberRecord, WorkspaceRecord } from '../family/records.js';
import { TextField } from '../http/fields.js';
import type { Markup } from '../http/html.js';
import { redirect } from '../http/page.js';
import { appointmentFromForm, instantToWall, taskFromForm, TEXT_LIMITS, type FieldFault } from '../family/planInput.js';
import {
  AppointmentChanged,
  authorWords,
  PlansStore,
  TaskRefused,
  type AppointmentRecord,
  type Author,
  type PlanChange,
  type TaskMove,
  type TaskRecord,
} from '../family/plans.js';

export interface PlanAccess {
  caller: SessionCaller;
  workspace: WorkspaceRecord;
  member: MemberRecord;
  lovedOne: LovedOneRecord;
  clock: Clock;
  now: Date;
}

const MOVES: Record<string, TaskMove> = { take: 'take', 'hand-back': 'hand_back', done: 'done' };
const DONE_SHOWN_DAYS = 7;

/** The person as the family sees them: their name, else their email. */
export const appAuthor = (caller: SessionCaller): Author => ({ uid: caller.uid, name: caller.name ?? caller.email, via: 'app' });

/** Faults above the form, each naming its field (and linking to it). */
const faultBox = (faults: FieldFault[]) => errorBox(faults.map((f) => f.message));
const invalid = (faults: FieldFault[], field: string) => faults.some((f) => f.field === field);

export function planPages(h: AppHelpers, db: Db, credentials: Credentials) {
  const plans = new PlansStore(db, Date.now, h.timelines);
  const circle = new FamilyCircle(db, credentials);
  const form = (req: HttpRequestEnvelope) => (req.body ?? {}) as Record<string, unknown>;
  const field = (raw: Record<string, unknown>, name: string) => (typeof raw[name] === 'string' ? (raw[name] as string) : '');
  const base = (l: LovedOneRecord) => `/care/${encodeURIComponent(l._id)}`;

  const simple = (caller: SessionCaller, status: number, title: string, body: Markup) => h.cardPage(status, title, body, caller);

  /** The caller, their workspace and the loved one in it; or the page to answer with. `change`: a
   *  post (signed out, it goes to sign-in); `write`: it needs a member who may write (a post does,
   *  and so do the pages whose only use is a change). */
  const access = async (
    req: HttpRequestEnvelope,
    lovedOneId: string,
    next: string,
    change: boolean,
    write = change,
  ): Promise<PlanAccess | HttpReplyEnvelope> => {
    const caller = await h.currentCaller(req);
    if (!caller) return change ? redirect(`/signin?next=${encodeURIComponent(next)}`) : h.signedOutPage(next);
    const membership = await h.store.workspaceOf(caller.uid);
    if (!membership) return redirect('/onboarding');
    const lovedOne = await h.store.lovedOneIn(membership.workspace._id, lovedOneId);
    if (!lovedOne)
      return simple(
        caller,
        404,
        'No such loved one in your workspace',
        <p>
          Pick a loved one from <a href="/">your workspace</a>.
        </p>,
      );
    if (write && !canWrite(membership.member))
      return simple(
        caller,
        403,
        'You can read this but not change it',
        <p>
          The primary caregiver of {membership.workspace.name} has let you read the family's plans only. Ask them to let you add and take things.{' '}
          <a href={`/care/${encodeURIComponent(lovedOne._id)}`}>Back to {lovedOne.displayName}</a>
        </p>,
      );
    const now = new Date();
    return { caller, workspace: membership.workspace, member: membership.member, lovedOne, clock: await h.clockFor(caller, req, now), now };
  };

  const memberNames = async (workspaceId: string) => {
    const members = await circle.members(workspaceId);
    return {
      list: members,
      name: (uid: string | undefined) =>
        uid ? (members.find((m) => m.uid === uid)?.name ?? members.find((m) => m.uid === uid)?.email ?? 'a former member') : '',
    };
  };

  /** Two changes from one version: the one filed first stands, and this one is shown what it is now. */
  const changedFirst = (a: PlanAccess, x: AppointmentRecord) =>
    simple(
      a.caller,
      409,
      'Someone else changed it first',
      <p id="changed-first">
        Someone else changed “{x.title}” just now, so your change was not saved.{' '}
        <a href={`${base(a.lovedOne)}/appointments/${encodeURIComponent(x._id)}`}>See it as it is now</a> and change it again if you still need to.
      </p>,
    );

  const notFound = (a: PlanAccess, what: string) =>
    simple(
      a.caller,
      404,
      `No such ${what}`,
      <p>
        It is not among {a.lovedOne.displayName}'s {what}s. <a href={`${base(a.lovedOne)}/${what}s`}>See them all</a>
      </p>,
    );

  /** The zone a plan is meant in. */
  const zoneField = (a: PlanAccess, value: string, faults: FieldFault[]) => (
    <TextField id="timeZone" label={`Time zone of ${a.lovedOne.displayName}`} required maxLength={64} value={value} invalid={invalid(faults, 'timeZone')} />
  );

  /** A plan's form: what it is first, its notes last, and the fields of its kind between. */
  const planForm = (
    action: string,
    values: Record<string, string>,
    faults: FieldFault[],
    what: { label: string; placeholder: string },
    fields: Markup,
    submit: string,
  ) => (
    <form method="post" action={action} class="plan-form" novalidate>
      {faults.length ? faultBox(faults) : null}
      <TextField
        id="title"
        label={what.label}
        required
        maxLength={TEXT_LIMITS.title}
        value={values.title ?? ''}
        invalid={invalid(faults, 'title')}
        placeholder={what.placeholder}
      />
      {fields}
      <label for="notes">Notes (optional)</label>
      <textarea id="notes" name="notes" rows={3} maxLength={TEXT_LIMITS.notes} aria-invalid={invalid(faults, 'notes') || undefined}>
        {values.notes ?? ''}
      </textarea>
      <button type="submit">{submit}</button>
    </form>
  );

  // ---- appointments ----

  const appointmentForm = (
    a: PlanAccess,
    action: string,
    values: Record<string, string>,
    members: { uid: string; name?: string; email: string }[],
    faults: FieldFault[],
    submit: string,
  ) =>
    planForm(
      action,
      values,
      faults,
      { label: 'What', placeholder: 'Cardiology check-up' },
      <>
        <TextField
          id="withWhom"
          label="With whom (optional)"
          maxLength={TEXT_LIMITS.withWhom}
          value={values.withWhom ?? ''}
          invalid={invalid(faults, 'withWhom')}
        />
        <TextField id="place" label="Where (optional)" maxLength={TEXT_LIMITS.place} value={values.place ?? ''} invalid={invalid(faults, 'place')} />
        <TextField id="day" label="Day" type="date" required value={values.day ?? a.clock.isoDay(a.now)} invalid={invalid(faults, 'day')} />
        <TextField id="startTime" label="Starts at" type="time" required value={values.startTime ?? ''} invalid={invalid(faults, 'startTime')} />
        <TextField id="endTime" label="Ends at" type="time" required value={values.endTime ?? ''} invalid={invalid(faults, 'endTime')} />
        {zoneField(a, values.timeZone ?? plannedZone(a.lovedOne, a.clock.zone), faults)}
        <label for="takenBy">Who is taking {a.lovedOne.firstName}</label>
        <select id="takenBy" name="takenBy" aria-invalid={invalid(faults, 'takenBy') || undefined}>
          <option value="">Nobody yet</option>
          {members.map((m) => (
            <option value={m.uid} selected={values.takenBy === m.uid}>
              {m.name ?? m.email}
            </option>
          ))}
        </select>
      </>,
      submit,
    );

  const appointmentWhen = (clock: Clock, x: AppointmentRecord) => (
    <>
      <time dateTime={x.start.toISOString()}>{clock.dayTime(x.start)}</time> to <time dateTime={x.end.toISOString()}>{clock.time(x.end)}</time>
    </>
  );

  const formValues = (raw: Record<string, unknown>) =>
    Object.fromEntries(['title', 'withWhom', 'place', 'day', 'startTime', 'endTime', 'timeZone', 'takenBy', 'notes'].map((k) => [k, field(raw, k)]));

  const appointmentsPage = async (a: PlanAccess, values: Record<string, string> = {}, faults: FieldFault[] = [], status = 200) => {
    const names = await memberNames(a.workspace._id);
    const list = await plans.upcoming(a.lovedOne._id, a.now);
    const writer = canWrite(a.member);
    const action = `${base(a.lovedOne)}/appointments`;
    return h.pageFor(
      status,
      `${a.lovedOne.displayName}: appointments`,
      <>
        <h1>{a.lovedOne.displayName}</h1>
        <CareNav lovedOne={a.lovedOne} current="appointments" />
        <ZoneNote clock={a.clock} now={a.now} />
        <section class="card" aria-labelledby="appointments-title">
          <h2 id="appointments-title">Coming appointments</h2>
          {list.length ? (
            <ul class="plans" id="appointments">
              {list.map((x) => (
                <li class="plan">
                  <p>
                    <strong>{x.title}</strong> {appointmentWhen(a.clock, x)}
                  </p>
                  <p class="muted">
                    {[
                      x.withWhom ? `with ${x.withWhom}` : '',
                      x.place ? `at ${x.place}` : '',
                      x.takenBy ? `${names.name(x.takenBy)} is taking ${a.lovedOne.firstName}` : 'nobody is taking them yet',
                    ]
                      .filter(Boolean)
                      .join(' · ')}
                  </p>
                  {x.notes ? <p class="entry-detail">{x.notes}</p> : null}
                  {writer ? (
                    <p>
                      <a href={`${action}/${encodeURIComponent(x._id)}`}>Change</a> · <a href={`${action}/${encodeURIComponent(x._id)}/cancel`}>Cancel</a>
                    </p>
                  ) : null}
                </li>
              ))}
            </ul>
          ) : (
            <p class="muted" id="appointments-none">
              No appointments coming up.
            </p>
          )}
          <p>
            <a href="/settings/calendar">Get these in your own calendar</a>
          </p>
        </section>
        {writer ? (
          <section class="card" aria-labelledby="add-appointment-title">
            <h2 id="add-appointment-title">Add an appointment</h2>
            {appointmentForm(a, action, values, names.list, faults, 'Add the appointment')}
          </section>
        ) : (
          <p class="muted">You can read the family's plans; the primary caregiver can let you add and take things.</p>
        )}
      </>,
      a.caller,
    );
  };

  const historyList = (clock: Clock, changes: PlanChange[]) => (
    <ul class="history" id="history">
      {changes.map((c) => (
        <li>
          <time dateTime={c.at.toISOString()}>{clock.dayTime(c.at)}</time>: {c.action} by {authorWords(c.by)}
          {c.before ? (
            <span class="muted">
              {' '}
              (before: {String(c.before.title)}, {c.before.start instanceof Date ? clock.dayTime(c.before.start) : ''})
            </span>
          ) : null}
        </li>
      ))}
    </ul>
  );

  const editPage = async (a: PlanAccess, x: AppointmentRecord, values: Record<string, string>, faults: FieldFault[] = [], status = 200) => {
    const names = await memberNames(a.workspace._id);
    const action = `${base(a.lovedOne)}/appointments/${encodeURIComponent(x._id)}`;
    return simple(
      a.caller,
      status,
      `Change “${x.title}”`,
      <>
        {x.status === 'cancelled' ? (
          <p class="notice">This appointment was cancelled.</p>
        ) : (
          appointmentForm(a, action, values, names.list, faults, 'Save the changes')
        )}
        <h2>What changed</h2>
        {historyList(a.clock, await plans.history(x._id))}
        <p>
          <a href={`${base(a.lovedOne)}/appointments`}>Back to the appointments</a>
        </p>
      </>,
    );
  };

  const valuesOf = (x: AppointmentRecord) => {
    const start = instantToWall(x.timeZone, x.start);
    return {
      title: x.title,
      withWhom: x.withWhom ?? '',
      place: x.place ?? '',
      day: start.day,
      startTime: start.time,
      endTime: instantToWall(x.timeZone, x.end).time,
      timeZone: x.timeZone,
      takenBy: x.takenBy ?? '',
      notes: x.notes ?? '',
    };
  };

  // ---- tasks ----

  const taskLine = (a: PlanAccess, t: TaskRecord, who: (uid: string | undefined) => string) => {
    const me = a.caller.uid;
    const writer = canWrite(a.member);
    const action = `${base(a.lovedOne)}/tasks/${encodeURIComponent(t._id)}`;
    const button = (move: string, label: string, cls = 'secondary') => (
      <form method="post" action={`${action}/${move}`} class="inline">
        <button type="submit" class={cls}>
          {label}
        </button>
      </form>
    );
    return (
      <li class={`plan task-${t.state}`}>
        <p>
          <strong>{t.title}</strong> due <time dateTime={t.due.toISOString()}>{a.clock.dayTime(t.due)}</time>
        </p>
        <p class="muted">
          {t.state === 'open'
            ? 'Nobody has taken this yet'
            : t.state === 'taken'
              ? `${t.takenBy === me ? 'You are' : `${who(t.takenBy)} is`} doing this`
              : `Done by ${who(t.doneBy)}`}
          {' · '}added by {authorWords(t.createdBy)}
        </p>
        {t.notes ? <p class="entry-detail">{t.notes}</p> : null}
        {writer && t.state === 'open' ? (
          <div class="actions">
            {button('take', "I'll do it", '')}
            {button('done', 'Mark done')}
          </div>
        ) : null}
        {writer && t.state === 'taken' && t.takenBy === me ? (
          <div class="actions">
            {button('done', 'Mark done', '')}
            {button('hand-back', 'Hand it back')}
          </div>
        ) : null}
      </li>
    );
  };

  const tasksPage = async (a: PlanAccess, values: Record<string, string> = {}, faults: FieldFault[] = [], status = 200, refusal: string | null = null) => {
    const names = await memberNames(a.workspace._id);
    const [open, done] = await Promise.all([
      plans.openTasks(a.lovedOne._id),
      plans.doneSince(a.lovedOne._id, new Date(a.now.getTime() - DONE_SHOWN_DAYS * 86_400_000)),
    ]);
    const action = `${base(a.lovedOne)}/tasks`;
    const due = values.dueDay ? values : { ...values, dueDay: a.clock.isoDay(a.now) };
    return h.pageFor(
      status,
      `${a.lovedOne.displayName}: tasks`,
      <>
        <h1>{a.lovedOne.displayName}</h1>
        <CareNav lovedOne={a.lovedOne} current="tasks" />
        <ZoneNote clock={a.clock} now={a.now} />
        {refusal ? (
          <p class="error" role="alert" id="refused">
            {refusal}
          </p>
        ) : null}
        <section class="card" aria-labelledby="tasks-title">
          <h2 id="tasks-title">Open tasks</h2>
          {open.length ? (
            <ul class="plans" id="tasks">
              {open.map((t) => taskLine(a, t, names.name))}
            </ul>
          ) : (
            <p class="muted" id="tasks-none">
              No open tasks.
            </p>
          )}
        </section>
        {canWrite(a.member) ? (
          <section class="card" aria-labelledby="add-task-title">
            <h2 id="add-task-title">Ask for help</h2>
            {planForm(
              action,
              due,
              faults,
              { label: 'What needs doing', placeholder: 'Drive Mom to cardiology' },
              <>
                <TextField id="dueDay" label="Due day" type="date" required value={due.dueDay ?? ''} invalid={invalid(faults, 'dueDay')} />
                <TextField id="dueTime" label="Due time" type="time" required value={due.dueTime ?? ''} invalid={invalid(faults, 'dueTime')} />
                {zoneField(a, due.timeZone || plannedZone(a.lovedOne, a.clock.zone), faults)}
              </>,
              'Add the task',
            )}
          </section>
        ) : (
          <p class="muted">You can read the family's tasks; the primary caregiver can let you add and take things.</p>
        )}
        <section class="card" aria-labelledby="done-title">
          <h2 id="done-title">Done in the last {DONE_SHOWN_DAYS} days</h2>
          {done.length ? (
            <ul class="plans" id="tasks-done">
              {done.map((t) => taskLine(a, t, names.name))}
            </ul>
          ) : (
            <p class="muted">Nothing yet.</p>
          )}
        </section>
      </>,
      a.caller,
    );
  };

  const nameOf = async (workspaceId: string) => {
    const names = await memberNames(workspaceId);
    return async (uid: string) => names.name(uid);
  };

  return {
    appointmentsGet: async (req: HttpRequestEnvelope, p: Record<string, string>) => {
      const a = await access(req, p.lovedOneId ?? '', `/care/${encodeURIComponent(p.lovedOneId ?? '')}/appointments`, false);
      return 'caller' in a ? appointmentsPage(a) : a;
    },
    appointmentsPost: async (req: HttpRequestEnvelope, p: Record<string, string>) => {
      const a = await access(req, p.lovedOneId ?? '', `/care/${encodeURIComponent(p.lovedOneId ?? '')}/appointments`, true);
      if (!('caller' in a)) return a;
      const raw = form(req);
      const members = (await circle.members(a.workspace._id)).map((m) => m.uid);
      const checked = appointmentFromForm(raw, a.now.getTime(), members);
      if (!checked.ok) return appointmentsPage(a, formValues(raw), checked.faults, 400);
      await plans.addAppointment({ workspaceId: a.workspace._id, lovedOneId: a.lovedOne._id }, checked.value, appAuthor(a.caller));
      return redirect(`${base(a.lovedOne)}/appointments`);
    },
    appointmentEditGet: async (req: HttpRequestEnvelope, p: Record<string, string>) => {
      const a = await access(req, p.lovedOneId ?? '', `/care/${encodeURIComponent(p.lovedOneId ?? '')}/appointments`, false, true);
      if (!('caller' in a)) return a;
      const x = await plans.appointment(a.lovedOne._id, p.appointmentId ?? '');
      return x ? editPage(a, x, valuesOf(x)) : notFound(a, 'appointment');
    },
    appointmentEditPost: async (req: HttpRequestEnvelope, p: Record<string, string>) => {
      const a = await access(req, p.lovedOneId ?? '', `/care/${encodeURIComponent(p.lovedOneId ?? '')}/appointments`, true);
      if (!('caller' in a)) return a;
      const x = await plans.appointment(a.lovedOne._id, p.appointmentId ?? '');
      if (!x) return notFound(a, 'appointment');
      const raw = form(req);
      const members = (await circle.members(a.workspace._id)).map((m) => m.uid);
      const checked = appointmentFromForm(raw, a.now.getTime(), members);
      if (!checked.ok) return editPage(a, x, formValues(raw), checked.faults, 400);
      try {
        if (x.status === 'scheduled') await plans.changeAppointment(x, checked.value, appAuthor(a.caller));
      } catch (err) {
        if (err instanceof AppointmentChanged) return changedFirst(a, x);
        throw err;
      }
      return redirect(`${base(a.lovedOne)}/appointments`);
    },
    appointmentCancelGet: async (req: HttpRequestEnvelope, p: Record<string, string>) => {
      const a = await access(req, p.lovedOneId ?? '', `/care/${encodeURIComponent(p.lovedOneId ?? '')}/appointments`, false, true);
      if (!('caller' in a)) return a;
      const x = await plans.appointment(a.lovedOne._id, p.appointmentId ?? '');
      if (!x) return notFound(a, 'appointment');
      return simple(
        a.caller,
        200,
        `Cancel “${x.title}”?`,
        <>
          <p>
            Cancelling takes {a.lovedOne.displayName}'s appointment on {appointmentWhen(a.clock, x)} off the family's list and out of everyone's calendar. Its
            history stays.
          </p>
          <form method="post" action={`${base(a.lovedOne)}/appointments/${encodeURIComponent(x._id)}/cancel`}>
            <label for="reason">Why (optional)</label>
            <input id="reason" name="reason" type="text" maxLength={200} />
            <button type="submit" class="danger" id="cancel-appointment">
              Cancel the appointment
            </button>
          </form>
          <p>
            <a href={`${base(a.lovedOne)}/appointments`}>Keep it</a>
          </p>
        </>,
      );
    },
    appointmentCancelPost: async (req: HttpRequestEnvelope, p: Record<string, string>) => {
      const a = await access(req, p.lovedOneId ?? '', `/care/${encodeURIComponent(p.lovedOneId ?? '')}/appointments`, true);
      if (!('caller' in a)) return a;
      const x = await plans.appointment(a.lovedOne._id, p.appointmentId ?? '');
      if (!x) return notFound(a, 'appointment');
      const reason = field(form(req), 'reason').trim().slice(0, 200);
      try {
        await plans.cancelAppointment(x, appAuthor(a.caller), reason || undefined);
      } catch (err) {
        if (err instanceof AppointmentChanged) return changedFirst(a, x);
        throw err;
      }
      return redirect(`${base(a.lovedOne)}/appointments`);
    },
    tasksGet: async (req: HttpRequestEnvelope, p: Record<string, string>) => {
      const a = await access(req, p.lovedOneId ?? '', `/care/${encodeURIComponent(p.lovedOneId ?? '')}/tasks`, false);
      return 'caller' in a ? tasksPage(a) : a;
    },
    tasksPost: async (req: HttpRequestEnvelope, p: Record<string, string>) => {
      const a = await access(req, p.lovedOneId ?? '', `/care/${encodeURIComponent(p.lovedOneId ?? '')}/tasks`, true);
      if (!('caller' in a)) return a;
      const raw = form(req);
      const checked = taskFromForm(raw, a.now.getTime());
      if (!checked.ok)
        return tasksPage(a, Object.fromEntries(['title', 'dueDay', 'dueTime', 'timeZone', 'notes'].map((k) => [k, field(raw, k)])), checked.faults, 400);
      await plans.addTask({ workspaceId: a.workspace._id, lovedOneId: a.lovedOne._id }, checked.value, appAuthor(a.caller));
      return redirect(`${base(a.lovedOne)}/tasks`);
    },
    taskMovePost: async (req: HttpRequestEnvelope, p: Record<string, string>) => {
      const a = await access(req, p.lovedOneId ?? '', `/care/${encodeURIComponent(p.lovedOneId ?? '')}/tasks`, true);
      if (!('caller' in a)) return a;
      const move = MOVES[p.move ?? ''];
      const t = move ? await plans.task(a.lovedOne._id, p.taskId ?? '') : null;
      if (!move || !t) return notFound(a, 'task');
      try {
        await plans.move(t, move, appAuthor(a.caller), await nameOf(a.workspace._id));
      } catch (err) {
        if (err instanceof TaskRefused) return tasksPage(a, {}, [], 409, err.message);
        throw err;
      }
      return redirect(`${base(a.lovedOne)}/tasks`);
    },
  };
}
