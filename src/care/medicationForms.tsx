// The medication list in the app: every medication with its schedule and history, and the forms to
// add, change and stop one. Plain form posts (303 after each), a refused form comes back with what
// was typed and each problem named, and stopping asks first. Only members who may write see or
// use the forms; the caller, workspace and loved one are re-derived on every request.
import type { ZodError } from 'zod';
import type { SessionCaller } from '../auth/sessions.js';
import type { HttpReplyEnvelope, HttpRequestEnvelope } from '../bus/envelopes.js';
import type { AppHelpers } from '../app/helpers.js';
import { canWrite } from '../family/circle.js';
import {
  amountOf,
  changedByWords,
  fieldsOf,
  inputOf,
  MedicationConflict,
  medicationFieldsInput,
  type MedicationList,
  medicationProblems,
  type ChangedBy,
  type Medication,
  type MedicationInput,
  type MedicationVersion,
} from '../family/medications.js';
import { WEEKDAYS, type MedicationSchedule } from '../family/medSchedule.js';
import type { LovedOneRecord } from '../family/records.js';
import type { Markup } from '../http/html.js';
import { redirect } from '../http/page.js';
import { CareNav } from './parts.js';
import type { Clock } from './time.js';

type Values = Record<string, string>;

const TIME_FIELDS = ['time1', 'time2', 'time3', 'time4'] as const;
const DAY_NAMES: Record<(typeof WEEKDAYS)[number], string> = { mon: 'Mon', tue: 'Tue', wed: 'Wed', thu: 'Thu', fri: 'Fri', sat: 'Sat', sun: 'Sun' };

/** The form's words for each field the input names. */
const LABELS: Record<string, string> = {
  name: 'Name',
  strength: 'Strength',
  dose: 'Dose',
  form: 'Form',
  route: 'How it is taken',
  asNeeded: 'As needed',
  times: 'Times of day',
  days: 'Days',
  timeZone: 'Time zone',
  startDate: 'Start date',
  stopDate: 'Stop date',
  prescriber: 'Prescriber',
  note: 'Note',
  graceMinutes: 'Missed after (minutes)',
};

/** "8:00 am" from "08:00". */
export function wallTime(hhmm: string): string {
  const [h, m] = hhmm.split(':').map(Number) as [number, number];
  return `${h % 12 || 12}:${String(m).padStart(2, '0')} ${h < 12 ? 'am' : 'pm'}`;
}

/** "8:00 am and 8:00 pm, Mon and Thu (America/New_York)"; "As needed". */
export function scheduleWords(s: MedicationSchedule): string {
  if (s.asNeeded) return 'As needed';
  const list = (xs: string[]) => (xs.length < 2 ? xs.join('') : `${xs.slice(0, -1).join(', ')} and ${xs.at(-1)!}`);
  const days = s.days.length === 0 || s.days.length === 7 ? 'every day' : list(s.days.map((d) => DAY_NAMES[d]));
  return `${list(s.times.map(wallTime))}, ${days} (${s.timeZone})`;
}

const str = (v: unknown) => (typeof v === 'string' ? v : '');

/** A posted form's values, as typed (to show again when refused). */
function valuesOf(body: unknown): Values {
  const f = (body ?? {}) as Record<string, unknown>;
  return Object.fromEntries(Object.entries(f).map(([k, v]) => [k, str(v).slice(0, 2000)]));
}

/** What the form's values say, for the input schema. */
function inputFrom(v: Values): unknown {
  const opt = (k: string) => (v[k]?.trim() ? v[k] : undefined);
  return {
    name: v.name ?? '',
    strength: opt('strength'),
    dose: opt('dose'),
    form: opt('form'),
    route: opt('route'),
    asNeeded: v.asNeeded === 'yes',
    times: TIME_FIELDS.map((k) => v[k]?.trim() ?? '').filter(Boolean),
    days: WEEKDAYS.filter((d) => v[`day_${d}`] === 'yes'),
    timeZone: v.timeZone ?? '',
    startDate: opt('startDate'),
    stopDate: opt('stopDate'),
    prescriber: opt('prescriber'),
    note: opt('note'),
    graceMinutes: opt('graceMinutes') === undefined ? undefined : Number(v.graceMinutes),
  };
}

/** A stored medication as the form's values. */
function valuesFrom(m: MedicationInput, version?: number): Values {
  const v: Values = {};
  for (const k of ['name', 'strength', 'dose', 'form', 'route', 'timeZone', 'startDate', 'stopDate', 'prescriber', 'note'] as const) v[k] = m[k] ?? '';
  if (m.asNeeded) v.asNeeded = 'yes';
  m.times.forEach((t, i) => (v[`time${i + 1}`] = t));
  for (const d of m.days) v[`day_${d}`] = 'yes';
  if (m.graceMinutes !== undefined) v.graceMinutes = String(m.graceMinutes);
  if (version !== undefined) v.version = String(version);
  return v;
}

const ErrorList = ({ problems }: { problems: string[] }) => (
  <div class="error" role="alert" id="form-problems">
    <p>Please check {problems.length === 1 ? 'this field' : 'these fields'}:</p>
    <ul>
      {problems.map((p) => (
        <li>{p}</li>
      ))}
    </ul>
  </div>
);

function MedicationForm({ action, values, bad, submit }: { action: string; values: Values; bad: Set<string>; submit: string }) {
  const invalid = (k: string) => (bad.has(k) ? 'true' : undefined);
  const text = (k: string, label: string, hint?: string, max = 120) => (
    <>
      <label for={`med-${k}`}>{label}</label>
      {hint ? (
        <p class="muted hint" id={`med-${k}-hint`}>
          {hint}
        </p>
      ) : null}
      <input
        id={`med-${k}`}
        name={k}
        type="text"
        maxLength={max}
        value={values[k] ?? ''}
        aria-invalid={invalid(k)}
        aria-describedby={hint ? `med-${k}-hint` : undefined}
        required={k === 'name' ? true : undefined}
      />
    </>
  );
  return (
    <form method="post" action={action} class="med-form">
      {values.version ? <input type="hidden" name="version" value={values.version} /> : null}
      {text('name', 'Name', undefined, 120)}
      {text('strength', 'Strength', 'For example 500 mg', 60)}
      {text('dose', 'Dose', 'For example 1 tablet', 60)}
      {text('form', 'Form', 'Tablet, capsule, liquid, patch…', 40)}
      {text('route', 'How it is taken', 'By mouth, on the skin…', 40)}
      <fieldset aria-invalid={invalid('times')}>
        <legend>When it is taken</legend>
        <p class="muted">Times in the loved one's time zone. Leave the days unticked for every day.</p>
        <div class="med-times">
          {TIME_FIELDS.map((k, i) => (
            <span>
              <label for={`med-${k}`}>Time {i + 1}</label>
              <input id={`med-${k}`} name={k} type="time" value={values[k] ?? ''} aria-invalid={invalid('times')} />
            </span>
          ))}
        </div>
        <div class="med-days">
          {WEEKDAYS.map((d) => (
            <label class="check">
              <input type="checkbox" name={`day_${d}`} value="yes" checked={values[`day_${d}`] === 'yes' ? true : undefined} /> {DAY_NAMES[d]}
            </label>
          ))}
        </div>
        <label class="check">
          <input type="checkbox" name="asNeeded" value="yes" checked={values.asNeeded === 'yes' ? true : undefined} /> Only as needed (no set times)
        </label>
      </fieldset>
      {text('timeZone', 'Time zone', 'The loved one’s, for example America/New_York', 64)}
      <label for="med-startDate">Start date</label>
      <input id="med-startDate" name="startDate" type="date" value={values.startDate ?? ''} aria-invalid={invalid('startDate')} />
      <label for="med-stopDate">Stop date</label>
      <input id="med-stopDate" name="stopDate" type="date" value={values.stopDate ?? ''} aria-invalid={invalid('stopDate')} />
      {text('prescriber', 'Prescriber', undefined, 120)}
      <label for="med-graceMinutes">Missed after (minutes)</label>
      <p class="muted hint" id="med-graceMinutes-hint">
        A dose with nothing recorded this long after its time shows as missed; 60 when left empty.
      </p>
      <input
        id="med-graceMinutes"
        name="graceMinutes"
        type="number"
        min={5}
        max={240}
        value={values.graceMinutes ?? ''}
        aria-invalid={invalid('graceMinutes')}
        aria-describedby="med-graceMinutes-hint"
      />
      <label for="med-note">Note</label>
      <textarea id="med-note" name="note" rows={3} maxLength={1000} aria-invalid={invalid('note')}>
        {values.note ?? ''}
      </textarea>
      <button type="submit">{submit}</button>
    </form>
  );
}

/** One version's line in a medication's history. */
const VersionLine = ({ v, clock }: { v: MedicationVersion; clock: Clock }) => (
  <li>
    <time dateTime={v.at.toISOString()}>{clock.dayTime(v.at)}</time>: {v.change} by {changedByWords(v.by)}
    {v.change === 'stopped'
      ? v.stopReason
        ? ` (“${v.stopReason}”)`
        : ''
      : ` as ${[v.name, amountOf(v)].filter(Boolean).join(' ')}, ${scheduleWords(v.schedule)}`}
  </li>
);

function MedicationItem({ m, base, clock, writer }: { m: Medication; base: string; clock: Clock; writer: boolean }) {
  const c = m.current;
  const id = encodeURIComponent(c.medicationId);
  const details = [
    ['Form', [c.form, c.route].filter(Boolean).join(', ')],
    ['When', scheduleWords(c.schedule)],
    ['From', [c.startDate, c.stopDate ? `to ${c.stopDate}` : ''].filter(Boolean).join(' ')],
    ['Prescriber', c.prescriber ?? ''],
    ['Note', c.note ?? ''],
  ].filter(([, v]) => v);
  return (
    <li class="medication" id={`med-${c.medicationId}`}>
      <h3>
        {c.name} {amountOf(c)}
      </h3>
      <dl class="med-details">
        {details.map(([k, v]) => (
          <>
            <dt>{k}</dt>
            <dd>{v}</dd>
          </>
        ))}
      </dl>
      <p class="muted">
        {c.status === 'stopped' ? 'Stopped' : c.change === 'added' ? 'Added' : 'Changed'} {clock.dayTime(c.at)} by {changedByWords(c.by)}
        {c.stopReason ? `: “${c.stopReason}”` : ''}
      </p>
      {writer ? (
        <p class="med-actions">
          <a href={`${base}/${id}/edit`}>{c.status === 'stopped' ? `Start ${c.name} again` : `Change ${c.name}`}</a>
          {c.status === 'active' ? (
            <>
              {' · '}
              <a href={`${base}/${id}/stop`}>Stop {c.name}</a>
            </>
          ) : null}
        </p>
      ) : null}
      {m.history.length ? (
        <details>
          <summary>Earlier versions ({m.history.length})</summary>
          <ol reversed>
            {[m.current, ...m.history].map((v) => (
              <VersionLine v={v} clock={clock} />
            ))}
          </ol>
        </details>
      ) : null}
    </li>
  );
}

export function medicationListRoutes(h: AppHelpers, list: MedicationList) {
  const page = (caller: SessionCaller, status: number, title: string, body: Markup) => h.pageFor(status, title, <>{body}</>, caller);

  const notFound = (caller: SessionCaller, what = 'loved one') =>
    page(
      caller,
      404,
      'Not found',
      <>
        <h1>No such {what} in your workspace</h1>
        <section class="card">
          <p>
            Pick a loved one from <a href="/">your workspace</a>.
          </p>
        </section>
      </>,
    );

  interface Ctx {
    caller: SessionCaller;
    lovedOne: LovedOneRecord;
    writer: boolean;
    clock: Clock;
    base: string;
    by: ChangedBy;
  }

  /** The caller, their loved one and whether they may write; else the reply to give. */
  const open = async (req: HttpRequestEnvelope, params: Record<string, string>, change: boolean, suffix = ''): Promise<Ctx | HttpReplyEnvelope> => {
    const id = params.lovedOneId ?? '';
    const base = `/care/${encodeURIComponent(id)}/medication-list`;
    const caller = await h.currentCaller(req);
    if (!caller) return change ? redirect(`/signin?next=${encodeURIComponent(base + suffix)}`) : h.signedOutPage(base + suffix);
    const membership = await h.store.workspaceOf(caller.uid);
    if (!membership) return redirect('/onboarding');
    const lovedOne = await h.store.lovedOneIn(membership.workspace._id, id);
    if (!lovedOne) return notFound(caller);
    const name = caller.name?.trim() || caller.email.split('@')[0]!;
    return {
      caller,
      lovedOne,
      writer: canWrite(membership.member),
      clock: await h.clockFor(caller, req),
      base,
      by: { uid: caller.uid, name, how: 'app' },
    };
  };

  /** `open`, and the caller must be allowed to write. */
  const openWriter = async (req: HttpRequestEnvelope, params: Record<string, string>, change: boolean, suffix: string) => {
    const c = await open(req, params, change, suffix);
    if (!('caller' in c) || c.writer) return c;
    return page(
      c.caller,
      403,
      'You can only read this list',
      <>
        <h1>You can only read {c.lovedOne.displayName}'s medications</h1>
        <section class="card">
          <p id="read-only">The primary caregiver has set your access to reading only. Ask them to let you add and change things.</p>
          <p>
            <a href={c.base}>Back to the medication list</a>
          </p>
        </section>
      </>,
    );
  };

  const withMedication = async (c: Ctx, params: Record<string, string>) => list.one(c.lovedOne._id, params.medicationId ?? '');

  /** The zone a new medication's times are meant in: the loved one's; for a loved one without one
   *  yet, the list's, else the viewer's. */
  const zoneFor = async (c: Ctx) => c.lovedOne.timeZone ?? (await list.list(c.lovedOne._id))[0]?.current.schedule.timeZone ?? c.clock.zone;

  const formPage = (
    c: Ctx,
    status: number,
    title: string,
    action: string,
    values: Values,
    submit: string,
    problems: string[] = [],
    bad = new Set<string>(),
    lead: Markup = null,
  ) =>
    page(
      c.caller,
      status,
      title,
      <>
        <h1>{title}</h1>
        <section class="card">
          {lead}
          {problems.length ? <ErrorList problems={problems} /> : null}
          <MedicationForm action={action} values={values} bad={bad} submit={submit} />
          <p>
            <a href={c.base}>Back to the medication list</a>
          </p>
        </section>
      </>,
    );

  /** The form's input, or the page that refuses it with what was typed. */
  const parse = (req: HttpRequestEnvelope) => {
    const values = valuesOf(req.body);
    const parsed = medicationFieldsInput.safeParse(inputFrom(values));
    return { values, parsed };
  };
  const problemsOf = (err: ZodError) => ({
    problems: medicationProblems(err, (f) => LABELS[f] ?? f),
    bad: new Set(err.issues.map((i) => String(i.path[0] ?? ''))),
  });

  return {
    listPage: async (req: HttpRequestEnvelope, params: Record<string, string>) => {
      const c = await open(req, params, false);
      if (!('caller' in c)) return c;
      const meds = await list.list(c.lovedOne._id);
      const active = meds.filter((m) => m.current.status === 'active');
      const stopped = meds.filter((m) => m.current.status === 'stopped');
      const l = c.lovedOne;
      return page(
        c.caller,
        200,
        `${l.displayName}: medication list`,
        <>
          <h1>{l.displayName}'s medication list</h1>
          <CareNav lovedOne={l} current="medications" />
          <p>
            <a href={`/care/${encodeURIComponent(l._id)}/medications`}>Today's doses and history</a>
          </p>
          <section class="card" aria-labelledby="meds-active-title">
            <h2 id="meds-active-title">Taking now</h2>
            {c.writer ? (
              <p>
                <a href={`${c.base}/new`} id="add-medication">
                  Add a medication
                </a>
              </p>
            ) : (
              <p class="muted" id="read-only">
                You can read this list; the primary caregiver decides who can change it.
              </p>
            )}
            {active.length ? (
              <ul class="medications" id="medications-active">
                {active.map((m) => (
                  <MedicationItem m={m} base={c.base} clock={c.clock} writer={c.writer} />
                ))}
              </ul>
            ) : (
              <p class="muted" id="medications-none">
                No medications on the list yet. Once one is added with its times, today's doses follow its schedule.
              </p>
            )}
          </section>
          {stopped.length ? (
            <section class="card" aria-labelledby="meds-stopped-title">
              <h2 id="meds-stopped-title">Stopped</h2>
              <ul class="medications" id="medications-stopped">
                {stopped.map((m) => (
                  <MedicationItem m={m} base={c.base} clock={c.clock} writer={c.writer} />
                ))}
              </ul>
            </section>
          ) : null}
        </>,
      );
    },

    addPage: async (req: HttpRequestEnvelope, params: Record<string, string>) => {
      const c = await openWriter(req, params, false, '/new');
      if (!('caller' in c)) return c;
      return formPage(c, 200, `Add a medication for ${c.lovedOne.displayName}`, `${c.base}/new`, { timeZone: await zoneFor(c) }, 'Add the medication');
    },

    add: async (req: HttpRequestEnvelope, params: Record<string, string>) => {
      const c = await openWriter(req, params, true, '/new');
      if (!('caller' in c)) return c;
      const { values, parsed } = parse(req);
      if (!parsed.success) {
        const { problems, bad } = problemsOf(parsed.error);
        return formPage(c, 400, `Add a medication for ${c.lovedOne.displayName}`, `${c.base}/new`, values, 'Add the medication', problems, bad);
      }
      await list.add(c.lovedOne, fieldsOf(parsed.data), c.by);
      return redirect(c.base);
    },

    editPage: async (req: HttpRequestEnvelope, params: Record<string, string>) => {
      const c = await openWriter(req, params, false, `/${encodeURIComponent(params.medicationId ?? '')}/edit`);
      if (!('caller' in c)) return c;
      const m = await withMedication(c, params);
      if (!m) return notFound(c.caller, 'medication');
      const action = `${c.base}/${encodeURIComponent(m.current.medicationId)}/edit`;
      return formPage(c, 200, `Change ${m.current.name}`, action, valuesFrom(inputOf(m.current), m.current.version), 'Save the change');
    },

    edit: async (req: HttpRequestEnvelope, params: Record<string, string>) => {
      const c = await openWriter(req, params, true, `/${encodeURIComponent(params.medicationId ?? '')}/edit`);
      if (!('caller' in c)) return c;
      const m = await withMedication(c, params);
      if (!m) return notFound(c.caller, 'medication');
      const action = `${c.base}/${encodeURIComponent(m.current.medicationId)}/edit`;
      const { values, parsed } = parse(req);
      if (!parsed.success) {
        const { problems, bad } = problemsOf(parsed.error);
        return formPage(c, 400, `Change ${m.current.name}`, action, values, 'Save the change', problems, bad);
      }
      try {
        await list.change(m, fieldsOf(parsed.data), c.by, Number(values.version) || m.current.version);
      } catch (err) {
        if (!(err instanceof MedicationConflict)) throw err;
        const lead = (
          <p class="notice" id="changed-meanwhile">
            {changedByWords(err.current.by)} changed {err.current.name} while you were editing. Your changes are below: check them against the list and save
            again.
          </p>
        );
        return formPage(
          c,
          409,
          `Change ${m.current.name}`,
          action,
          { ...values, version: String(err.current.version) },
          'Save the change',
          [],
          new Set(),
          lead,
        );
      }
      return redirect(c.base);
    },

    stopPage: async (req: HttpRequestEnvelope, params: Record<string, string>) => {
      const c = await openWriter(req, params, false, `/${encodeURIComponent(params.medicationId ?? '')}/stop`);
      if (!('caller' in c)) return c;
      const m = await withMedication(c, params);
      if (!m) return notFound(c.caller, 'medication');
      const what = [m.current.name, amountOf(m.current)].filter(Boolean).join(' ');
      return page(
        c.caller,
        m.current.status === 'stopped' ? 409 : 200,
        `Stop ${what}?`,
        <>
          <h1>
            Stop {what} for {c.lovedOne.displayName}?
          </h1>
          <section class="card">
            {m.current.status === 'stopped' ? (
              <p class="notice">It is already stopped.</p>
            ) : (
              <>
                <p>No more doses of it fall due from now on. It stays on the list under “Stopped”, with its history, and can be started again.</p>
                <form method="post" action={`${c.base}/${encodeURIComponent(m.current.medicationId)}/stop`}>
                  <input type="hidden" name="version" value={String(m.current.version)} />
                  <label for="stop-reason">Why (optional)</label>
                  <input id="stop-reason" name="reason" type="text" maxLength={300} />
                  <button type="submit" class="danger" id="stop">
                    Stop {what}
                  </button>
                </form>
              </>
            )}
            <p>
              <a href={c.base}>Keep {m.current.name}</a>
            </p>
          </section>
        </>,
      );
    },

    stop: async (req: HttpRequestEnvelope, params: Record<string, string>) => {
      const c = await openWriter(req, params, true, `/${encodeURIComponent(params.medicationId ?? '')}/stop`);
      if (!('caller' in c)) return c;
      const m = await withMedication(c, params);
      if (!m) return notFound(c.caller, 'medication');
      const values = valuesOf(req.body);
      if (m.current.status === 'stopped') return redirect(c.base);
      const reason = values.reason?.trim().slice(0, 300) || undefined;
      try {
        await list.stop(m, reason, c.by, Number(values.version) || m.current.version);
      } catch (err) {
        if (!(err instanceof MedicationConflict)) throw err;
        return page(
          c.caller,
          409,
          'Changed meanwhile',
          <>
            <h1>{m.current.name} was changed meanwhile</h1>
            <section class="card">
              <p id="changed-meanwhile">
                {changedByWords(err.current.by)} changed it while you were looking. Nothing was stopped: <a href={c.base}>look at the list</a> and stop it again
                if it still should be.
              </p>
            </section>
          </>,
        );
      }
      return redirect(c.base);
    },
  };
}
