// The family's own entries in the app: the forms that add a note, a dose, a reading or how the day
// went; an entry's page with every version; correcting it and withdrawing it after a confirmation.
// Plain form posts that work without script: a refused form comes back with what was typed and
// the field named; a stored one answers 303 to the page that shows it.
import type { HttpReplyEnvelope, HttpRequestEnvelope } from '../bus/envelopes.js';
import type { AppHelpers } from '../app/helpers.js';
import { careWords, authorOf } from '../family/careEventTypes.js';
import { canWrite } from '../family/circle.js';
import {
  DOSE_STATUSES,
  ENTRY_KINDS,
  EntryChanged,
  EntryInvalid,
  EntryNotFound,
  FamilyEntries,
  fieldsOf,
  HOME_VITALS,
  homeVitalLabel,
  kindOf,
  MOODS,
  NotYourEntry,
  ReadOnlyMember,
  WITHDRAWN,
  type EntryAuthor,
  type EntryKind,
} from '../family/entries.js';
import type { CareEventRecord, LovedOneRecord, MemberRecord } from '../family/records.js';
import type { Markup } from '../http/html.js';
import { redirect } from '../http/page.js';
import { newId } from '../store/ids.js';
import type { SessionCaller } from '../auth/sessions.js';
import type { Clock } from './time.js';

const KIND_TITLES: Record<EntryKind, { title: string; button: string }> = {
  note: { title: 'Add a note', button: 'Add the note' },
  dose: { title: 'Log a dose', button: 'Log the dose' },
  reading: { title: 'Record a reading taken at home', button: 'Record the reading' },
  day: { title: 'How the day went', button: 'Save how the day went' },
};

/** The words a refusal names each field by, as its label reads. */
const LABELS: Record<string, string> = {
  text: 'Note',
  mood: 'Mood',
  status: 'What happened',
  medication: 'Medication',
  amount: 'Dose',
  unit: 'Unit',
  reason: 'Reason',
  kind: 'What was measured',
  value: 'Reading',
  second: 'Lower number',
  at: 'When',
};

const ALL_UNITS = [...new Set(Object.values(HOME_VITALS).flatMap((v) => Object.keys(v.units)))];

export const entryPath = (lovedOneId: string, id?: string, action?: string) =>
  `/care/${encodeURIComponent(lovedOneId)}${id ? `/entries/${encodeURIComponent(id)}${action ? `/${action}` : ''}` : ''}`;
export const addPath = (lovedOneId: string, kind: EntryKind) => `/care/${encodeURIComponent(lovedOneId)}/add/${kind}`;

/** "2026-11-27T18:30" in the clock's zone, for a datetime-local input. */
function localInput(clock: Clock, d: Date): string {
  const hm = new Intl.DateTimeFormat('en-GB', { timeZone: clock.zone, hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }).format(d);
  return `${clock.isoDay(d)}T${hm}`;
}

/** The instant of a datetime-local value in the clock's zone; undefined when empty, EntryInvalid when not a time. */
export function fromLocalInput(clock: Clock, value: unknown): Date | undefined {
  const v = typeof value === 'string' ? value.trim() : '';
  if (!v) return undefined;
  const m = /^(\d{4}-\d{2}-\d{2})T(\d{2}):(\d{2})$/.exec(v);
  const start = m ? clock.startOf(m[1]!) : null;
  if (!m || !start || Number(m[2]) > 23 || Number(m[3]) > 59) throw new EntryInvalid('at', 'must be a date and a time, like 2026-11-27T18:30');
  const guess = new Date(start.getTime() + (Number(m[2]) * 60 + Number(m[3])) * 60_000);
  // A day with a clock change: the wall time after it is an hour off from midnight's offset.
  const shown = localInput(clock, guess);
  return shown === v ? guess : new Date(guess.getTime() + (Date.parse(`${v}:00Z`) - Date.parse(`${shown}:00Z`)));
}

const Field = ({ name, error, children }: { name: string; error?: EntryInvalid | null; children: Markup }) => (
  <div class={`field${error?.field === name ? ' invalid' : ''}`}>{children}</div>
);

/** The fields of one kind of entry, filled with `values` (what was typed, or the entry corrected). */
function entryFields(kind: EntryKind, values: Record<string, string>, clock: Clock, now: Date, error: EntryInvalid | null): Markup {
  const v = (k: string) => values[k] ?? '';
  const invalid = (k: string) => (error?.field === k ? { 'aria-invalid': true as const, 'aria-describedby': 'entry-error' } : {});
  const at = (
    <Field name="at" error={error}>
      <label for="at">When</label>
      <input id="at" name="at" type="datetime-local" value={v('at') || localInput(clock, now)} {...invalid('at')} />
      <p class="muted hint">In {clock.zone}.</p>
    </Field>
  );
  switch (kind) {
    case 'note':
    case 'day':
      return (
        <>
          <Field name="text" error={error}>
            <label for="text">{kind === 'note' ? 'Note' : 'How did the day go?'}</label>
            <textarea id="text" name="text" rows={5} maxLength={5000} required {...invalid('text')}>
              {v('text')}
            </textarea>
          </Field>
          {kind === 'day' ? (
            <Field name="mood" error={error}>
              <label for="mood">Mood (optional)</label>
              <select id="mood" name="mood" {...invalid('mood')}>
                <option value="">Not said</option>
                {Object.entries(MOODS).map(([key, label]) => (
                  <option value={key} selected={v('mood') === key}>
                    {label}
                  </option>
                ))}
              </select>
            </Field>
          ) : null}
          {at}
        </>
      );
    case 'dose':
      return (
        <>
          <Field name="status" error={error}>
            <label for="status">What happened</label>
            <select id="status" name="status" {...invalid('status')}>
              {(Object.keys(DOSE_STATUSES) as (keyof typeof DOSE_STATUSES)[]).map((s) => (
                <option value={s} selected={(v('status') || 'given') === s}>
                  {s === 'given' ? 'Given' : s === 'missed' ? 'Missed' : 'Refused'}
                </option>
              ))}
            </select>
          </Field>
          <Field name="medication" error={error}>
            <label for="medication">Medication</label>
            <input id="medication" name="medication" type="text" maxLength={200} required value={v('medication')} {...invalid('medication')} />
          </Field>
          <Field name="amount" error={error}>
            <label for="amount">Dose (optional)</label>
            <input id="amount" name="amount" type="text" inputmode="decimal" value={v('amount')} {...invalid('amount')} />
          </Field>
          <Field name="unit" error={error}>
            <label for="unit">Unit (optional, like mg or tablet)</label>
            <input id="unit" name="unit" type="text" maxLength={50} value={v('unit')} {...invalid('unit')} />
          </Field>
          <Field name="reason" error={error}>
            <label for="reason">Reason, if missed or refused (optional)</label>
            <input id="reason" name="reason" type="text" maxLength={500} value={v('reason')} {...invalid('reason')} />
          </Field>
          {at}
        </>
      );
    case 'reading':
      return (
        <>
          <Field name="kind" error={error}>
            <label for="kind">What was measured</label>
            <select id="kind" name="kind" {...invalid('kind')}>
              {Object.entries(HOME_VITALS).map(([key, spec]) => (
                <option value={key} selected={v('kind') === key}>
                  {homeVitalLabel(key)} ({Object.keys(spec.units).join(' or ')})
                </option>
              ))}
            </select>
          </Field>
          <Field name="value" error={error}>
            <label for="value">Reading (for blood pressure, the upper number)</label>
            <input id="value" name="value" type="text" inputmode="decimal" required value={v('value')} {...invalid('value')} />
          </Field>
          <Field name="second" error={error}>
            <label for="second">Lower number (blood pressure only)</label>
            <input id="second" name="second" type="text" inputmode="decimal" value={v('second')} {...invalid('second')} />
          </Field>
          <Field name="unit" error={error}>
            <label for="unit">Unit</label>
            <select id="unit" name="unit" {...invalid('unit')}>
              {ALL_UNITS.map((u) => (
                <option value={u} selected={v('unit') === u}>
                  {u}
                </option>
              ))}
            </select>
          </Field>
          {at}
        </>
      );
  }
}

const errorLine = (error: EntryInvalid | null) =>
  error ? (
    <p class="error" role="alert" id="entry-error">
      {LABELS[error.field] ?? error.field}: {error.problem}
    </p>
  ) : null;

/** A form for one kind of entry, posting to `action`; `formId` makes a repeated post store it once. */
function entryForm(o: {
  kind: EntryKind;
  action: string;
  values: Record<string, string>;
  clock: Clock;
  now: Date;
  error: EntryInvalid | null;
  button: string;
  formId: string;
}): Markup {
  return (
    <form method="post" action={o.action} id="entry-form" class="entry-form">
      {errorLine(o.error)}
      <input type="hidden" name="formId" value={o.formId} />
      {entryFields(o.kind, o.values, o.clock, o.now, o.error)}
      <button type="submit">{o.button}</button>
    </form>
  );
}

/** The loved one's page's "Add to the record" card: the note form, and links to the other forms;
 *  for a reader, the plain reason they cannot. */
export function AddCard({ lovedOne, member, clock, now }: { lovedOne: LovedOneRecord; member: MemberRecord | null; clock: Clock; now: Date }) {
  if (!member || !canWrite(member))
    return (
      <section class="card" id="add-entry" aria-labelledby="add-title">
        <h2 id="add-title">Add to the record</h2>
        <p class="muted">You can read this record. The primary caregiver decides who can add to it, on the Family circle page.</p>
      </section>
    );
  return (
    <section class="card" id="add-entry" aria-labelledby="add-title">
      <h2 id="add-title">Add to the record</h2>
      {entryForm({
        kind: 'note',
        action: addPath(lovedOne._id, 'note'),
        values: {},
        clock,
        now,
        error: null,
        button: KIND_TITLES.note.button,
        formId: newId('fe'),
      })}
      <ul class="add-links">
        {(['dose', 'reading', 'day'] as const).map((k) => (
          <li>
            <a href={addPath(lovedOne._id, k)}>{KIND_TITLES[k].title}</a>
          </li>
        ))}
      </ul>
    </section>
  );
}

/** The app's handlers for entries; `scope` finds the caller, their membership and the loved one, or the page to show instead. */
export function entryHandlers(
  h: AppHelpers,
  scope: (
    req: HttpRequestEnvelope,
    params: Record<string, string>,
    path: string,
  ) => Promise<{ caller: SessionCaller; member: MemberRecord; lovedOne: LovedOneRecord; clock: Clock; now: Date } | HttpReplyEnvelope>,
) {
  const entries = new FamilyEntries(h.timelines);
  const isReply = (x: object): x is HttpReplyEnvelope => 'status' in x;
  const body = (req: HttpRequestEnvelope) =>
    Object.fromEntries(Object.entries((req.body ?? {}) as Record<string, unknown>).map(([k, v]) => [k, typeof v === 'string' ? v : '']));
  const authorFor = async (caller: SessionCaller): Promise<EntryAuthor> => {
    const user = await h.store.user(caller.uid);
    return { uid: caller.uid, name: user?.name?.trim() || caller.name?.trim() || caller.email, via: 'app' };
  };
  const back = (lovedOne: LovedOneRecord) => (
    <p>
      <a href={entryPath(lovedOne._id)}>Back to {lovedOne.displayName}'s page</a>
    </p>
  );
  const notice = (caller: SessionCaller, status: number, title: string, text: string, lovedOne: LovedOneRecord) =>
    h.pageFor(
      status,
      title,
      <>
        <h1>{title}</h1>
        <section class="card">
          <p id="notice">{text}</p>
          {back(lovedOne)}
        </section>
      </>,
      caller,
    );
  /** A refusal that is not about one field, as its own page. */
  const refused = (s: { caller: SessionCaller; lovedOne: LovedOneRecord }, err: unknown): HttpReplyEnvelope => {
    if (err instanceof ReadOnlyMember) return notice(s.caller, 403, 'You can only read this record', err.message, s.lovedOne);
    if (err instanceof NotYourEntry) return notice(s.caller, 403, 'Not your entry', err.message, s.lovedOne);
    if (err instanceof EntryNotFound)
      return notice(s.caller, 404, 'No such entry', 'There is no family entry with that id for this loved one. Agency events cannot be changed.', s.lovedOne);
    if (err instanceof EntryChanged)
      return notice(
        s.caller,
        409,
        'Already changed',
        'This entry was corrected or withdrawn since you opened it. Open it again to see the newest version.',
        s.lovedOne,
      );
    throw err;
  };
  const formPage = (
    s: { caller: SessionCaller; lovedOne: LovedOneRecord; clock: Clock; now: Date },
    status: number,
    title: string,
    form: Markup,
    lead: Markup = null,
  ) =>
    h.pageFor(
      status,
      `${s.lovedOne.displayName}: ${title}`,
      <>
        <h1>{title}</h1>
        <section class="card">
          <p class="muted">For {s.lovedOne.displayName}. The family sees that you wrote it, in the app.</p>
          {lead}
          {form}
        </section>
        {back(s.lovedOne)}
      </>,
      s.caller,
    );
  const kindParam = (params: Record<string, string>): EntryKind | null =>
    (ENTRY_KINDS as readonly string[]).includes(params.kind ?? '') ? (params.kind as EntryKind) : null;

  return {
    addGet: async (req: HttpRequestEnvelope, params: Record<string, string>) => {
      const s = await scope(req, params, addPath(params.lovedOneId ?? '', kindParam(params) ?? 'note'));
      if (isReply(s)) return s;
      const kind = kindParam(params);
      if (!kind) return notice(s.caller, 404, 'Not found', 'There is no such kind of entry.', s.lovedOne);
      if (!canWrite(s.member)) return refused(s, new ReadOnlyMember());
      const t = KIND_TITLES[kind];
      return formPage(
        s,
        200,
        t.title,
        entryForm({ kind, action: addPath(s.lovedOne._id, kind), values: {}, clock: s.clock, now: s.now, error: null, button: t.button, formId: newId('fe') }),
      );
    },
    addPost: async (req: HttpRequestEnvelope, params: Record<string, string>) => {
      const s = await scope(req, params, addPath(params.lovedOneId ?? '', kindParam(params) ?? 'note'));
      if (isReply(s)) return s;
      const kind = kindParam(params);
      if (!kind) return notice(s.caller, 404, 'Not found', 'There is no such kind of entry.', s.lovedOne);
      const values = body(req);
      const formId = /^fe_[a-z2-7]{20}$/.test(values.formId ?? '') ? values.formId! : newId('fe');
      try {
        const at = fromLocalInput(s.clock, values.at);
        const entry = await entries.add(s.member, s.lovedOne, kind, nonEmpty(values), await authorFor(s.caller), { id: formId, ...(at ? { at } : {}) });
        return redirect(`${entryPath(s.lovedOne._id)}#entry-${encodeURIComponent(entry._id)}`);
      } catch (err) {
        if (!(err instanceof EntryInvalid)) return refused(s, err);
        const t = KIND_TITLES[kind];
        return formPage(
          s,
          400,
          t.title,
          entryForm({ kind, action: addPath(s.lovedOne._id, kind), values, clock: s.clock, now: s.now, error: err, button: t.button, formId }),
        );
      }
    },
    show: async (req: HttpRequestEnvelope, params: Record<string, string>) => {
      const s = await scope(req, params, entryPath(params.lovedOneId ?? '', params.entryId ?? ''));
      if (isReply(s)) return s;
      const entry = await entries.entry(s.lovedOne, params.entryId ?? '');
      if (!entry) return refused(s, new EntryNotFound(params.entryId ?? ''));
      const versions = await h.store.withFormerMembers(await entries.history(s.lovedOne, entry._id));
      const current = versions.at(-1)!;
      const changeable = current.eventType !== WITHDRAWN && canWrite(s.member) && (s.member.role === 'caregiver' || current.author?.uid === s.caller.uid);
      return h.pageFor(
        200,
        `${s.lovedOne.displayName}: an entry`,
        <>
          <h1>An entry on {s.lovedOne.displayName}'s record</h1>
          <section class="card" aria-labelledby="versions-title">
            <h2 id="versions-title">{versions.length > 1 ? 'Every version, oldest first' : 'The entry'}</h2>
            <ol id="versions" class="versions">
              {versions.map((v, i) => (
                <VersionView
                  e={v}
                  clock={s.clock}
                  label={i === 0 ? 'Written' : v.eventType === WITHDRAWN ? 'Withdrawn' : 'Corrected'}
                  current={i === versions.length - 1}
                />
              ))}
            </ol>
            {changeable ? (
              <p>
                <a href={entryPath(s.lovedOne._id, current._id, 'correct')} id="correct">
                  Correct this entry
                </a>
                {' · '}
                <a href={entryPath(s.lovedOne._id, current._id, 'withdraw')} id="withdraw">
                  Withdraw this entry
                </a>
              </p>
            ) : null}
          </section>
          {back(s.lovedOne)}
        </>,
        s.caller,
      );
    },
    correctGet: async (req: HttpRequestEnvelope, params: Record<string, string>) => {
      const s = await scope(req, params, entryPath(params.lovedOneId ?? '', params.entryId ?? '', 'correct'));
      if (isReply(s)) return s;
      const entry = await entries.entry(s.lovedOne, params.entryId ?? '');
      const kind = entry ? kindOf(entry) : null;
      if (!entry || !kind) return refused(s, new EntryNotFound(params.entryId ?? ''));
      if (!canWrite(s.member)) return refused(s, new ReadOnlyMember());
      if (entry.supersededBy) return refused(s, new EntryChanged(entry._id, entry.supersededBy));
      const values = { ...fieldsOf(entry), at: localInput(s.clock, entry.occurredAt) };
      return formPage(
        s,
        200,
        'Correct an entry',
        entryForm({
          kind,
          action: entryPath(s.lovedOne._id, entry._id, 'correct'),
          values,
          clock: s.clock,
          now: s.now,
          error: null,
          button: 'Save the correction',
          formId: newId('fe'),
        }),
        <p>The entry as it was stays in its history, for everyone to see.</p>,
      );
    },
    correctPost: async (req: HttpRequestEnvelope, params: Record<string, string>) => {
      const s = await scope(req, params, entryPath(params.lovedOneId ?? '', params.entryId ?? '', 'correct'));
      if (isReply(s)) return s;
      const id = params.entryId ?? '';
      const values = body(req);
      const formId = /^fe_[a-z2-7]{20}$/.test(values.formId ?? '') ? values.formId! : newId('fe');
      try {
        const before = await entries.entry(s.lovedOne, id);
        // The time as shown on the form, unchanged: the entry keeps its own (to the second).
        const at = before && values.at === localInput(s.clock, before.occurredAt) ? undefined : fromLocalInput(s.clock, values.at);
        const newer = await entries.correct(s.member, s.lovedOne, id, nonEmpty(values), await authorFor(s.caller), { newId: formId, ...(at ? { at } : {}) });
        return redirect(entryPath(s.lovedOne._id, newer._id));
      } catch (err) {
        if (!(err instanceof EntryInvalid)) return refused(s, err);
        const entry = await entries.entry(s.lovedOne, id);
        const kind = entry ? kindOf(entry) : null;
        if (!kind) return refused(s, new EntryNotFound(id));
        return formPage(
          s,
          400,
          'Correct an entry',
          entryForm({
            kind,
            action: entryPath(s.lovedOne._id, id, 'correct'),
            values,
            clock: s.clock,
            now: s.now,
            error: err,
            button: 'Save the correction',
            formId,
          }),
        );
      }
    },
    withdrawGet: async (req: HttpRequestEnvelope, params: Record<string, string>) => {
      const s = await scope(req, params, entryPath(params.lovedOneId ?? '', params.entryId ?? '', 'withdraw'));
      if (isReply(s)) return s;
      const entry = await entries.entry(s.lovedOne, params.entryId ?? '');
      if (!entry || !kindOf(entry)) return refused(s, new EntryNotFound(params.entryId ?? ''));
      if (!canWrite(s.member)) return refused(s, new ReadOnlyMember());
      if (entry.supersededBy) return refused(s, new EntryChanged(entry._id, entry.supersededBy));
      return withdrawPage(s, entry, '', null, 200);
    },
    withdrawPost: async (req: HttpRequestEnvelope, params: Record<string, string>) => {
      const s = await scope(req, params, entryPath(params.lovedOneId ?? '', params.entryId ?? '', 'withdraw'));
      if (isReply(s)) return s;
      const id = params.entryId ?? '';
      const values = body(req);
      const formId = /^fe_[a-z2-7]{20}$/.test(values.formId ?? '') ? values.formId! : newId('fe');
      try {
        const withdrawal = await entries.withdraw(s.member, s.lovedOne, id, values.reason ?? '', await authorFor(s.caller), { newId: formId });
        return redirect(entryPath(s.lovedOne._id, withdrawal._id));
      } catch (err) {
        if (!(err instanceof EntryInvalid)) return refused(s, err);
        const entry = await entries.entry(s.lovedOne, id);
        if (!entry) return refused(s, new EntryNotFound(id));
        return withdrawPage(s, entry, values.reason ?? '', err, 400, formId);
      }
    },
  };

  function withdrawPage(
    s: { caller: SessionCaller; lovedOne: LovedOneRecord; clock: Clock },
    entry: CareEventRecord,
    reason: string,
    error: EntryInvalid | null,
    status: number,
    formId = newId('fe'),
  ) {
    const action = entryPath(s.lovedOne._id, entry._id, 'withdraw');
    return h.pageFor(
      status,
      `${s.lovedOne.displayName}: withdraw an entry`,
      <>
        <h1>Withdraw this entry?</h1>
        <section class="card">
          <p>
            <strong>{careWords(entry, s.clock).line}</strong> ({s.clock.dayTime(entry.occurredAt)})
          </p>
          <ul>
            <li>The timeline shows it as withdrawn by you, with your reason.</li>
            <li>What it said stays in its history, for everyone in the family circle to read.</li>
            <li>It cannot be put back; you can add a new entry instead.</li>
          </ul>
          <form method="post" action={action}>
            {errorLine(error)}
            <input type="hidden" name="formId" value={formId} />
            <label for="reason">Why is it withdrawn?</label>
            <textarea
              id="reason"
              name="reason"
              rows={3}
              maxLength={500}
              required
              {...(error ? { 'aria-invalid': true as const, 'aria-describedby': 'entry-error' } : {})}
            >
              {reason}
            </textarea>
            <button type="submit" class="danger" id="confirm-withdraw">
              Yes, withdraw it
            </button>
          </form>
          <p>
            <a href={entryPath(s.lovedOne._id, entry._id)}>No, keep it</a>
          </p>
        </section>
      </>,
      s.caller,
    );
  }
}

/** Form values with the empty optional fields left out, as the entry schemas read them. */
const nonEmpty = (values: Record<string, string>): Record<string, string> =>
  Object.fromEntries(Object.entries(values).filter(([k, v]) => k !== 'formId' && k !== 'at' && v.trim() !== ''));

function VersionView({ e, clock, label, current }: { e: CareEventRecord; clock: Clock; label: string; current: boolean }) {
  const words = careWords(e, clock);
  return (
    <li class={`version${current ? ' current' : ''}`} id={`version-${e._id}`}>
      <p>
        <strong>{label}</strong> by {authorOf(e)}, {clock.dayTime(e.receivedAt)}
        {current ? '' : ' (no longer current)'}
      </p>
      <p class="entry-line">{words.group === 'notes' ? (words.headline ?? words.line) : words.line}</p>
      {words.detail && words.group === 'notes' ? <p class="entry-detail">{words.detail}</p> : null}
    </li>
  );
}
