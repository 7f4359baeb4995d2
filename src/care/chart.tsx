// One vital sign over a period as a server-rendered SVG line chart: no script, no inline style
// (classes from the app's stylesheet), with a title and description for screen readers.
import type { Clock } from './time.js';
import type { VitalSeries } from './vitals.js';

const W = 640;
const H = 260;
// Room on the left for the value labels at the larger size a phone draws them (app.css).
const PAD = { left: 72, right: 16, top: 16, bottom: 36 };

const round = (n: number) => Math.round(n * 10) / 10;
const fmt = (n: number) => (Number.isInteger(n) ? String(n) : n.toFixed(1));

/** Bounds a little wider than the values (a flat series still gets a band). */
function bounds(values: number[]): [number, number] {
  let lo = Math.min(...values);
  let hi = Math.max(...values);
  if (lo === hi) [lo, hi] = [lo - Math.max(1, Math.abs(lo) * 0.05), hi + Math.max(1, Math.abs(hi) * 0.05)];
  const pad = (hi - lo) * 0.1;
  return [Math.floor(lo - pad), Math.ceil(hi + pad)];
}

/**
 * Gridlines on round values ("nice numbers": 1, 2 or 5 times a power of ten apart) covering
 * `lo`..`hi` in about `count` steps: 60, 80 … 160 rather than 74.5, 110.5, 146.5, which a reader
 * has to work out before reading the chart. The first and last are the axis's own bounds.
 */
export function niceTicks(lo: number, hi: number, count = 4): number[] {
  const raw = Math.max(hi - lo, Number.EPSILON) / count;
  const power = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * power).find((s) => s >= raw * (1 - 1e-9)) ?? 10 * power;
  const first = Math.floor(lo / step + 1e-9);
  const last = Math.ceil(hi / step - 1e-9);
  const ticks: number[] = [];
  // Multiples of the step, each rounded to the step's precision so no 0.30000000000000004 shows.
  const digits = Math.max(0, -Math.floor(Math.log10(step)) + 1);
  for (let i = first; i <= last; i++) ticks.push(Number((i * step).toFixed(digits)));
  return ticks;
}

/** The time axis: the readings' own span, a little wider so no dot sits on the edge (a lone reading gets a day). */
function timeSpan(times: number[]): [number, number] {
  const first = Math.min(...times);
  const last = Math.max(...times);
  const pad = Math.max((last - first) * 0.03, first === last ? 12 * 3_600_000 : 0);
  return [first - pad, last + pad];
}

export function describeSeries(s: VitalSeries, clock: Clock): string {
  const n = s.readings.length;
  const first = s.readings[0]!;
  const last = s.readings[n - 1]!;
  const values = s.readings.map((r) => r.value);
  const unit = s.unit ? ` ${s.unit}` : '';
  const range = s.kind.pair
    ? `${s.kind.pair[0].toLowerCase()} from ${fmt(Math.min(...values))} to ${fmt(Math.max(...values))}${unit}`
    : `from ${fmt(Math.min(...values))} to ${fmt(Math.max(...values))}${unit}`;
  const latest = s.kind.pair && last.second !== undefined ? `${fmt(last.value)}/${fmt(last.second)}` : fmt(last.value);
  return `${n} reading${n === 1 ? '' : 's'} between ${clock.day(first.at)} and ${clock.day(last.at)}, ${range}; the latest, ${clock.dayTime(last.at)}, was ${latest}${unit}.`;
}

/** The chart of one series: its value axis on round numbers, its time axis the readings' own span
 *  (fourteen days of readings fill the width, whatever period the page asked for). */
export function VitalChart({ series, id, clock }: { series: VitalSeries; id: string; clock: Clock }) {
  const values = series.readings.flatMap((r) => (r.second === undefined ? [r.value] : [r.value, r.second]));
  const ticks = niceTicks(...bounds(values));
  const [lo, hi] = [ticks[0]!, ticks.at(-1)!];
  const [t0, t1] = timeSpan(series.readings.map((r) => r.at.getTime()));
  const span = Math.max(1, t1 - t0);
  const firstAt = series.readings[0]!.at;
  const lastAt = series.readings.at(-1)!.at;
  const x = (d: Date) => round(PAD.left + ((d.getTime() - t0) / span) * (W - PAD.left - PAD.right));
  const y = (v: number) => round(H - PAD.bottom - ((v - lo) / (hi - lo)) * (H - PAD.top - PAD.bottom));
  const lines: { cls: string; label: string; points: { at: Date; v: number; portal?: string }[] }[] = [
    {
      cls: 'series-a',
      label: series.kind.pair?.[0] ?? series.kind.label,
      points: series.readings.map((r) => ({ at: r.at, v: r.value, ...(r.portal ? { portal: r.portal } : {}) })),
    },
  ];
  if (series.kind.pair)
    lines.push({
      cls: 'series-b',
      label: series.kind.pair[1],
      points: series.readings.flatMap((r) => (r.second === undefined ? [] : [{ at: r.at, v: r.second, ...(r.portal ? { portal: r.portal } : {}) }])),
    });
  const unit = series.unit ? ` ${series.unit}` : '';
  return (
    <svg class="vital-chart" viewBox={`0 0 ${W} ${H}`} role="img" aria-labelledby={`${id}-title ${id}-desc`} xmlns="http://www.w3.org/2000/svg">
      <title id={`${id}-title`}>{`${series.kind.label}${series.unit ? ` (${series.unit})` : ''}`}</title>
      <desc id={`${id}-desc`}>{describeSeries(series, clock)}</desc>
      {ticks.map((t) => (
        <g class="tick">
          <line class="grid" x1={PAD.left} x2={W - PAD.right} y1={y(t)} y2={y(t)} />
          <text class="axis" x={PAD.left - 6} y={y(t) + 4} text-anchor="end">
            {fmt(t)}
          </text>
        </g>
      ))}
      <text class="axis" x={x(firstAt)} y={H - 10} text-anchor="start">
        {clock.day(firstAt)}
      </text>
      {clock.day(lastAt) === clock.day(firstAt) ? null : (
        <text class="axis" x={x(lastAt)} y={H - 10} text-anchor="end">
          {clock.day(lastAt)}
        </text>
      )}
      {lines.map((l) => (
        <g class={l.cls}>
          {l.points.length > 1 ? <polyline class="line" points={l.points.map((p) => `${x(p.at)},${y(p.v)}`).join(' ')} /> : null}
          {l.points.map((p) => (
            <circle class="dot" cx={x(p.at)} cy={y(p.v)} r="4">
              <title>{`${l.label} ${fmt(p.v)}${unit}, ${clock.dayTime(p.at)}${p.portal ? `, from ${p.portal}'s portal` : ''}`}</title>
            </circle>
          ))}
        </g>
      ))}
    </svg>
  );
}
