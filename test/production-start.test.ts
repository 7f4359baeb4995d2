// Starting with NODE_ENV=production as an operator would: every refused setting in one message.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from './harness/servers.js';

async function start(env: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(repoRoot, 'src/cli.ts'), 'start'], {
    cwd: repoRoot,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => void (stderr += chunk.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
  const [code] = (await once(child, 'exit')) as [number | null];
  clearTimeout(timer);
  return { code, stderr };
}

describe('production start', () => {
  it('when NODE_ENV=production runs on the development defaults with an http URL, then it exits 1 naming every variable in one message', async () => {
    const { code, stderr } = await start({ NODE_ENV: 'production', SITE_URL: 'http://carecircle.example', LOG_LEVEL: 'silent', DATA_DIR: path.join(tmpdir(), `cc-prod-${process.pid}`) });
    expect(code).toBe(1);
    expect(stderr.match(/invalid configuration/g)).toHaveLength(1);
    for (const name of ['DEV_IDP', 'IDP_ISSUER', 'IDP_JWKS_URL', 'IDP_LOGIN_URL', 'SITE_URL', 'NEWSLETTER_SECRET', 'DATA_KEY', 'MONGO_URL', 'NATS_URL']) expect(stderr, name).toMatch(new RegExp(`^  ${name}\\b`, 'm'));
    expect(stderr).not.toContain('listening');
  });
});
