// Each care event on the timeline, in the catalogue's words ("Metoprolol 25 mg given by Ana at
// 8:02 am"); a type this version does not know is shown with its fields, never dropped.
import { CARE_GROUPS, careWords, typeLabel, typesIn, type CareGroup } from '../family/careEventTypes.js';
import type { CareEventRecord } from '../family/records.js';
import type { Clock } from './time.js';

export { typeLabel };

/** The timeline's filter groups, by the event types in each (from the catalogue of care-event types). */
export const EVENT_GROUPS: Record<string, { label: string; types: string[] }> = Object.fromEntries(
  (Object.keys(CARE_GROUPS) as CareGroup[]).filter((g) => g !== 'other').map((g) => [g, { label: CARE_GROUPS[g].label, types: typesIn(g) }]),
);

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
  const { line: _line, ...entry } = careWords(e, clock);
  return entry;
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
