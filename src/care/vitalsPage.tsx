// Vital signs: one chart per kind over the chosen period, each with its text alternative and a
// table of the same readings. No reference ranges are drawn: none is shown without a cited source.
import type { Db } from 'mongodb';
import { PORTAL_READING_TYPES } from '../family/portalRecords.js';
import type { WorkspaceStore } from '../family/records.js';
import { VitalChart } from './chart.js';
import { CareNav, PeriodForm, periodOf, ZoneNote, type CareView } from './parts.js';
import { aideNamer } from './people.js';
import type { Clock } from './time.js';
import { seriesOf, type VitalSeries } from './vitals.js';

const MAX_READINGS = 2000;

const fmt = (n: number) => String(Math.round(n * 100) / 100);

function VitalSection({ s, index, clock }: { s: VitalSeries; index: number; clock: Clock }) {
  const id = `vital-${index}`;
  const heading = `${s.kind.label}${s.unit ? ` (${s.unit})` : ''}`;
  const portals = [...new Set(s.readings.flatMap((r) => (r.portal ? [r.portal] : [])))];
  return (
    <section class="card vital" aria-labelledby={`${id}-h`} data-vital={s.kind.key}>
      <h2 id={`${id}-h`}>{heading}</h2>
      {s.kind.pair ? (
        <p class="legend">
          <span class="key key-a">{s.kind.pair[0]}</span> <span class="key key-b">{s.kind.pair[1]}</span>
        </p>
      ) : null}
      {portals.length ? (
        <p class="muted vital-from">
          {s.readings.every((r) => r.portal) ? 'From ' : 'Includes readings from '}
          {portals.map((p) => `${p}'s portal`).join(' and ')}.
        </p>
      ) : null}
      <VitalChart series={s} id={id} clock={clock} />
      <details>
        <summary>Table of the readings</summary>
        <div class="scroll">
          <table class="stack">
            <caption>{heading}: every reading in the period</caption>
            <thead>
              <tr>
                <th scope="col">When</th>
                {s.kind.pair ? (
                  <>
                    <th scope="col">{s.kind.pair[0]}</th>
                    <th scope="col">{s.kind.pair[1]}</th>
                  </>
                ) : (
                  <th scope="col">Value</th>
                )}
                <th scope="col">Recorded by</th>
              </tr>
            </thead>
            <tbody>
              {[...s.readings].reverse().map((r) => (
                <tr>
                  <td data-label="When">{clock.dayTime(r.at)}</td>
                  <td data-label={s.kind.pair ? s.kind.pair[0] : 'Value'}>
                    {fmt(r.value)}
                    {s.unit ? ` ${s.unit}` : ''}
                  </td>
                  {s.kind.pair ? <td data-label={s.kind.pair[1]}>{r.second === undefined ? '' : `${fmt(r.second)}${s.unit ? ` ${s.unit}` : ''}`}</td> : null}
                  <td data-label="Recorded by">{r.portal ? `From ${r.by}` : r.by}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </details>
    </section>
  );
}

export async function vitalsBody(store: WorkspaceStore, db: Db, v: CareView) {
  const { lovedOne, clock, now } = v;
  const period = periodOf(v.query, now);
  const { events } = await store.listCareEvents(lovedOne._id, { since: period.since, types: ['vital_recorded', ...PORTAL_READING_TYPES], limit: MAX_READINGS });
  const series = seriesOf(events, await aideNamer(db, events));
  return {
    title: `${lovedOne.displayName}: vital signs`,
    body: (
      <>
        <h1>{lovedOne.displayName}</h1>
        <CareNav lovedOne={lovedOne} current="vitals" />
        <PeriodForm action={`/care/${encodeURIComponent(lovedOne._id)}/vitals`} current={period.key} />
        <ZoneNote clock={clock} now={now} />
        <p class="muted">
          Readings as the agency, the family or the loved one's health-system portal recorded them, in the units each sent (a portal's readings join by their
          LOINC code). No normal ranges are drawn: what is normal depends on the person, so ask their clinician.
        </p>
        <div id="vitals">
          {series.length ? (
            series.map((s, i) => <VitalSection s={s} index={i} clock={clock} />)
          ) : (
            <section class="card">
              <p class="muted">No vital signs recorded in this period. Readings a linked agency or a connected health portal records appear here.</p>
            </section>
          )}
        </div>
      </>
    ),
  };
}
