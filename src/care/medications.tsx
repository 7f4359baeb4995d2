// Medications: per medication, every dose given (when, how much, by whom), the last one, and the
// doses the agency's own schedule implies but nobody recorded.
import type { CareEventRecord, WorkspaceStore } from '../family/records.js';
import { CareNav, PeriodForm, periodOf, ZoneNote, type CareView } from './parts.js';
import type { Clock } from './time.js';

const MAX_DOSES = 1000;
/** A scheduled dose is "not recorded" only after this long: agencies often record a little late. */
const GRACE_MS = 60 * 60_000;

interface Dose {
  at: Date;
  amount: string;
  by: string;
  scheduled?: Date;
}

interface Medication {
  name: string;
  doses: Dose[];
  missed: Date[];
}

const str = (v: unknown) => (typeof v === 'string' || typeof v === 'number' ? String(v).trim() : '');

function toDose(e: CareEventRecord): Dose {
  const p = e.payload;
  const scheduled = typeof p.scheduled_at === 'string' ? new Date(p.scheduled_at) : null;
  return {
    at: e.occurredAt,
    amount: [str(p.dose_amount), str(p.dose_unit)].filter(Boolean).join(' '),
    by: str(p.administered_by) || 'someone',
    ...(scheduled && !Number.isNaN(scheduled.getTime()) ? { scheduled } : {}),
  };
}

/**
 * Doses scheduled but not recorded: a time of day that the doses' `scheduled_at` names on two or
 * more days is taken as a daily slot from its first day on; a day in the period without a dose
 * scheduled at that slot is listed once the slot (plus a grace hour) has passed.
 */
function missedDoses(doses: Dose[], clock: Clock, since: Date, now: Date): Date[] {
  const slots = new Map<string, { days: Set<string>; first: string; offset: number }>();
  for (const d of doses) {
    if (!d.scheduled) continue;
    const day = clock.isoDay(d.scheduled);
    const key = clock.time(d.scheduled);
    const start = clock.startOf(day)!;
    const slot = slots.get(key) ?? { days: new Set<string>(), first: day, offset: d.scheduled.getTime() - start.getTime() };
    slot.days.add(day);
    if (day < slot.first) slot.first = day;
    slots.set(key, slot);
  }
  const missed: Date[] = [];
  for (const slot of slots.values()) {
    if (slot.days.size < 2) continue;
    for (let t = Date.parse(`${slot.first}T00:00:00Z`); ; t += 86_400_000) {
      const day = new Date(t).toISOString().slice(0, 10);
      const due = new Date(clock.startOf(day)!.getTime() + slot.offset);
      if (due.getTime() > now.getTime() - GRACE_MS) break;
      if (due >= since && !slot.days.has(day)) missed.push(due);
    }
  }
  return missed.sort((a, b) => b.getTime() - a.getTime());
}

export function medicationsOf(events: CareEventRecord[], clock: Clock, since: Date, now: Date): Medication[] {
  const byName = new Map<string, Medication>();
  for (const e of events) {
    const name = str(e.payload.medication_name) || 'Unnamed medication';
    const key = name.toLowerCase();
    const med = byName.get(key) ?? { name, doses: [], missed: [] };
    med.doses.push(toDose(e));
    byName.set(key, med);
  }
  return [...byName.values()]
    .map((m) => ({ ...m, doses: m.doses.sort((a, b) => b.at.getTime() - a.at.getTime()), missed: missedDoses(m.doses, clock, since, now) }))
    .sort((a, b) => a.name.localeCompare(b.name));
}

function MedicationCard({ med, clock, index }: { med: Medication; clock: Clock; index: number }) {
  const last = med.doses[0]!;
  return (
    <section class="card medication" aria-labelledby={`med-${index}`}>
      <h2 id={`med-${index}`}>{med.name}</h2>
      <p class="last-dose">
        Last dose: {last.amount || 'a dose'} given by {last.by}, {clock.dayTime(last.at)}.
      </p>
      {med.missed.length ? (
        <div class="notice missed">
          <p>
            <strong>Scheduled but not recorded</strong> (from the times the agency scheduled other doses of {med.name}; check with them before acting):
          </p>
          <ul>
            {med.missed.slice(0, 30).map((d) => (
              <li>{clock.dayTime(d)}</li>
            ))}
          </ul>
        </div>
      ) : null}
      <div class="scroll">
        <table class="stack">
          <caption>Doses of {med.name} given</caption>
          <thead>
            <tr>
              <th scope="col">When</th>
              <th scope="col">Dose</th>
              <th scope="col">Given by</th>
              <th scope="col">Scheduled for</th>
            </tr>
          </thead>
          <tbody>
            {med.doses.map((d) => (
              <tr>
                <td data-label="When">{clock.dayTime(d.at)}</td>
                <td data-label="Dose">{d.amount}</td>
                <td data-label="Given by">{d.by}</td>
                <td data-label="Scheduled for">{d.scheduled ? clock.dayTime(d.scheduled) : ''}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}

export async function medicationsBody(store: WorkspaceStore, v: CareView) {
  const { lovedOne, clock, now } = v;
  const period = periodOf(v.query, now);
  const { events } = await store.listCareEvents(lovedOne._id, { since: period.since, types: ['med_administered'], limit: MAX_DOSES });
  const meds = medicationsOf(events, clock, period.since, now);
  return {
    title: `${lovedOne.displayName}: medications`,
    body: (
      <>
        <h1>{lovedOne.displayName}</h1>
        <CareNav lovedOne={lovedOne} current="medications" />
        <PeriodForm action={`/care/${encodeURIComponent(lovedOne._id)}/medications`} current={period.key} />
        <ZoneNote clock={clock} now={now} />
        <div id="medications">
          {meds.length ? (
            meds.map((med, i) => <MedicationCard med={med} clock={clock} index={i} />)
          ) : (
            <section class="card">
              <p class="muted">No doses recorded in this period. Doses a linked agency gives appear here.</p>
            </section>
          )}
        </div>
      </>
    ),
  };
}
