// Bar charts drawn as SVG markup inside the page.
// No script and no style attribute (the site's Content-Security-Policy allows neither): colours come
// from presentation attributes and the stylesheet; JSX escapes every text; a title and description
// are the chart's text alternative.
import { renderMarkup } from '../http/html.js';

export interface BarChart {
  /** Prefix of the chart's element ids; unique within the page. */
  id: string;
  title: string;
  /** The text alternative: what the chart shows, in words. */
  description: string;
  /** Axis titles; the y title carries the unit. */
  xLabel: string;
  yLabel: string;
  /** One bar each: `label` under the bar, `title` shown on hover. */
  bars: readonly { label: string; value: number; title: string }[];
}

const WIDTH = 480;
const HEIGHT = 300;
// Room on the left for the value labels at the larger size a phone draws them (styles.ts).
const PLOT = { left: 100, right: 16, top: 16, bottom: 56 };
/** Beyond this many bars, only every fifth bar (and the first) is labelled, so labels never overlap. */
const ALL_LABELS_UP_TO = 15;

const num = (n: number) => (Number.isInteger(n) ? String(n) : n.toFixed(1));

/** A round step (1, 2, 2.5 or 5 times a power of ten) giving about four gridlines up to `max`. */
export function niceStep(max: number): number {
  if (!(max > 0)) return 1;
  const raw = max / 4;
  const power = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * power).find((s) => s >= raw);
  return step ?? 10 * power;
}

/** The chart as an `<svg role="img">` element labelled by its own title and description. */
export function BarChartSvg({ chart }: { chart: BarChart }) {
  const id = chart.id;
  const plotW = WIDTH - PLOT.left - PLOT.right;
  const plotH = HEIGHT - PLOT.top - PLOT.bottom;
  const bottom = PLOT.top + plotH;
  const max = Math.max(0, ...chart.bars.map((b) => b.value));
  const step = niceStep(max);
  const top = Math.max(step, Math.ceil(max / step) * step);
  const y = (v: number) => bottom - (v / top) * plotH;
  const ticks: number[] = [];
  for (let v = 0; v <= top + step / 2; v += step) ticks.push(v);
  const band = plotW / Math.max(1, chart.bars.length);
  const barW = band * 0.7;
  const labelled = (i: number) => chart.bars.length <= ALL_LABELS_UP_TO || i === 0 || (i + 1) % 5 === 0;

  return (
    <div class="chart">
      <svg xmlns="http://www.w3.org/2000/svg" class="chart-svg" viewBox={`0 0 ${WIDTH} ${HEIGHT}`} role="img" aria-labelledby={`${id}-title ${id}-desc`}>
        <title id={`${id}-title`}>{chart.title}</title>
        <desc id={`${id}-desc`}>{chart.description}</desc>
        {ticks.map((v) => (
          <>
            <line class="chart-grid" x1={PLOT.left} x2={WIDTH - PLOT.right} y1={num(y(v))} y2={num(y(v))} stroke="#d5dbe3" stroke-width="1" />
            <text class="chart-tick" x={PLOT.left - 8} y={num(y(v))} text-anchor="end" dominant-baseline="middle" font-size="13" fill="#4f5b6b">
              {v.toLocaleString('en-US')}
            </text>
          </>
        ))}
        {chart.bars.map((b, i) => {
          const x = PLOT.left + i * band + (band - barW) / 2;
          const value = Math.max(0, b.value);
          return (
            <>
              <rect class="chart-bar" x={num(x)} y={num(y(value))} width={num(barW)} height={num(bottom - y(value))} fill="#1f5f8b">
                <title>{b.title}</title>
              </rect>
              {labelled(i) ? (
                <text class="chart-tick" x={num(x + barW / 2)} y={bottom + 18} text-anchor="middle" font-size="13" fill="#4f5b6b">
                  {b.label}
                </text>
              ) : null}
            </>
          );
        })}
        <line class="chart-axis" x1={PLOT.left} x2={WIDTH - PLOT.right} y1={bottom} y2={bottom} stroke="#1d2430" stroke-width="1" />
        <text class="chart-label" x={PLOT.left + plotW / 2} y={HEIGHT - 10} text-anchor="middle" font-size="14" fill="#1d2430">
          {chart.xLabel}
        </text>
        <text
          class="chart-label"
          x="0"
          y="0"
          transform={`translate(16 ${PLOT.top + plotH / 2}) rotate(-90)`}
          text-anchor="middle"
          font-size="14"
          fill="#1d2430"
        >
          {chart.yLabel}
        </text>
      </svg>
    </div>
  );
}

/** The chart as markup on its own (tests, and anything outside a page). */
export const barChartSvg = (chart: BarChart): string => renderMarkup(<BarChartSvg chart={chart} />);
