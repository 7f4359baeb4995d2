// The site's one stylesheet and icon, kept in code so a build ships them without copying assets.

export const STYLESHEET = `
:root {
  --ink: #1d2430;
  --muted: #4f5b6b;
  --line: #d5dbe3;
  --paper: #ffffff;
  --wash: #f4f6f9;
  --brand: #1f5f8b;
  --brand-dark: #154566;
  --error: #a4262c;
  --error-wash: #fdecea;
  --info-wash: #e8f1f8;
  font-family: system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
  color: var(--ink);
  background: var(--wash);
  line-height: 1.55;
}
* { box-sizing: border-box; }
body { margin: 0; }
a { color: var(--brand); text-underline-offset: 2px; }
a:hover { color: var(--brand-dark); }
a:focus-visible, button:focus-visible, input:focus-visible, select:focus-visible, textarea:focus-visible { outline: 3px solid #f2a900; outline-offset: 2px; }
.skip { position: absolute; left: -999px; top: 0; background: var(--paper); padding: .5rem 1rem; }
.skip:focus { left: 1rem; }
header.site { background: var(--brand-dark); color: #fff; }
header.site .bar { max-width: 60rem; margin: 0 auto; padding: .75rem 1rem; display: flex; flex-wrap: wrap; gap: .5rem 1.5rem; align-items: baseline; }
header.site .brand { color: #fff; font-weight: 700; font-size: 1.25rem; text-decoration: none; }
header.site nav ul { list-style: none; display: flex; flex-wrap: wrap; gap: .25rem 1rem; margin: 0; padding: 0; }
header.site nav a { color: #fff; }
header.site nav a[aria-current="page"] { font-weight: 700; text-decoration-thickness: 3px; }
header.site .app { color: #fff; margin-left: auto; }
main { max-width: 60rem; margin: 0 auto; padding: 1.5rem 1rem 3rem; }
h1 { font-size: 2rem; line-height: 1.2; margin: .5rem 0 .75rem; }
h2 { font-size: 1.4rem; margin: 2rem 0 .5rem; }
h3 { font-size: 1.1rem; margin: 1.25rem 0 .25rem; }
.lead { font-size: 1.1rem; color: var(--muted); max-width: 45rem; }
.card { background: var(--paper); border: 1px solid var(--line); border-radius: .5rem; padding: .25rem 1.25rem 1rem; margin: 1rem 0; }
.card h2, .card h3 { margin-top: .75rem; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: .35rem 1rem; margin: 1rem 0; }
dl.facts dt { font-weight: 600; }
dl.facts dd { margin: 0; }
ul { padding-left: 1.25rem; }
li { margin: .25rem 0; }
.table-wrap { overflow-x: auto; }
table { border-collapse: collapse; width: 100%; background: var(--paper); margin: 1rem 0; }
caption { text-align: left; font-weight: 600; padding: .5rem 0; }
th, td { border: 1px solid var(--line); padding: .4rem .6rem; text-align: left; }
th { background: var(--wash); }
.form { background: var(--paper); border: 1px solid var(--line); border-radius: .5rem; padding: 1rem 1.25rem; margin: 1rem 0; display: grid; gap: .75rem; max-width: 40rem; }
.field { display: grid; gap: .25rem; min-width: 0; }
.field label { font-weight: 600; }
.field input, .field select, .field textarea { font: inherit; padding: .45rem .55rem; border: 1px solid #8a96a6; border-radius: .3rem; background: #fff; color: var(--ink); max-width: 100%; min-width: 0; }
.field-error input, .field-error select, .field-error textarea { border-color: var(--error); }
.hint { margin: 0; color: var(--muted); font-size: .9rem; }
.error { margin: 0; color: var(--error); font-weight: 600; }
button { font: inherit; font-weight: 600; background: var(--brand); color: #fff; border: 0; border-radius: .3rem; padding: .55rem 1.1rem; cursor: pointer; justify-self: start; }
button:hover { background: var(--brand-dark); }
.field textarea { width: 100%; box-sizing: border-box; resize: vertical; }
.secondary { background: #fff; color: var(--brand); border: 1px solid var(--brand); }
.secondary:hover { background: #eef3f8; color: var(--brand-dark); }
.notice { border-radius: .4rem; padding: .25rem 1rem; margin: 1rem 0; border-left: 4px solid var(--brand); background: var(--info-wash); }
.notice-error { border-left-color: var(--error); background: var(--error-wash); }
.user-text { background: var(--paper); border-left: 3px solid var(--line); padding: .1rem 1rem; margin: .5rem 0 1rem; overflow-wrap: anywhere; }
.card .user-text { background: none; border-left: 0; padding: 0; margin: 0; }
.chart { background: var(--paper); border: 1px solid var(--line); border-radius: .5rem; padding: .5rem; margin: 1rem 0; max-width: 36rem; }
.chart-svg { display: block; width: 100%; height: auto; }
.chart-bar { fill: var(--brand); }
.chart-grid { stroke: var(--line); }
.chart-axis { stroke: var(--ink); }
.chart-tick { fill: var(--muted); }
.chart-label { fill: var(--ink); }
@media (forced-colors: active) { .chart-bar { fill: CanvasText; } .chart-grid, .chart-axis { stroke: CanvasText; } .chart-tick, .chart-label { fill: CanvasText; } }
footer.site { border-top: 1px solid var(--line); background: var(--paper); }
footer.site .bar { max-width: 60rem; margin: 0 auto; padding: 1rem; color: var(--muted); font-size: .9rem; }
@media (max-width: 40rem) { dl.facts { grid-template-columns: 1fr; } dl.facts dd { margin-bottom: .5rem; } h1 { font-size: 1.6rem; } }
@media (max-width: 30rem) { .chart-tick { font-size: 17px; } .chart-label { font-size: 18px; } }
`.trimStart();

export const FAVICON_SVG =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><circle cx="16" cy="16" r="15" fill="#154566"/><circle cx="16" cy="16" r="8" fill="none" stroke="#fff" stroke-width="3"/></svg>\n';
