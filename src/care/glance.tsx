// The parts that are read at a glance: the block of what needs attention, today's doses by time
// with their state (shared by the loved one's page and the medications page), and the conditions
// and allergies a connected health portal lists.
import type { PortalAllergy, PortalCondition } from '../family/portalRecords.js';
import type { AttentionItem } from './attention.js';
import { rowTime, type DoseRow } from './doses.js';
import type { Clock } from './time.js';

const STATE_LABEL: Record<DoseRow['state'], string> = { given: 'Given', refused: 'Refused', 'not recorded': 'Not recorded', missed: 'Missed', due: 'Due' };

const what = (r: DoseRow) => [r.medication, r.amount].filter(Boolean).join(' ');

/** What else there is to say of a dose, after its state and name: "at 8:04 am by Ana". */
function more(r: DoseRow, clock: Clock): string {
  const by = r.by ?? 'the aide';
  switch (r.state) {
    case 'given':
      return r.due && clock.time(r.due) !== clock.time(r.at) ? `at ${clock.time(r.at)} by ${by}` : `by ${by}`;
    case 'refused':
      return r.note ? `${by} wrote: “${r.note}”` : `recorded by ${by}`;
    case 'not recorded':
      return 'check with the agency';
    case 'missed':
      return r.by ? `recorded by ${r.by}${r.note ? `: “${r.note}”` : ''}` : 'nothing recorded within the grace period';
    case 'due':
      return '';
  }
}

/** Doses by time, each on one line: the time, the state, the medication and what happened. */
export function DoseList({ rows, clock, id }: { rows: DoseRow[]; clock: Clock; id: string }) {
  return (
    <ul class="doses" id={id}>
      {rows.map((r) => {
        const t = rowTime(r);
        return (
          <li class={`dose dose-${r.state.replace(' ', '-')}`}>
            <time dateTime={t.toISOString()}>{clock.time(t)}</time> <span class="dose-state">{STATE_LABEL[r.state]}</span>{' '}
            <span class="dose-what">
              <strong>{what(r)}</strong> {more(r, clock)}
            </span>
          </li>
        );
      })}
    </ul>
  );
}

const sentence = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

const KIND_LABEL: Record<AttentionItem['kind'], string> = { flagged: 'Flagged', dose: 'Medicine', reading: 'Reading', visit: 'Visit' };

/** What needs attention, newest first; says so plainly when nothing does. */
export function AttentionBlock({ items, clock, now, dayLabel }: { items: AttentionItem[]; clock: Clock; now: Date; dayLabel: (d: Date) => string }) {
  return (
    <section class="card attention" id="attention" aria-labelledby="attention-title">
      <h2 id="attention-title">Needs attention</h2>
      {items.length ? (
        <ul class="attention-items">
          {items.map((i) => (
            <li class={`attention-item attention-${i.kind}`}>
              <p>
                <span class="badge flag">{i.reasons?.length ? sentence(i.reasons.join(', ')) : KIND_LABEL[i.kind]}</span> <strong>{i.text}</strong>
              </p>
              <p class="muted">
                <time dateTime={i.at.toISOString()}>
                  {dayLabel(i.at)}, {clock.time(i.at)}
                </time>
              </p>
              {i.detail ? <p class="attention-detail">{i.detail}</p> : null}
            </li>
          ))}
        </ul>
      ) : (
        <p class="muted" id="attention-none">
          Nothing needs attention: no flagged notes in the last 3 days, and no dose refused or missed today as of {clock.time(now)}.
        </p>
      )}
    </section>
  );
}

const STATUS_WORDS: Record<string, string> = {
  active: 'active',
  inactive: 'inactive',
  resolved: 'resolved',
  remission: 'in remission',
  recurrence: 'recurred',
  relapse: 'relapsed',
};
const statusAside = (s: string) => (s === 'active' || s === 'unknown' ? '' : ` (${STATUS_WORDS[s] ?? s})`);
const fromWords = (portals: string[]) => `From ${[...new Set(portals)].map((p) => `${p}'s portal`).join(' and ')}`;

/** The conditions and allergies from the loved one's health-system portal, each with where it came from. */
export function HealthRecordBlock({ conditions, allergies, portalHref }: { conditions: PortalCondition[]; allergies: PortalAllergy[]; portalHref: string }) {
  return (
    <section class="card health-record" id="health-record" aria-labelledby="health-record-title">
      <h2 id="health-record-title">Conditions and allergies</h2>
      <h3>Conditions</h3>
      {conditions.length ? (
        <ul id="conditions">
          {conditions.map((c) => (
            <li>
              <strong>{c.name}</strong>
              {statusAside(c.clinicalStatus)}
              {c.onset ? `, since ${c.onset.slice(0, 10)}` : ''} <span class="muted">{`from ${c.portal}'s portal`}</span>
            </li>
          ))}
        </ul>
      ) : (
        <p class="muted">No conditions on the portal's record.</p>
      )}
      <h3>Allergies</h3>
      {allergies.length ? (
        <ul id="allergies">
          {allergies.map((a) => (
            <li>
              <strong>{a.substance}</strong>
              {statusAside(a.clinicalStatus)}
              {a.reaction ? `: ${a.reaction}` : ''}
              {a.criticality === 'high' ? ', high risk' : ''} <span class="muted">{`from ${a.portal}'s portal`}</span>
            </li>
          ))}
        </ul>
      ) : (
        <p class="muted">No allergies on the portal's record.</p>
      )}
      <p class="muted">
        {fromWords([...conditions.map((c) => c.portal), ...allergies.map((a) => a.portal)])}, as the clinicians recorded them.{' '}
        <a href={portalHref}>Health portals</a>
      </p>
    </section>
  );
}
