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
    const { code, stderr } = await start({
      NODE_ENV: 'production',
      SITE_URL: 'http://carecircle.example',
      LOG_LEVEL: 'silent',
      DATA_DIR: path.join(tmpdir(), `cc-prod-${process.pid}`),
    });
    expect(code).toBe(1);
    expect(stderr.match(/invalid configuration/g)).toHaveLength(1);
    for (const name of [
      'DEV_IDP',
      'IDP_ISSUER',
      'IDP_JWKS_URL',
      'IDP_LOGIN_URL',
      'SITE_URL',
      'NEWSLETTER_SECRET',
      'DATA_KEY',
      'VAPID_PUBLIC_KEY',
      'VAPID_SUBJECT',
      'MONGO_URL',
      'NATS_URL',
    ])
      expect(stderr, name).toMatch(new RegExp(`^  ${name}\\b`, 'm'));
    expect(stderr).not.toContain('listening');
  });

  it('when production is complete but for weak or unsafe values, then it exits 1 naming each of them at once and repeating no secret', async () => {
    const { code, stderr } = await start({
      NODE_ENV: 'production',
      LOG_LEVEL: 'silent',
      DEV_IDP: 'false',
      IDP_ISSUER: 'https://id.carecircle.example',
      IDP_JWKS_URL: 'https://id.carecircle.example/jwks.json',
      IDP_LOGIN_URL: 'https://id.carecircle.example/login',
      SITE_URL: 'https://admin:hunter2@carecircle.example',
      APP_URL: 'https://carecircle.example/app?x=1',
      AUTH_URL: 'https://auth.carecircle.example',
      PIPE_URL: 'https://pipe.carecircle.example',
      APEX_URL: 'https://www.carecircle.example',
      NEWSLETTER_SECRET: 'x',
      DATA_KEY: '0'.repeat(64),
      MCP_ALLOWED_ORIGINS: '*',
      SMTP_URL: 'smtp://mailer:hunter2@smtp.example:587',
      MONGO_URL: 'mongodb://db.invalid/carecircle',
      NATS_URL: 'nats://bus.invalid:4222',
      VAPID_PUBLIC_KEY: 'BM3F09zz8qfr5NODUl00zUj-qoWZhpPmiOnrTzlJgAjmm-P3LRHEWLc4L5jzGmu4R9T3nTwanK7JvW8mvvYMbEM',
      VAPID_PRIVATE_KEY: 'nk3K3YulUwZBB8sLugPpTWi6ZJmE-3z7csTee5zbfGg',
      VAPID_SUBJECT: 'mailto:ops@carecircle.example',
    });
    expect(code).toBe(1);
    expect(stderr.match(/invalid configuration/g)).toHaveLength(1);
    const lines = stderr.split('\n').filter((l) => l.startsWith('  '));
    expect(lines.map((l) => l.trim().split(/[ =]/)[0])).toEqual(['SITE_URL', 'APP_URL', 'NEWSLETTER_SECRET', 'DATA_KEY', 'MCP_ALLOWED_ORIGINS', 'SMTP_URL']);
    // Each says what would be accepted instead.
    for (const line of lines) expect(line).toMatch(/allowed: |set at least 32 random characters|set 32 random bytes/);
    expect(stderr).toMatch(/^ {2}APP_URL=.* has a path and a query: /m);
    expect(stderr).not.toContain('hunter2');
    expect(stderr).not.toContain('nk3K3YulUwZBB8sLugPpTWi6ZJmE');
    expect(stderr).not.toContain('listening');
  });
});
