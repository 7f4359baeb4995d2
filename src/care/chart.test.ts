// The vital-sign chart's axes: gridlines on round values, and time fitted to the readings.
import { h } from 'preact';
import { describe, expect, it } from 'vitest';
import { renderMarkup } from '../http/html.js';
import { niceTicks, VitalChart } from './chart.js';
import { clockIn } from './time.js';
import { vitalKind, type VitalSeries } from './vitals.js';

const DAY = 86_400_000;
const now = new Date('2026-11-27T12:00:00Z');

/** Fourteen days of blood pressure, one reading a day, ending today. */
const bloodPressure: VitalSeries = {
  kind: vitalKind('blood_pressure'),
  unit: 'mmHg',
  readings: Array.from({ length: 14 }, (_, i) => ({
    at: new Date(now.getTime() - (13 - i) * DAY),
    value: 118 + ((i * 7) % 25),
    second: 76 + ((i * 5) % 13),
    by: 'Ana',
  })),
};

function draw(series: VitalSeries): string {
  return renderMarkup(h(VitalChart, { series, id: 'bp', clock: clockIn('America/Chicago', now) }));
}

const tickLabels = (svg: string) => [...svg.matchAll(/<g class="tick">.*?<text[^>]*>([^<]*)<\/text>/g)].map((m) => m[1]!);
const dotXs = (svg: string) => [...svg.matchAll(/<circle class="dot" cx="([\d.]+)"/g)].map((m) => Number(m[1]));

describe('vital chart axes', () => {
  it('when readings span 76 to 142 mmHg, then the gridlines sit on round values that cover them', () => {
    const labels = tickLabels(draw(bloodPressure));
    expect(labels).toEqual(['60', '80', '100', '120', '140', '160']);
  });

  it('when fourteen days of readings are drawn from a 30-day period, then they fill the width of the chart', () => {
    const xs = dotXs(draw(bloodPressure));
    const [first, last] = [Math.min(...xs), Math.max(...xs)];
    // The plot runs from x=72 to x=624: the first reading near its left edge, the last near its right.
    expect(first).toBeLessThan(72 + 30);
    expect(last).toBeGreaterThan(624 - 30);
    const svg = draw(bloodPressure);
    expect(svg).toContain('>Sat, Nov 14<'); // the first reading's day labels the axis, not the period's start
    expect(svg).toContain('>Fri, Nov 27<');
  });

  it('when there is one reading, then it sits in the middle and the axis still has round gridlines', () => {
    const one: VitalSeries = { ...bloodPressure, kind: vitalKind('temperature'), unit: '°F', readings: [{ at: now, value: 98.6, by: 'Ana' }] };
    const svg = draw(one);
    expect(dotXs(svg)).toEqual([348]);
    for (const label of tickLabels(svg)) expect(Number(label) * 2).toSatisfy(Number.isInteger);
  });

  it('niceTicks steps by 1, 2 or 5 times a power of ten, with no floating-point tails', () => {
    expect(niceTicks(74, 147)).toEqual([60, 80, 100, 120, 140, 160]);
    expect(niceTicks(97, 100)).toEqual([97, 98, 99, 100]);
    expect(niceTicks(70, 71)).toEqual([70, 70.5, 71]);
    expect(niceTicks(0.1, 0.7)).toEqual([0, 0.2, 0.4, 0.6, 0.8]);
    expect(niceTicks(1200, 1900)).toEqual([1200, 1400, 1600, 1800, 2000]);
  });
});
