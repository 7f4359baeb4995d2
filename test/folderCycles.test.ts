import { describe, expect, it } from 'vitest';
import { cycles, shortestCycle, unitGraph, unitOf } from '../scripts/folder-cycles.js';

const mod = (source: string, ...deps: string[]) => ({ source, dependencies: deps.map((resolved) => ({ resolved })) });

describe('folder cycles among the top folders of src/', () => {
  it('counts each src/ folder and each root file as its own unit', () => {
    expect(unitOf('src/store/embedded/process.ts')).toBe('src/store/');
    expect(unitOf('src/config.ts')).toBe('src/config.ts');
    expect(unitOf('bridge/cli.ts')).toBeUndefined();
    expect(unitOf('node_modules/xstate/dist/xstate.mjs')).toBeUndefined();
  });

  it('finds no cycle when imports only go down, even through the root files', () => {
    const graph = unitGraph([
      mod('src/service.ts', 'src/gateway/app.ts', 'src/site/pages.ts', 'src/config.ts'),
      mod('src/gateway/app.ts', 'src/bus/types.ts', 'src/config.ts'),
      mod('src/site/pages.ts', 'src/bus/types.ts', 'src/site/layout.ts'),
      mod('src/bus/types.ts', 'src/config.ts'),
    ]);
    expect(cycles(graph)).toEqual([]);
  });

  it('reports a folder cycle made of file imports that form no file cycle, with the imports that close it', () => {
    const graph = unitGraph([
      mod('src/store/indexes.ts', 'src/keys/keys.ts'),
      mod('src/keys/keys.ts', 'src/store/entities.ts'),
      mod('src/site/pages.ts', 'src/keys/keys.ts'),
    ]);
    expect(cycles(graph)).toEqual([['src/keys/', 'src/store/']]);
    expect(shortestCycle(graph, ['src/keys/', 'src/store/'], 'src/store/')).toEqual(['src/store/', 'src/keys/', 'src/store/']);
    expect(graph.get('src/store/')?.get('src/keys/')).toBe('src/store/indexes.ts → src/keys/keys.ts');
  });

  it('leaves test files out of the folder graph', () => {
    const graph = unitGraph([mod('src/store/rateLimit.test.ts', 'src/keys/keys.ts'), mod('src/keys/keys.ts', 'src/store/entities.ts')]);
    expect(cycles(graph)).toEqual([]);
  });
});
