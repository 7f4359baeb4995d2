// The alerts' app pages, plain forms that work without script: a member's alert settings per loved
// one (each kind right away, in a digest or never; quiet hours; the digest's day and hour), the
// reading ranges a member who may write sets on a loved one, and the unsubscribe link's page.
import type { Db } from 'mongodb';
import type { Credentials } from '../auth/credentials.js';
import type { SessionCaller } from '../auth/sessions.js';
import type { HttpReplyEnvelope, HttpRequestEnvelope } from '../bus/envelopes.js';
import type { AppHelpers } from '../app/helpers.js';
import { errorBox } from '../app/settings.js';
import { canWrite } from '../family/circle.js';
import { homeVitalLabel, HOME_VITALS } from '../family/entries.js';
import { WEEKDAYS, type Weekday } from '../family/medSchedule.js';
import type { LovedOneRecord } from '../family/records.js';
import type { Markup } from '../http/html.js';
import { redirect } from '../http/page.js';
import { ALERT_KINDS, DELIVERY_MODES, KIND_NAMES, MODE_LABELS, type AlertKind, type DeliveryMode } from './kinds.js';
import { LinkRefused, type UnsubscribeLinks } from './links.js';
import { PreferenceInvalid, type AlertPreferences, type PreferenceStore } from './preferences.js';
import { RangeInvalid, RANGE_VITALS, type RangeStore, type ReadingRange } from './ranges.js';

const DAY_NAMES: Record<Weekday, string> = { mon: 'Monday', tue: 'Tuesday', wed: 'Wednesday', thu: 'Thursday', fri: 'Friday', sat: 'Saturday', sun: 'Sunday' };
const FIELD_LABELS: Record<string, string> = {
  zone: 'Time zone',
  'quiet.start': 'Quiet hours from',
  'quiet.end': 'Quiet hours until',
  digestDay: 'Weekly digest day',
  digestHour: 'Digest hour',
  vital: 'Reading',
  unit: 'Unit',
  low: 'Low',
  high: 'High',
};
const labelOf = (field: string) => FIELD_LABELS[field] ?? (field.startsWith('modes.') ? (ALERT_KINDS[field.slice(6) as AlertKind]?.label ?? field) : field);

export interface AlertPageDeps {
  h: AppHelpers;
  db: Db;
  credentials: Credentials;
  preferences: PreferenceStore;
  ranges: RangeStore;
  links: UnsubscribeLinks;
}

const str = (v: unknown) => (typeof v === 'string' ? v.trim() : '');

/** The posted settings form as preferences input; checked by parsePreferences. */
export function preferencesFromForm(form: Record<string, unknown>): unknown {
  const start = str(form.quiet_start);
  const end = str(form.quiet_end);
  const hour = str(form.digest_hour);
  return {
    modes: Object.fromEntries(KIND_NAMES.map((k) => [k, str(form[`mode_${k}`])])),
    // Both empty: no quiet hours. One alone is refused by the time check, naming the empty field.
    quiet: start || end ? { start, end } : null,
    zone: str(form.zone),
    digestDay: str(form.digest_day),
    digestHour: /^\d{1,2}$/.test(hour) ? Number(hour) : Number.NaN,
  };
}

export function alertPages(d: AlertPageDeps) {
  const { h } = d;
  const form = (req: HttpRequestEnvelope) => (req.body ?? {}) as Record<string, unknown>;

  const notFound = (caller: SessionCaller) =>
    h.cardPage(
      404,
      'No such loved one in your workspace',
      <p>
        Pick a loved one from <a href="/settings/alerts">your alert settings</a>.
      </p>,
      caller,
    );

  const settingsForm = (
    caller: SessionCaller,
    lovedOnes: LovedOneRecord[],
    lovedOne: LovedOneRecord,
    p: AlertPreferences,
    error: Markup,
    status: number,
    saved = false,
  ) =>
    h.pageFor(
      status,
      `Alerts about ${lovedOne.firstName}`,
      <>
        <h1>Alerts about {lovedOne.firstName}</h1>
        {lovedOnes.length > 1 ? (
          <nav aria-label="Loved ones">
            <ul>
              {lovedOnes.map((l) => (
                <li>
                  <a href={`/settings/alerts/${encodeURIComponent(l._id)}`} aria-current={l._id === lovedOne._id ? 'page' : undefined}>
                    {l.displayName}
                  </a>
                </li>
              ))}
            </ul>
          </nav>
        ) : null}
        {saved ? (
          <p class="notice" role="status" id="alerts-saved">
            Saved.
          </p>
        ) : null}
        {error}
        <form method="post" action={`/settings/alerts/${encodeURIComponent(lovedOne._id)}`} class="card" id="alert-settings">
          <fieldset>
            <legend>How you hear of each kind of news</legend>
            {KIND_NAMES.map((k) => (
              <p>
                <label for={`mode_${k}`}>{ALERT_KINDS[k].label}</label>
                <select id={`mode_${k}`} name={`mode_${k}`}>
                  {DELIVERY_MODES.map((m) => (
                    <option value={m} selected={p.modes[k] === m}>
                      {MODE_LABELS[m]}
                    </option>
                  ))}
                </select>
              </p>
            ))}
          </fieldset>
          <fieldset>
            <legend>Quiet hours</legend>
            <p class="muted">
              Alerts wait until the end of your quiet hours; falls, hospital visits, emergencies and wounds come anyway. Leave both empty for none.
            </p>
            <p>
              <label for="quiet_start">Quiet hours from</label>
              <input type="time" id="quiet_start" name="quiet_start" value={p.quiet?.start ?? ''} />
            </p>
            <p>
              <label for="quiet_end">Quiet hours until</label>
              <input type="time" id="quiet_end" name="quiet_end" value={p.quiet?.end ?? ''} />
            </p>
            <p>
              <label for="zone">Time zone</label>
              <input type="text" id="zone" name="zone" value={p.zone} autocomplete="off" />
            </p>
          </fieldset>
          <fieldset>
            <legend>Digests</legend>
            <p>
              <label for="digest_day">Weekly digest day</label>
              <select id="digest_day" name="digest_day">
                {WEEKDAYS.map((w) => (
                  <option value={w} selected={p.digestDay === w}>
                    {DAY_NAMES[w]}
                  </option>
                ))}
              </select>
            </p>
            <p>
              <label for="digest_hour">Digest hour (daily and weekly)</label>
              <select id="digest_hour" name="digest_hour">
                {Array.from({ length: 24 }, (_, i) => (
                  <option value={String(i)} selected={p.digestHour === i}>
                    {`${String(i).padStart(2, '0')}:00`}
                  </option>
                ))}
              </select>
            </p>
          </fieldset>
          <button type="submit">Save alert settings</button>
        </form>
        <p>
          <a href={`/care/${encodeURIComponent(lovedOne._id)}/alert-ranges`}>Reading ranges for {lovedOne.firstName}</a> ·{' '}
          <a href="/settings">Back to Settings</a>
        </p>
      </>,
      caller,
    );

  const scope = async (req: HttpRequestEnvelope, lovedOneId: string | undefined, next: string, change: boolean) => {
    const caller = await h.currentCaller(req);
    if (!caller) return change ? redirect(`/signin?next=${encodeURIComponent(next)}`) : h.signedOutPage(next);
    const membership = await h.store.workspaceOf(caller.uid);
    if (!membership) return redirect('/onboarding');
    const lovedOnes = await h.store.lovedOnesOf(membership.workspace._id);
    const lovedOne = lovedOneId === undefined ? lovedOnes[0] : lovedOnes.find((l) => l._id === lovedOneId);
    return { caller, membership, lovedOnes, lovedOne, zone: (await h.store.user(caller.uid))?.timeZone };
  };

  const settingsGet = async (req: HttpRequestEnvelope, lovedOneId?: string): Promise<HttpReplyEnvelope> => {
    const s = await scope(req, lovedOneId, '/settings/alerts', false);
    if (!('caller' in s)) return s;
    if (!s.lovedOne) {
      if (lovedOneId !== undefined) return notFound(s.caller);
      return h.pageFor(200, 'Alerts', <p>Add a loved one first: alerts are about someone.</p>, s.caller);
    }
    const p = await d.preferences.of(s.caller.uid, s.lovedOne._id, s.zone);
    return settingsForm(s.caller, s.lovedOnes, s.lovedOne, p, null, 200, req.query.saved === '1');
  };

  const settingsPost = async (req: HttpRequestEnvelope, lovedOneId: string): Promise<HttpReplyEnvelope> => {
    const s = await scope(req, lovedOneId, `/settings/alerts/${lovedOneId}`, true);
    if (!('caller' in s)) return s;
    if (!s.lovedOne) return notFound(s.caller);
    const raw = preferencesFromForm(form(req));
    try {
      await d.preferences.set(s.caller.uid, s.lovedOne._id, raw as AlertPreferences);
    } catch (err) {
      if (!(err instanceof PreferenceInvalid)) throw err;
      const shown = typedOver(await d.preferences.of(s.caller.uid, s.lovedOne._id, s.zone), raw as TypedPreferences);
      return settingsForm(s.caller, s.lovedOnes, s.lovedOne, shown, errorBox(err.problems.map((p) => `${labelOf(p.field)}: ${p.message}`)), 400);
    }
    return redirect(`/settings/alerts/${encodeURIComponent(s.lovedOne._id)}?saved=1`);
  };

  const rangesPage = (caller: SessionCaller, lovedOne: LovedOneRecord, ranges: ReadingRange[], writer: boolean, error: Markup, status: number) =>
    h.pageFor(
      status,
      `Reading ranges for ${lovedOne.firstName}`,
      <>
        <h1>Reading ranges for {lovedOne.firstName}</h1>
        <section class="card">
          <p>
            A reading outside a range set here is worth an alert (in your <a href={`/settings/alerts/${encodeURIComponent(lovedOne._id)}`}>alert settings</a>).
            carecircle knows no clinical norms: set the ranges the family agreed with {lovedOne.firstName}'s clinicians. With no range, no reading alerts.
          </p>
          {ranges.length ? (
            <table id="ranges">
              <caption>Ranges set for {lovedOne.firstName}</caption>
              <thead>
                <tr>
                  <th scope="col">Reading</th>
                  <th scope="col">Low</th>
                  <th scope="col">High</th>
                </tr>
              </thead>
              <tbody>
                {ranges.map((r) => (
                  <tr>
                    <td>{homeVitalLabel(r.vital)}</td>
                    <td>{r.low !== undefined ? `${r.low} ${r.unit}` : '—'}</td>
                    <td>{r.high !== undefined ? `${r.high} ${r.unit}` : '—'}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          ) : (
            <p id="ranges-none">No ranges are set.</p>
          )}
        </section>
        {error}
        {writer ? (
          <form method="post" action={`/care/${encodeURIComponent(lovedOne._id)}/alert-ranges`} class="card" id="range-form">
            <p>
              <label for="vital">Reading</label>
              <select id="vital" name="vital">
                {RANGE_VITALS.map((v) => (
                  <option value={v}>{homeVitalLabel(v)}</option>
                ))}
              </select>
            </p>
            <p>
              <label for="unit">Unit</label>
              <select id="unit" name="unit">
                {[...new Set(Object.values(HOME_VITALS).flatMap((v) => Object.keys(v.units)))].map((u) => (
                  <option value={u}>{u}</option>
                ))}
              </select>
            </p>
            <p>
              <label for="low">Low (alert below)</label>
              <input id="low" name="low" inputmode="decimal" />
            </p>
            <p>
              <label for="high">High (alert above)</label>
              <input id="high" name="high" inputmode="decimal" />
            </p>
            <p class="muted">Blood pressure: the range is for the first (systolic) number.</p>
            <button type="submit">Save range</button>
          </form>
        ) : (
          <p class="muted">Only members who can add to the care record can set ranges.</p>
        )}
      </>,
      caller,
    );

  const rangesGet = async (req: HttpRequestEnvelope, lovedOneId: string): Promise<HttpReplyEnvelope> => {
    const s = await scope(req, lovedOneId, `/care/${lovedOneId}/alert-ranges`, false);
    if (!('caller' in s)) return s;
    if (!s.lovedOne) return notFound(s.caller);
    return rangesPage(s.caller, s.lovedOne, await d.ranges.of(s.lovedOne._id), canWrite(s.membership.member), null, 200);
  };

  const rangesPost = async (req: HttpRequestEnvelope, lovedOneId: string): Promise<HttpReplyEnvelope> => {
    const s = await scope(req, lovedOneId, `/care/${lovedOneId}/alert-ranges`, true);
    if (!('caller' in s)) return s;
    if (!s.lovedOne) return notFound(s.caller);
    const ranges = await d.ranges.of(s.lovedOne._id);
    if (!canWrite(s.membership.member))
      return rangesPage(s.caller, s.lovedOne, ranges, false, errorBox(['Only members who can add to the care record can set ranges.']), 403);
    const f = form(req);
    const num = (field: string) => {
      const v = str(f[field]);
      if (!v) return undefined;
      const n = Number(v);
      if (!Number.isFinite(n)) throw new RangeInvalid(field, 'must be a number');
      return n;
    };
    try {
      await d.ranges.set(
        s.lovedOne,
        { vital: str(f.vital), unit: str(f.unit), ...withDefined('low', num('low')), ...withDefined('high', num('high')) },
        s.caller.uid,
      );
    } catch (err) {
      if (!(err instanceof RangeInvalid)) throw err;
      return rangesPage(s.caller, s.lovedOne, ranges, true, errorBox([`${labelOf(err.field)}: ${err.message.slice(err.field.length + 2)}`]), 400);
    }
    return redirect(`/care/${encodeURIComponent(s.lovedOne._id)}/alert-ranges`);
  };

  const refused = (err: LinkRefused) =>
    h.cardPage(
      err.code === 'LINK_USED' ? 409 : 400,
      'This link cannot be used',
      <p id="link-refused" data-code={err.code}>
        {err.message}
      </p>,
    );

  /** The link opened in a browser: a confirmation button, so a mail scanner's GET changes nothing. */
  const unsubscribeGet = async (_req: HttpRequestEnvelope, token: string): Promise<HttpReplyEnvelope> => {
    try {
      const claim = await d.links.read(token);
      const what = claim.kind === 'daily' || claim.kind === 'weekly' ? `the ${claim.kind} digest` : ALERT_KINDS[claim.kind].label.toLowerCase();
      return h.cardPage(
        200,
        'Stop these alerts?',
        <form method="post" action={`/alerts/unsubscribe/${token}`}>
          <input type="hidden" name="List-Unsubscribe" value="One-Click" />
          <p>You will no longer get {what} by mail about this loved one. You can turn it back on in Settings.</p>
          <button type="submit">Stop them</button>
        </form>,
      );
    } catch (err) {
      if (err instanceof LinkRefused) return refused(err);
      throw err;
    }
  };

  const unsubscribePost = async (_req: HttpRequestEnvelope, token: string): Promise<HttpReplyEnvelope> => {
    try {
      const claim = await d.links.use(token);
      const zone = (await h.store.user(claim.uid))?.timeZone;
      await d.preferences.turnOff(claim.uid, claim.lovedOneId, claim.kind, zone);
      return h.cardPage(
        200,
        'Done',
        <p id="unsubscribed">
          You will no longer get these by mail. <a href={`/settings/alerts/${encodeURIComponent(claim.lovedOneId)}`}>Change alert settings</a>
        </p>,
      );
    } catch (err) {
      if (err instanceof LinkRefused) return refused(err);
      throw err;
    }
  };

  return { settingsGet, settingsPost, rangesGet, rangesPost, unsubscribeGet, unsubscribePost };
}

type TypedPreferences = { modes: Record<string, string>; quiet: { start: string; end: string } | null; zone: string; digestDay: string; digestHour: number };

/** The form as the person typed it, over what is saved: a refused post comes back with their choices, not the old ones. */
function typedOver(saved: AlertPreferences, typed: TypedPreferences): AlertPreferences {
  const modes = { ...saved.modes };
  for (const k of KIND_NAMES) if ((DELIVERY_MODES as readonly string[]).includes(typed.modes[k] ?? '')) modes[k] = typed.modes[k] as DeliveryMode;
  return {
    modes,
    quiet: typed.quiet,
    zone: typed.zone,
    digestDay: (WEEKDAYS as readonly string[]).includes(typed.digestDay) ? (typed.digestDay as Weekday) : saved.digestDay,
    digestHour: Number.isInteger(typed.digestHour) && typed.digestHour >= 0 && typed.digestHour <= 23 ? typed.digestHour : saved.digestHour,
  };
}

const withDefined = <K extends string>(k: K, v: number | undefined): { [P in K]?: number } => (v === undefined ? {} : ({ [k]: v } as { [P in K]?: number }));
