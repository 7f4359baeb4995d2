// The carecircle command as an operator types it: help, a mistyped command, a mistyped role.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from './harness/servers.js';

async function carecircle(...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(repoRoot, 'src/cli.ts'), ...args], {
    cwd: repoRoot,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', LOG_LEVEL: 'silent' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => void (stdout += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => void (stderr += chunk.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
  const [code] = (await once(child, 'exit')) as [number | null];
  clearTimeout(timer);
  return { code, stdout, stderr };
}

describe('the carecircle command', () => {
  it('when asked for help, with no command, help or --help, then the usage on stdout and exit 0', async () => {
    for (const args of [[], ['help'], ['--help']]) {
      const { code, stdout, stderr } = await carecircle(...args);
      expect({ args, code, stderr }).toEqual({ args, code: 0, stderr: '' });
      expect(stdout).toMatch(/^usage:\n {2}carecircle start/);
    }
  });

  it('when the command is mistyped, then it is named, the usage follows on stderr, and exit 2', async () => {
    const { code, stdout, stderr } = await carecircle('strat');
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr).toMatch(/^carecircle: unknown command "strat"\nusage:\n/);
  });

  it('when start names a role that does not exist, then the roles are listed and exit 2', async () => {
    const { code, stderr } = await carecircle('start', '--role', 'gatway');
    expect(code).toBe(2);
    expect(stderr).toBe('carecircle: unknown role "gatway"; roles: all, gateway, worker, cron, smtp\n');
  });
});
