// Python virtual environments for the client tests, under .carecircle/python: one per pinned
// requirements file, named by its content's hash, created once and reused while the file is unchanged.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { repoRoot } from './servers.js';

const run = promisify(execFile);
const VENVS = path.join(repoRoot, '.carecircle', 'python');
/** Marks a venv whose install finished: one without it is a leftover of an interrupted run. */
const READY = '.carecircle-ready';

/**
 * The interpreter of a venv holding `requirements` (a path relative to the repository), created
 * with PYTHON (default `python3`) and pip on the first call. The venv is built beside its final
 * place and renamed into it, so a run that stops half way, or a second run at the same time,
 * never leaves a half-installed venv where the next run looks.
 */
export async function pythonVenv(requirements: string): Promise<string> {
  const pins = readFileSync(path.join(repoRoot, requirements));
  const name = path.basename(path.dirname(requirements));
  const dir = path.join(VENVS, `${name}-${createHash('sha256').update(pins).digest('hex').slice(0, 12)}`);
  const python = path.join(dir, 'bin', 'python');
  if (existsSync(path.join(dir, READY))) return python;

  mkdirSync(VENVS, { recursive: true });
  // Earlier pins' venvs of the same client are of no further use.
  for (const old of readdirSync(VENVS))
    if (new RegExp(`^${name}-[0-9a-f]{12}$`).test(old) && path.join(VENVS, old) !== dir) rmSync(path.join(VENVS, old), { recursive: true, force: true });
  const building = `${dir}.${process.pid}`;
  const base = process.env.PYTHON || 'python3';
  try {
    await run(base, ['-m', 'venv', building]);
  } catch (err) {
    throw new Error(
      `${base} -m venv failed: the Python client tests need Python 3.10+ with venv (Debian: apt-get install python3-venv, as scripts/toolchain.sh does): ${(err as Error).message}`,
    );
  }
  await run(path.join(building, 'bin', 'python'), ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', '-r', path.join(repoRoot, requirements)], {
    maxBuffer: 16 * 1024 * 1024,
  });
  writeFileSync(path.join(building, READY), pins);
  try {
    renameSync(building, dir);
  } catch {
    // Another run finished the same venv first: use that one.
    rmSync(building, { recursive: true, force: true });
  }
  return python;
}
