// `npm test` on a machine whose node is older than the suite's: scripts/test.sh provisions (quick
// when all is in place) and runs vitest on Node.js 24; what it cannot install stops it at once.
import { execFile } from 'node:child_process';
import { chmodSync, cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot } from './harness/servers.js';

const run = promisify(execFile);

/**
 * A copy of what `npm test` runs (scripts, node_modules, the built servers) where the Node.js 24
 * of .carecircle/node is the one running this test, and `node` on PATH says it is 20. `npm` on
 * PATH fails: nothing may be installed when everything is in place.
 */
let root: string;
let oldBin: string;
beforeAll(() => {
  root = mkdtempSync(path.join(os.tmpdir(), 'cc-toolchain-'));
  for (const f of ['scripts/test.sh', 'scripts/toolchain.sh', 'scripts/provision.sh', 'scripts/nats-server', 'scripts/ferretdb'])
    cpSync(path.join(repoRoot, f), path.join(root, f), { recursive: true });
  symlinkSync(path.join(repoRoot, 'node_modules'), path.join(root, 'node_modules'));
  mkdirSync(path.join(root, '.carecircle', 'node', 'node_modules', '.bin'), { recursive: true });
  symlinkSync(path.join(repoRoot, '.carecircle', 'bin'), path.join(root, '.carecircle', 'bin'));
  symlinkSync(process.execPath, path.join(root, '.carecircle', 'node', 'node_modules', '.bin', 'node'));
  oldBin = path.join(root, 'old-node');
  mkdirSync(oldBin);
  writeFileSync(
    path.join(oldBin, 'node'),
    `#!/bin/sh\ncase "$1" in -p) echo 20 ;; --version) echo v20.19.0 ;; *) echo "node 20 cannot run: $*" >&2; exit 1 ;; esac\n`,
  );
  writeFileSync(path.join(oldBin, 'npm'), '#!/bin/sh\necho "npm must not run: $*" >&2\nexit 1\n');
  chmodSync(path.join(oldBin, 'node'), 0o755);
  chmodSync(path.join(oldBin, 'npm'), 0o755);
  writeFileSync(
    path.join(root, 'probe.test.ts'),
    `import { expect, it } from 'vitest';\nit('runs on Node.js 24', () => expect(process.versions.node.split('.')[0]).toBe('24'));\n`,
  );
});
afterAll(() => {
  rmSync(root, { recursive: true, force: true });
});

async function npmTest(args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run('bash', [path.join(root, 'scripts/test.sh'), ...args], {
      cwd: root,
      env: { PATH: `${oldBin}:/usr/bin:/bin`, HOME: process.env.HOME ?? '', NO_COLOR: '1', ...env },
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

describe('npm test on a machine with an older node', () => {
  it('when everything is provisioned, then it says so in one line and runs vitest on Node.js 24', async () => {
    const { code, stdout, stderr } = await npmTest(['probe.test.ts']);
    expect({ code, stderr: stderr.split('\n').filter(Boolean) }).toEqual({
      code: 0,
      stderr: [expect.stringMatching(new RegExp(`^\\[test\\] test tools ready in \\d+\\.\\d s: node ${process.version}, nats-server and FerretDB`))],
    });
    expect(stdout).toMatch(/Tests +1 passed \(1\)/);
  });

  it('when Chromium is missing and cannot be installed, then it stops before anything else, naming what to install', async () => {
    const { code, stdout, stderr } = await npmTest(['probe.test.ts'], { CHROMIUM_PATH: path.join(root, 'no-chromium') });
    expect({ code, stdout }).toEqual({ code: 1, stdout: '' });
    expect(stderr).toBe(`[test] ERROR: CHROMIUM_PATH=${path.join(root, 'no-chromium')} is not an executable: the browser tests need Chromium there\n`);
  });
});
