// The SVG bar chart: labelled as one image by its title and description, no style attribute or script, every text escaped.
import { describe, expect, it } from 'vitest';
import { barChartSvg, niceStep, type BarChart } from './chart.js';
import { renderMarkdown } from './doc.js';
import { blocksHtml } from './docHtml.js';

const chart = (over: Partial<BarChart> = {}): BarChart => ({
  id: 'cost-chart',
  title: 'Cost by year',
  description: 'Bar chart of the yearly cost over 3 years, from $100 to $121.',
  xLabel: 'Year of care',
  yLabel: 'Cost a year (US dollars)',
  bars: [
    { label: '1', value: 100, title: 'Year 1: $100' },
    { label: '2', value: 110, title: 'Year 2: $110' },
    { label: '3', value: 121, title: 'Year 3: $121' },
  ],
  ...over,
});

const attr = (svg: string, name: string) => svg.match(new RegExp(`<svg[^>]* ${name}="([^"]*)"`))?.[1];

describe('barChartSvg', () => {
  it('is one image named by its own title and described by its own description', () => {
    const svg = barChartSvg(chart());
    expect(attr(svg, 'role')).toBe('img');
    const ids = attr(svg, 'aria-labelledby')?.split(' ');
    expect(ids).toEqual(['cost-chart-title', 'cost-chart-desc']);
    expect(svg).toContain('<title id="cost-chart-title">Cost by year</title>');
    expect(svg).toContain('<desc id="cost-chart-desc">Bar chart of the yearly cost over 3 years, from $100 to $121.</desc>');
    expect(svg.indexOf('<title id=')).toBeLessThan(svg.indexOf('<rect'));
  });

  it('draws a bar per value on a round scale, with both axis titles and their unit', () => {
    const svg = barChartSvg(chart());
    const heights = [...svg.matchAll(/<rect [^>]*height="([\d.]+)"/g)].map((m) => Number(m[1]));
    expect(heights).toHaveLength(3);
    // Scale 0-150 in steps of 50: bar heights are in proportion to the values.
    expect(heights[1]! / heights[0]!).toBeCloseTo(1.1, 2);
    expect(heights[2]! / heights[0]!).toBeCloseTo(1.21, 2);
    for (const tick of ['>0<', '>50<', '>100<', '>150<']) expect(svg).toContain(tick);
    expect(svg).toContain('>Year of care</text>');
    expect(svg).toContain('>Cost a year (US dollars)</text>');
    expect(svg).toContain('<title>Year 2: $110</title>');
  });

  it('has no style attribute, style element, script or event handler, which the site CSP would block', () => {
    const svg = barChartSvg(chart());
    expect(svg).not.toMatch(/\sstyle=|<style|<script|\son[a-z]+=/i);
    expect(svg).toContain('fill="#1f5f8b"');
    expect(svg).toContain('class="chart-bar"');
  });

  it('escapes every text it is given', () => {
    const payload = '"><script>alert(1)</script><img src=x onerror=alert(1)>';
    const svg = barChartSvg(
      chart({
        id: `x${payload}`,
        title: payload,
        description: payload,
        xLabel: payload,
        yLabel: payload,
        bars: [{ label: payload, value: 5, title: payload }],
      }),
    );
    // The payload stays text: no element from it, and no attribute once quoted values and text are set aside.
    expect(svg).not.toMatch(/<script|<img/i);
    expect(svg.replace(/"[^"]*"/g, '""').replace(/>[^<]*</g, '><')).not.toMatch(/onerror|alert/);
    // Six texts, and the id twice in aria-labelledby and once each on the title and the description:
    // every one arrives as the payload's own characters once the entities are read back.
    const decode = (v: string) =>
      v
        .replace(/&lt;/g, '<')
        .replace(/&gt;/g, '>')
        .replace(/&quot;/g, '"')
        .replace(/&#39;/g, "'")
        .replace(/&amp;/g, '&');
    expect(svg.match(/&lt;script(>|&gt;)alert\(1\)&lt;\/script(>|&gt;)/g)?.length).toBe(10);
    expect(decode(attr(svg, 'aria-labelledby')!)).toBe(`x${payload}-title x${payload}-desc`);
  });

  it('labels every fifth bar when there are many, and copes with nothing to draw', () => {
    const many = barChartSvg(chart({ bars: Array.from({ length: 30 }, (_, i) => ({ label: `y${i + 1}`, value: 1000 + i, title: `t${i}` })) }));
    expect([...many.matchAll(/>(y\d+)<\/text>/g)].map((m) => m[1])).toEqual(['y1', 'y5', 'y10', 'y15', 'y20', 'y25', 'y30']);
    const empty = barChartSvg(chart({ bars: [] }));
    expect(empty).not.toContain('<rect');
    expect(empty).not.toMatch(/NaN|Infinity/);
  });

  it('picks round gridline steps', () => {
    expect([niceStep(121), niceStep(4_680), niceStep(471_000), niceStep(1), niceStep(0)]).toEqual([50, 2000, 200_000, 0.25, 1]);
  });
});

describe('the chart block', () => {
  it('is drawn in the HTML and left out of the markdown, whose table carries the data', () => {
    const page = {
      status: 200,
      title: 'T',
      description: 'D',
      path: '/x',
      blocks: [
        { kind: 'chart' as const, chart: chart() },
        { kind: 'table' as const, caption: 'Cost by year', head: ['Year', 'Cost'], rows: [[['1'], ['$100']]] },
      ],
    };
    expect(blocksHtml(page.blocks)).toContain('<svg');
    const md = renderMarkdown(page, 'https://example.org');
    expect(md).not.toMatch(/<svg|Bar chart/);
    expect(md).toContain('| 1 | $100 |');
  });
});
