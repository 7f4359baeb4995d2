// Each care event in plain words ("Metoprolol 25 mg given by Ana at 8:02 am"); a type this
// version does not know is shown with its fields, never dropped.
import type { CareEventRecord } from '../family/records.js';
import { duration, type Clock } from './time.js';
import { readingText, vitalKind } from './vitals.js';

/** The timeline's filter groups, by the event types in each. */
export const EVENT_GROUPS: Record<string, { label: string; types: string[] }> = {
  visits: { label: 'Visits', types: ['visit_started', 'visit_ended'] },
  medications: { label: 'Medications', types: ['med_administered'] },
  vitals: { label: 'Vital signs', types: ['vital_recorded'] },
  notes: { label: 'Notes', types: ['note_added'] },
  mail: { label: 'Inbox mail', types: ['inbox_message'] },
};

const str = (v: unknown, fallback = ''): string => (typeof v === 'string' ? v : typeof v === 'number' ? String(v) : fallback);
const at = (v: unknown): Date | null => {
  const d = typeof v === 'string' ? new Date(v) : null;
  return d && !Number.isNaN(d.getTime()) ? d : null;
};
const who = (v: unknown) => str(v, 'someone') || 'someone';

/** Sentence case of a snake_case event type: "fall_reported" → "Fall reported". */
export const typeLabel = (type: string): string => {
  const words = type.replace(/[_-]+/g, ' ').trim() || 'event';
  return words.charAt(0).toUpperCase() + words.slice(1);
};

/** A field's value for the generic view: text as sent, anything else as compact JSON. */
const fieldText = (v: unknown): string => {
  const s = typeof v === 'string' ? v : JSON.stringify(v);
  return (s ?? '').length > 200 ? `${(s ?? '').slice(0, 200)}…` : (s ?? '');
};

export interface Entry {
  /** What kind of entry, for its badge and class: one of EVENT_GROUPS' keys, or "other". */
  group: string;
  summary: string;
  detail?: string;
  /** Extra fields shown for an event type this version does not know. */
  fields?: [string, string][];
  link?: { href: string; text: string };
}

export function describe(e: CareEventRecord, clock: Clock): Entry {
  const p = e.payload;
  const time = clock.time(e.occurredAt);
  switch (e.eventType) {
    case 'med_administered': {
      const scheduled = at(p.scheduled_at);
      const dose = [str(p.medication_name, 'A medication'), str(p.dose_amount), str(p.dose_unit)].filter(Boolean).join(' ');
      return { group: 'medications', summary: `${dose} given by ${who(p.administered_by)} at ${time}`, ...(scheduled ? { detail: `Scheduled for ${clock.dayTime(scheduled)}` } : {}) };
    }
    case 'visit_started': {
      const started = at(p.actual_start) ?? e.occurredAt;
      const scheduled = at(p.scheduled_start);
      return { group: 'visits', summary: `Visit by ${who(p.caregiver_id)} started at ${clock.time(started)}`, ...(scheduled ? { detail: `Scheduled for ${clock.dayTime(scheduled)}` } : {}) };
    }
    case 'visit_ended': {
      const ended = at(p.actual_end) ?? e.occurredAt;
      const minutes = typeof p.duration_minutes === 'number' && p.duration_minutes >= 0 ? p.duration_minutes : null;
      if (minutes === null) return { group: 'visits', summary: `Visit by ${who(p.caregiver_id)} ended at ${clock.time(ended)}` };
      const started = new Date(ended.getTime() - minutes * 60_000);
      const from = clock.isoDay(started) === clock.isoDay(ended) ? clock.time(started).replace(/ [ap]m$/, (m) => (clock.time(ended).endsWith(m) ? '' : m)) : clock.dayTime(started);
      return { group: 'visits', summary: `Visit by ${who(p.caregiver_id)}, ${from}–${clock.time(ended)}, ${duration(minutes)}` };
    }
    case 'vital_recorded': {
      const kind = vitalKind(p.vital_type);
      return { group: 'vitals', summary: `${kind.label} ${readingText(kind, p.value, p.secondary_value, p.unit)}`, detail: `Recorded by ${who(p.recorded_by)} at ${time}` };
    }
    case 'note_added':
      return { group: 'notes', summary: `Note from ${who(p.caregiver_id)} at ${time}`, detail: str(p.note_text) };
    case 'inbox_message':
      return {
        group: 'mail',
        summary: `Mail from ${str(p.from, 'an unknown sender')} at ${time}: ${str(p.subject) || '(no subject)'}`,
        detail: str(p.excerpt).slice(0, 280),
        link: { href: `/inbox/${encodeURIComponent(e.lovedOneId)}`, text: 'Open the inbox' },
      };
    default:
      return { group: 'other', summary: `${typeLabel(e.eventType)} at ${time}`, fields: Object.entries(p).slice(0, 12).map(([k, v]) => [typeLabel(k), fieldText(v)]) };
  }
}

export function EntryView({ entry, event, clock }: { entry: Entry; event: CareEventRecord; clock: Clock }) {
  return (
    <li class={`entry entry-${entry.group}`}>
      <p class="entry-when">
        <time dateTime={event.occurredAt.toISOString()}>{clock.dayTime(event.occurredAt)}</time>
        <span class="badge">{EVENT_GROUPS[entry.group]?.label ?? typeLabel(event.eventType)}</span>
      </p>
      <p class="entry-what">{entry.summary}</p>
      {entry.detail ? <p class="entry-detail">{entry.detail}</p> : null}
      {entry.fields?.length ? (
        <dl class="entry-fields">
          {entry.fields.map(([k, v]) => (
            <>
              <dt>{k}</dt>
              <dd>{v}</dd>
            </>
          ))}
        </dl>
      ) : null}
      {entry.link ? <a href={entry.link.href}>{entry.link.text}</a> : null}
    </li>
  );
}
