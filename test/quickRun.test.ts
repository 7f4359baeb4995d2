// The quick run (npm run test:quick) stays quick as files are added: every test file that drives
// Chromium or starts carecircle as several processes is on its list of files left out, and every
// entry of that list still names a file.
import { globSync, readFileSync } from 'node:fs';
import { matchesGlob } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CONFORMANCE, FAULTS, LEFT_OUT_OF_QUICK } from './harness/quickRun.js';
import { repoRoot } from './harness/servers.js';

const HEAVY = /from '\.\/harness\/(browser|processes|twoGateways|ingestWorkers|deployment|chaos|natsCluster)\.js'/;
const files = globSync(['src/**/*.test.ts', 'machines/**/*.test.ts', 'bridge/**/*.test.ts', 'test/**/*.test.ts'], { cwd: repoRoot });
const patterns = Object.values(LEFT_OUT_OF_QUICK).flat();
const leftOut = (file: string) => patterns.some((p) => matchesGlob(file, p));

describe('the quick run', () => {
  it('leaves out every file that drives Chromium or starts role processes', () => {
    const heavy = files.filter((f) => HEAVY.test(readFileSync(`${repoRoot}/${f}`, 'utf8')));
    expect(heavy.length).toBeGreaterThan(10);
    expect(heavy.filter((f) => !leftOut(f))).toEqual([]);
  });

  it('names only files that exist', () => {
    expect(patterns.filter((p) => !files.some((f) => matchesGlob(f, p)))).toEqual([]);
  });

  it.for([
    ['fault runs', FAULTS],
    ['conformance suite', CONFORMANCE],
  ] as const)('leaves out the %s too, whose list names only files that exist', ([, list]) => {
    expect(list.filter((f) => !leftOut(f))).toEqual([]);
    expect(list.filter((f) => !files.includes(f))).toEqual([]);
  });
});
