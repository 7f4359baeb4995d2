// A loved one's page: what needs attention first, then today (doses and visits), the conditions and
// allergies a connected health portal lists, then the timeline
// of partner events, inbox mail and the family's own entries, newest first under a heading per
// day in the viewer's zone, filtered by kind, by who wrote it and by day, one page at a time.
import type { Db } from 'mongodb';
import type { CareEventRecord, WorkspaceStore } from '../family/records.js';
import { careWords, type AideNamer } from '../family/careEventTypes.js';
import { doseItems, FLAGGED_WINDOW_MS, flaggedItems, readingItems, visitItems, type FamilyRange } from './attention.js';
import { dayHeading, describe, EntryView, EVENT_GROUPS, ReadingsView, timelineDays } from './describe.js';
import { doseRows, listDoseRows, todaysDoses } from './doses.js';
import { MedicationList } from '../family/medications.js';
import { allergiesOf, conditionsOf } from '../family/portalRecords.js';
import { AttentionBlock, DoseList, HealthRecordBlock } from './glance.js';
import { CareNav, ZoneNote, type CareView } from './parts.js';
import { aideNamer } from './people.js';
import { CursorRefused } from '../store/timeline/port.js';
import { comingUp, ComingUpBlock } from './comingUp.js';
import type { CareEventQuery } from '../family/careEvents.js';
import { AddCard } from './entryPages.js';
import { canManage } from '../family/circle.js';

/** Who wrote an event, for the timeline's filter: the agency (partner events) or the family. */
export const WRITERS: Record<string, { label: string; source: CareEventRecord['source'] }> = {
  agency: { label: 'The agency', source: 'partner' },
  family: { label: 'The family', source: 'family' },
};

export const TIMELINE_PAGE = 50;
/** How far back the daily times of doses and visits are read from. */
export const SCHEDULE_DAYS = 14;
const MAX_RECENT = 1000;

const DAY = /^\d{4}-\d{2}-\d{2}$/;

/** Ranges a family sets for readings: none can be set yet, so none are checked (see attention.ts). */
const familyRanges = (): FamilyRange[] => [];

/** What needs attention and what happened today, from the last days' events. */
async function glance(store: WorkspaceStore, db: Db, v: CareView) {
  const { lovedOne, clock, now } = v;
  const today = clock.startOf(clock.isoDay(now))!;
  const [recent, scheduled, meds, record] = await Promise.all([
    store.listCareEvents(lovedOne._id, { since: new Date(Math.min(today.getTime(), now.getTime() - FLAGGED_WINDOW_MS)), limit: MAX_RECENT }),
    store.listCareEvents(lovedOne._id, {
      since: new Date(today.getTime() - SCHEDULE_DAYS * 86_400_000),
      types: ['med_administered', 'med_refused', 'med_missed', 'visit_started'],
      limit: MAX_RECENT,
    }),
    new MedicationList(db).list(lovedOne._id),
    // The portal's conditions and allergies as they stand, however long ago they were written.
    store.listCareEvents(lovedOne._id, { types: ['portal_condition', 'portal_allergy'], limit: MAX_RECENT }),
  ]);
  const aide = await aideNamer(db, [...recent.events, ...scheduled.events]);
  const todays = recent.events.filter((e) => e.occurredAt >= today);
  const guessed = todaysDoses(
    doseRows(
      scheduled.events.filter((e) => e.eventType.startsWith('med_')),
      todays.filter((e) => e.eventType === 'note_added'),
      clock,
      today,
      now,
      aide,
    ),
    clock,
    now,
  );
  // Today's doses follow the medication list when the loved one has one, as on the medications page.
  const doses = meds.length
    ? listDoseRows(
        meds,
        scheduled.events.filter((e) => e.eventType.startsWith('med_')),
        now,
        aide,
        guessed,
      )
    : guessed;
  const attention = [
    ...flaggedItems(
      recent.events.filter((e) => e.occurredAt.getTime() >= now.getTime() - FLAGGED_WINDOW_MS),
      clock,
      aide,
      new Set(doses.flatMap((d) => (d.noteId ? [d.noteId] : []))),
    ),
    ...doseItems(doses),
    ...readingItems(todays, familyRanges(), aide),
    ...visitItems(scheduled.events, clock, now),
  ].sort((a, b) => b.at.getTime() - a.at.getTime());
  const visits = todays.filter((e) => e.eventType === 'visit_started' || e.eventType === 'visit_ended').reverse();
  return { aide, attention, doses, visits, conditions: conditionsOf(record.events), allergies: allergiesOf(record.events) };
}

function Today({
  doses,
  visits,
  v,
  aide,
  medsHref,
}: {
  doses: ReturnType<typeof todaysDoses>;
  visits: CareEventRecord[];
  v: CareView;
  aide: AideNamer;
  medsHref: string;
}) {
  const { clock, now } = v;
  return (
    <section class="card today" id="today" aria-labelledby="today-title">
      <h2 id="today-title">Today, {clock.day(now)}</h2>
      <h3>Medicines</h3>
      {doses.length ? <DoseList rows={doses} clock={clock} id="today-doses" /> : <p class="muted">No doses scheduled or given today so far.</p>}
      <p>
        <a href={medsHref}>All medicines</a>
      </p>
      <h3>Visits</h3>
      {visits.length ? (
        <ul class="doses" id="today-visits">
          {visits.map((e) => (
            <li>
              <time dateTime={e.occurredAt.toISOString()}>{clock.time(e.occurredAt)}</time> {careWords(e, clock, aide).line}
            </li>
          ))}
        </ul>
      ) : (
        <p class="muted">No visit recorded today so far.</p>
      )}
    </section>
  );
}

export async function timelineBody(store: WorkspaceStore, db: Db, v: CareView) {
  const { lovedOne, clock, query, now } = v;
  const group = query.type && EVENT_GROUPS[query.type] ? query.type : '';
  const by = query.by && WRITERS[query.by] ? query.by : '';
  const from = query.from && DAY.test(query.from) ? query.from : '';
  const to = query.to && DAY.test(query.to) ? query.to : '';
  const since = from ? clock.startOf(from) : null;
  // "To" is inclusive: up to the start of the next day.
  const untilExact = to ? clock.startOf(new Date(Date.parse(`${to}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10)) : null;
  const q = {
    ...(since ? { since } : {}),
    ...(untilExact ? { until: untilExact } : {}),
    ...(group ? { types: EVENT_GROUPS[group]!.types } : {}),
    limit: TIMELINE_PAGE,
  };
  // The cursor comes from a link: one of another filter (or none at all) starts from the newest.
  const paged = Boolean(query.cursor);
  const list = (qq: CareEventQuery) => (by ? store.listCareEventsFrom(lovedOne._id, qq, WRITERS[by]!.source) : store.listCareEvents(lovedOne._id, qq));
  const [{ events, nextCursor }, top, plans, membership] = await Promise.all([
    list({ ...q, ...(query.cursor ? { cursor: query.cursor } : {}) }).catch((err: unknown) => {
      if (err instanceof CursorRefused) return list(q);
      throw err;
    }),
    paged ? null : glance(store, db, v),
    paged ? null : comingUp(db, lovedOne._id, now),
    store.workspaceOf(v.caller.uid),
  ]);
  const aide = top?.aide ?? (await aideNamer(db, events));
  const action = `/care/${encodeURIComponent(lovedOne._id)}`;
  const keep = new URLSearchParams({ ...(group ? { type: group } : {}), ...(by ? { by } : {}), ...(from ? { from } : {}), ...(to ? { to } : {}) });
  const more = nextCursor ? `${action}?${new URLSearchParams([...keep, ['cursor', nextCursor]]).toString()}` : null;
  const filtered = Boolean(group || by || from || to);
  const days = timelineDays(events, clock, aide);
  const dayLabel = (d: Date) => dayHeading(clock, clock.isoDay(d), d, now);
  return {
    title: `${lovedOne.displayName}: timeline`,
    body: (
      <>
        <h1>{lovedOne.displayName}</h1>
        <CareNav lovedOne={lovedOne} current="timeline" />
        <ZoneNote clock={clock} now={now} />
        {top ? (
          <>
            <AttentionBlock items={top.attention} clock={clock} now={now} dayLabel={dayLabel} />
            <Today doses={top.doses} visits={top.visits} v={v} aide={aide} medsHref={`${action}/medications`} />
            {top.conditions.length || top.allergies.length ? (
              <HealthRecordBlock conditions={top.conditions} allergies={top.allergies} portalHref={`${action}/portal`} />
            ) : null}
            {plans ? <ComingUpBlock plans={plans} lovedOne={lovedOne} clock={clock} /> : null}
            <AddCard lovedOne={lovedOne} member={membership?.member ?? null} clock={clock} now={now} />
            {membership && canManage(membership.member) ? (
              <section class="card" id="record-download" aria-labelledby="record-download-title">
                <h2 id="record-download-title">Take the record with you</h2>
                <p>
                  <a href={`${action}/export`}>Download {lovedOne.displayName}'s whole record</a> as FHIR R4 or plain JSON, for a new doctor or another health
                  app.
                </p>
              </section>
            ) : null}
          </>
        ) : null}
        <section class="card" aria-labelledby="timeline-title">
          <h2 id="timeline-title">Timeline</h2>
          <form class="filters" method="get" action={action}>
            <div>
              <label for="type">Show</label>
              <select id="type" name="type">
                <option value="">Everything</option>
                {Object.entries(EVENT_GROUPS).map(([key, g]) => (
                  <option value={key} selected={key === group}>
                    {g.label}
                  </option>
                ))}
              </select>
            </div>
            <div>
              <label for="by">Written by</label>
              <select id="by" name="by">
                <option value="">Anyone</option>
                {Object.entries(WRITERS).map(([key, w]) => (
                  <option value={key} selected={key === by}>
                    {w.label}
                  </option>
                ))}
              </select>
            </div>
            <div>
              <label for="from">From</label>
              <input id="from" name="from" type="date" value={from} />
            </div>
            <div>
              <label for="to">To</label>
              <input id="to" name="to" type="date" value={to} />
            </div>
            <button type="submit" class="secondary">
              Filter
            </button>
          </form>
          {events.length ? (
            <div id="timeline" class="timeline-days">
              {days.map((d) => (
                <section class="day" aria-labelledby={`day-${d.day}`}>
                  <h3 class="day-heading" id={`day-${d.day}`}>
                    {dayHeading(clock, d.day, d.first, now)}
                  </h3>
                  <ol class="timeline">
                    {d.rows.map((r) =>
                      r.kind === 'readings' ? (
                        <ReadingsView events={r.events} clock={clock} aide={aide} />
                      ) : (
                        <EntryView entry={describe(r.event, clock, aide)} event={r.event} clock={clock} />
                      ),
                    )}
                  </ol>
                </section>
              ))}
            </div>
          ) : (
            <p class="muted" id="timeline-empty">
              {filtered
                ? 'Nothing matches these filters.'
                : 'Nothing yet. Visits, doses, vital signs and notes from a linked agency, mail to the family inbox, and what the family adds appear here.'}
            </p>
          )}
          <p class="pager">
            {query.cursor ? <a href={keep.size ? `${action}?${keep.toString()}` : action}>Newest</a> : null}
            {query.cursor && more ? ' · ' : null}
            {more ? (
              <a href={more} id="older" rel="next">
                Older entries
              </a>
            ) : null}
          </p>
        </section>
      </>
    ),
  };
}
