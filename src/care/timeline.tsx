// A loved one's timeline: partner events and inbox mail together, newest first, filtered by kind
// and by day (in the viewer's zone), one page of entries at a time.
import type { WorkspaceStore } from '../family/records.js';
import { describe, EntryView, EVENT_GROUPS } from './describe.js';
import { CareNav, ZoneNote, type CareView } from './parts.js';
import { CursorRefused } from '../store/timeline/port.js';

export const TIMELINE_PAGE = 25;

const DAY = /^\d{4}-\d{2}-\d{2}$/;

export async function timelineBody(store: WorkspaceStore, v: CareView) {
  const { lovedOne, clock, query } = v;
  const group = query.type && EVENT_GROUPS[query.type] ? query.type : '';
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
  const { events, nextCursor } = await store.listCareEvents(lovedOne._id, { ...q, ...(query.cursor ? { cursor: query.cursor } : {}) }).catch((err: unknown) => {
    if (err instanceof CursorRefused) return store.listCareEvents(lovedOne._id, q);
    throw err;
  });
  const action = `/care/${encodeURIComponent(lovedOne._id)}`;
  const keep = new URLSearchParams({ ...(group ? { type: group } : {}), ...(from ? { from } : {}), ...(to ? { to } : {}) });
  const more = nextCursor ? `${action}?${new URLSearchParams([...keep, ['cursor', nextCursor]]).toString()}` : null;
  const filtered = Boolean(group || from || to);
  return {
    title: `${lovedOne.displayName}: timeline`,
    body: (
      <>
        <h1>{lovedOne.displayName}</h1>
        <CareNav lovedOne={lovedOne} current="timeline" />
        <section class="card">
          <h2>Timeline</h2>
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
          <ZoneNote clock={clock} now={v.now} />
          {events.length ? (
            <ol class="timeline" id="timeline">
              {events.map((e) => (
                <EntryView entry={describe(e, clock)} event={e} clock={clock} />
              ))}
            </ol>
          ) : (
            <p class="muted" id="timeline-empty">
              {filtered
                ? 'Nothing matches these filters.'
                : 'Nothing yet. Visits, doses, vital signs and notes from a linked agency, and mail to the family inbox, appear here.'}
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
