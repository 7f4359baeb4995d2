// Fails when the top folders of src/ import each other in a cycle, and prints each cycle with the imports that close it.
//
// Units are each `src/<folder>/` and each file directly in `src/` (config.ts sits below every
// folder, service.ts above them, so the root files cannot be one unit). Test files are left
// out: they are exempt from layering, and file-level cycles through them are still refused by
// the `no-file-cycles` rule in .dependency-cruiser.js. Usage: node --import tsx scripts/folder-cycles.ts
import { cruise, type ICruiseResult } from 'dependency-cruiser';
import extractDepcruiseOptions from 'dependency-cruiser/config-utl/extract-depcruise-options';
import extractTSConfig from 'dependency-cruiser/config-utl/extract-ts-config';

const TEST = /(\.test\.ts$|^test\/)/;

/** The unit a file of src/ belongs to, or undefined outside src/. */
export function unitOf(file: string): string | undefined {
  const m = /^src\/([^/]+)(\/)?/.exec(file);
  if (!m?.[1]) return undefined;
  return m[2] ? `src/${m[1]}/` : `src/${m[1]}`;
}

/** Unit → unit edges, each with one file-level import that creates it. */
export type UnitGraph = Map<string, Map<string, string>>;

export function unitGraph(modules: readonly { source: string; dependencies: readonly { resolved: string }[] }[]): UnitGraph {
  const graph: UnitGraph = new Map();
  for (const mod of modules) {
    const from = unitOf(mod.source);
    if (!from || TEST.test(mod.source)) continue;
    if (!graph.has(from)) graph.set(from, new Map());
    for (const dep of mod.dependencies) {
      const to = unitOf(dep.resolved);
      if (!to || to === from) continue;
      const edges = graph.get(from) as Map<string, string>;
      if (!edges.has(to)) edges.set(to, `${mod.source} → ${dep.resolved}`);
      if (!graph.has(to)) graph.set(to, new Map());
    }
  }
  return graph;
}

/** Strongly connected components with more than one unit (Tarjan), largest first. */
export function cycles(graph: UnitGraph): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, index.size);
    low.set(v, index.get(v) as number);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v)?.keys() ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v) as number, low.get(w) as number));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v) as number, index.get(w) as number));
      }
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    for (let w = stack.pop(); w !== undefined; w = stack.pop()) {
      onStack.delete(w);
      component.push(w);
      if (w === v) break;
    }
    if (component.length > 1) found.push(component.sort());
  };
  for (const v of [...graph.keys()].sort()) if (!index.has(v)) visit(v);
  return found.sort((a, b) => b.length - a.length);
}

/** A shortest cycle through `start` inside `component` (breadth-first), as the list of units. */
export function shortestCycle(graph: UnitGraph, component: string[], start: string): string[] {
  const inside = new Set(component);
  const cameFrom = new Map<string, string>();
  const queue = [start];
  while (queue.length) {
    const v = queue.shift() as string;
    for (const w of graph.get(v)?.keys() ?? []) {
      if (!inside.has(w)) continue;
      if (w === start) {
        const path = [v];
        while (path[0] !== start) path.unshift(cameFrom.get(path[0] as string) as string);
        return [...path, start];
      }
      if (!cameFrom.has(w)) {
        cameFrom.set(w, v);
        queue.push(w);
      }
    }
  }
  return [];
}

async function main(): Promise<void> {
  const options = await extractDepcruiseOptions('./.dependency-cruiser.js');
  const { output } = await cruise(['src'], { ...options, validate: false, outputType: 'json' }, {}, { tsConfig: extractTSConfig('tsconfig.json') });
  const result = (typeof output === 'string' ? JSON.parse(output) : output) as ICruiseResult;
  const graph = unitGraph(result.modules);
  const found = cycles(graph);
  if (found.length === 0) {
    console.log(`no folder cycles among ${graph.size} units of src/`);
    return;
  }
  console.log(`${found.length} folder cycle(s) among the ${graph.size} units of src/:`);
  for (const component of found) {
    console.log(`\n  ${component.length} units import each other: ${component.join(', ')}`);
    console.log('  shortest cycle through each, with one import per step:');
    for (const start of component) {
      const cycle = shortestCycle(graph, component, start);
      console.log(`    ${cycle.join(' → ')}`);
      for (let i = 0; i + 1 < cycle.length; i++) {
        console.log(`      ${graph.get(cycle[i] as string)?.get(cycle[i + 1] as string)}`);
      }
    }
  }
  process.exitCode = 1;
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
