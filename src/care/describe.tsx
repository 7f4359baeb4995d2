// Each care event on the timeline, in the catalogue's words, under a heading for its day in the
// reader's zone: its time once, the line, and readings taken together as one entry. A type this
// version does not know is shown plainly as "other update" with its fields, never dropped.
import {
  CARE_GROUPS,
  careWords,
  flaggableText,
  flaggedReasons,
  isPlanEvent,
  typeLabel,
  typesIn,
  type AideNamer,
  type CareGroup,
} from '../family/careEventTypes.js';
import type { CareEventRecord } from '../family/records.js';
import type { Clock } from './time.js';

export { typeLabel };

/** The timeline's filter groups, by the event types in each (from the catalogue of care-event types). */
export const EVENT_GROUPS: Record<string, { label: string; types: string[] }> = Object.fromEntries(
  (Object.keys(CARE_GROUPS) as CareGroup[]).filter((g) => g !== 'other').map((g) => [g, { label: CARE_GROUPS[g].label, types: typesIn(g) }]),
);

/** The badge of an event of a type this version does not know. */
export const OTHER_UPDATE = 'Other update';

export interface Entry {
  /** What kind of entry, for its badge and class: one of EVENT_GROUPS' keys, or "other". */
  group: string;
  /** The sentence with its time, for a reader without the day's heading. */
  summary: string;
  /** The sentence without its time, under the day's heading. */
  line: string;
  detail?: string;
  /** Extra fields shown for an event type this version does not know. */
  fields?: [string, string][];
  link?: { href: string; text: string };
  /** Why the entry needs attention ("fall"), when a reviewed flag word is in it. */
  flagged?: string[];
}

export function describe(e: CareEventRecord, clock: Clock, aide?: AideNamer): Entry {
  const words = careWords(e, clock, aide);
  const flaggable = flaggableText(e);
  const flagged = flaggable ? flaggedReasons(flaggable) : [];
  // A reading's detail repeats its time and aide, and a note's line repeats its text: each is said once.
  const line = words.group === 'notes' ? (words.headline ?? words.line) : words.group === 'other' ? (words.headline ?? words.line) : words.line;
  return {
    group: words.group,
    summary: words.summary,
    line,
    ...(words.detail && words.group !== 'vitals' ? { detail: words.detail } : {}),
    ...(words.fields ? { fields: words.fields } : {}),
    ...(words.link ? { link: words.link } : {}),
    ...(flagged.length ? { flagged } : {}),
  };
}

/** One row of the timeline: an event, or the readings one aide took together. */
type Row = { kind: 'event'; event: CareEventRecord } | { kind: 'readings'; events: CareEventRecord[] };

/** Readings this close to the one before them, by the same aide, are one visit's readings. */
const SAME_VISIT_MS = 45 * 60_000;

/** Days newest first, each with its rows; consecutive readings of one visit become one row. */
export function timelineDays(events: readonly CareEventRecord[], clock: Clock, aide: AideNamer): { day: string; first: Date; rows: Row[] }[] {
  const days: { day: string; first: Date; rows: Row[] }[] = [];
  for (const e of events) {
    const day = clock.isoDay(e.occurredAt);
    let current = days.at(-1);
    if (current?.day !== day) days.push((current = { day, first: e.occurredAt, rows: [] }));
    const last = current.rows.at(-1);
    // A family member's reading stays its own row, with its link to correct or withdraw it.
    const reading = e.eventType === 'vital_recorded' && e.source !== 'family';
    if (reading && last) {
      const prev = last.kind === 'readings' ? last.events.at(-1)! : last.event;
      if (
        prev.eventType === 'vital_recorded' &&
        prev.source !== 'family' &&
        Math.abs(prev.occurredAt.getTime() - e.occurredAt.getTime()) <= SAME_VISIT_MS &&
        prev.institutionId === e.institutionId &&
        aide(prev) === aide(e)
      ) {
        if (last.kind === 'readings') last.events.push(e);
        else current.rows[current.rows.length - 1] = { kind: 'readings', events: [prev, e] };
        continue;
      }
    }
    current.rows.push({ kind: 'event', event: e });
  }
  return days;
}

/** "Today, Fri, Nov 27", "Yesterday, Thu, Nov 26", "Tue, Nov 24". */
export function dayHeading(clock: Clock, day: string, at: Date, now: Date): string {
  const today = clock.isoDay(now);
  const yesterday = clock.isoDay(new Date(clock.startOf(today)!.getTime() - 12 * 3_600_000));
  const name = clock.day(at);
  return day === today ? `Today, ${name}` : day === yesterday ? `Yesterday, ${name}` : name;
}

const Time = ({ at, clock }: { at: Date; clock: Clock }) => (
  <time class="entry-time" dateTime={at.toISOString()}>
    {clock.time(at)}
  </time>
);

export function EntryView({ entry, event, clock }: { entry: Entry; event: CareEventRecord; clock: Clock }) {
  return (
    <li class={`entry entry-${entry.group}${entry.flagged ? ' entry-flagged' : ''}`} id={`entry-${event._id}`}>
      <p class="entry-what">
        <Time at={event.occurredAt} clock={clock} /> <span class="entry-line">{entry.line}</span>{' '}
        <span class="badge">{EVENT_GROUPS[entry.group]?.label ?? OTHER_UPDATE}</span>
        {entry.flagged ? <strong class="badge flag">Needs attention: {entry.flagged.join(', ')}</strong> : null}
      </p>
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
      {event.source === 'family' && !isPlanEvent(event.eventType) ? (
        <p class="entry-family">
          {event.supersedes ? (event.eventType === 'entry_withdrawn' ? 'Withdrawn. ' : 'Corrected. ') : null}
          <a href={`/care/${encodeURIComponent(event.lovedOneId)}/entries/${encodeURIComponent(event._id)}`}>
            {event.supersedes ? 'See every version' : 'See, correct or withdraw'}
          </a>
        </p>
      ) : null}
    </li>
  );
}

/** Readings one aide took in one visit: one entry, one reading a line. */
export function ReadingsView({ events, clock, aide }: { events: CareEventRecord[]; clock: Clock; aide: AideNamer }) {
  const newest = events[0]!;
  return (
    <li class="entry entry-vitals entry-readings">
      <p class="entry-what">
        <Time at={newest.occurredAt} clock={clock} />{' '}
        <span class="entry-line">
          {events.length} readings by {aide(newest)}
        </span>{' '}
        <span class="badge">{EVENT_GROUPS.vitals!.label}</span>
      </p>
      <ul class="readings">
        {[...events].reverse().map((e) => (
          <li>{careWords(e, clock, aide).headline}</li>
        ))}
      </ul>
    </li>
  );
}
