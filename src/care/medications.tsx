// Medications: first, did she get her medicines today (each dose by time: given, refused, missed,
// not recorded or due), from the medication list's schedule when the loved one has one, else from
// the daily times the agency's events suggest; then the period's history by day, one line a dose,
// the doses scheduled but not recorded and the refusals among them.
import type { Db } from 'mongodb';
import type { MedicationList } from '../family/medications.js';
import { portalMedicationsOf } from '../family/portalRecords.js';
import type { WorkspaceStore } from '../family/records.js';
import { dayHeading } from './describe.js';
import { doseRows, listDoseRows, rowTime, todaysDoses, type DoseRow } from './doses.js';
import { ClinicianListBlock } from './clinicianList.js';
import { DoseList } from './glance.js';
import { CareNav, PeriodForm, periodOf, ZoneNote, type CareView } from './parts.js';
import { aideNamer } from './people.js';
import { SCHEDULE_DAYS } from './timeline.js';

const MAX_EVENTS = 2000;

/** Rows by day in the viewer's zone, newest day first, each day's rows earliest first. */
function byDay(rows: DoseRow[], v: CareView): { day: string; at: Date; rows: DoseRow[] }[] {
  const days = new Map<string, { day: string; at: Date; rows: DoseRow[] }>();
  for (const r of rows) {
    const t = rowTime(r);
    const day = v.clock.isoDay(t);
    const d = days.get(day) ?? { day, at: t, rows: [] };
    d.rows.push(r);
    days.set(day, d);
  }
  return [...days.values()]
    .sort((a, b) => (a.day < b.day ? 1 : -1))
    .map((d) => ({ ...d, rows: d.rows.sort((a, b) => rowTime(a).getTime() - rowTime(b).getTime()) }));
}

export async function medicationsBody(store: WorkspaceStore, db: Db, list: MedicationList, v: CareView) {
  const { lovedOne, clock, now } = v;
  const period = periodOf(v.query, now);
  const startOfToday = clock.startOf(clock.isoDay(now))!;
  // The daily times are read from at least two weeks, whatever period is shown.
  const readFrom = new Date(Math.min(period.since.getTime(), startOfToday.getTime() - SCHEDULE_DAYS * 86_400_000));
  const [doses, notes, meds, portal] = await Promise.all([
    store.listCareEvents(lovedOne._id, { since: readFrom, types: ['med_administered', 'med_refused', 'med_missed'], limit: MAX_EVENTS }),
    store.listCareEvents(lovedOne._id, { since: period.since, types: ['note_added'], limit: MAX_EVENTS }),
    list.list(lovedOne._id),
    // The clinicians' list as it stands, however long ago it was written.
    store.listCareEvents(lovedOne._id, { types: ['portal_medication'], limit: MAX_EVENTS }),
  ]);
  const clinicians = portalMedicationsOf(portal.events);
  const aide = await aideNamer(db, [...doses.events, ...notes.events]);
  const rows = doseRows(doses.events, notes.events, clock, period.since, now, aide);
  const guessed = todaysDoses(rows, clock, now);
  // With a medication list, today's doses are its schedule's; the agency's days stay the history.
  const fromList = meds.length > 0;
  const today = fromList ? listDoseRows(meds, doses.events, now, aide, guessed) : guessed;
  const history = byDay(
    rows.filter((r) => !guessed.includes(r)),
    v,
  );
  const action = `/care/${encodeURIComponent(lovedOne._id)}/medications`;
  return {
    title: `${lovedOne.displayName}: medications`,
    body: (
      <>
        <h1>{lovedOne.displayName}</h1>
        <CareNav lovedOne={lovedOne} current="medications" />
        <section class="card meds-today" aria-labelledby="meds-today-title">
          <h2 id="meds-today-title">Medicines today, {clock.day(now)}</h2>
          {today.length ? (
            <DoseList rows={today} clock={clock} id="meds-today" />
          ) : (
            <p class="muted" id="meds-today">
              No doses scheduled or given today so far.
            </p>
          )}
          {fromList ? (
            <p class="muted" id="meds-today-source">
              From the <a href={`${action.replace(/\/medications$/, '')}/medication-list`}>medication list</a>: a dose with nothing recorded an hour after its
              time (or the grace the medication sets) shows as missed.
            </p>
          ) : (
            <p class="muted" id="meds-today-source">
              Times guessed from what the agency recorded on earlier days.{' '}
              <a href={`${action.replace(/\/medications$/, '')}/medication-list`}>Keep a medication list</a> to set them yourself.
            </p>
          )}
          <ZoneNote clock={clock} now={now} />
        </section>
        {clinicians.length ? <ClinicianListBlock family={meds} portal={clinicians} lovedOneId={lovedOne._id} /> : null}
        <section class="card" id="medications" aria-labelledby="meds-history-title">
          <h2 id="meds-history-title">Earlier doses</h2>
          <PeriodForm action={action} current={period.key} />
          <p class="muted">
            “Not recorded” is a time the agency scheduled this medicine on other days with no dose recorded for it: check with them before acting. A refusal is
            the aide's note of that day naming the medicine.
          </p>
          {history.length ? (
            history.map((d) => (
              <section class="day" aria-labelledby={`meds-day-${d.day}`}>
                <h3 class="day-heading" id={`meds-day-${d.day}`}>
                  {dayHeading(clock, d.day, d.at, now)}
                </h3>
                <DoseList rows={d.rows} clock={clock} id={`meds-${d.day}`} />
              </section>
            ))
          ) : (
            <p class="muted">No earlier doses recorded in this period. Doses a linked agency gives appear here.</p>
          )}
        </section>
      </>
    ),
  };
}
