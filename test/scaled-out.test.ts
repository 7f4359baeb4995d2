// The README's "Run it scaled out" as written: its command starts a NATS cluster and a store on
// ports of their own, the roles it lists start against them, and a request goes through the gateway.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { isPortFree } from '../src/store/embedded/process.js';
import { startRole, type RoleProcess } from './harness/processes.js';
import { repoRoot } from './harness/servers.js';
import { postJson, rpc, surfaceEnv } from './harness/service.js';

const readme = readFileSync(path.join(repoRoot, 'README.md'), 'utf8');
const section = readme.slice(readme.indexOf('## Run it scaled out'), readme.indexOf('\n## ', readme.indexOf('## Run it scaled out') + 1));
const commands = [...section.matchAll(/```sh\n([\s\S]*?)```/g)].flatMap((m) => m[1]!.split('\n'));

/** `count` consecutive ports that are free now, away from the ones the section documents. */
async function freeRun(count: number): Promise<number> {
  for (;;) {
    const base = 20_000 + Math.floor(Math.random() * 30_000);
    const ports = Array.from({ length: count }, (_, i) => base + i);
    if ((await Promise.all(ports.map(isPortFree))).every(Boolean)) return base;
  }
}

describe('running it scaled out, as the README says', () => {
  const cleanup: (() => Promise<unknown>)[] = [];
  afterAll(async () => {
    for (const c of cleanup.splice(0).reverse()) await c();
  });

  it('when the documented command starts the cluster and store, then the listed roles start on them and the gateway answers through a worker', async () => {
    // The section's commands: one for the servers, then `npx carecircle start --role …` for each role.
    expect(commands).toContain('npm run local-cluster');
    const roles = commands.flatMap((c) => /^npx carecircle start --role (\w+)/.exec(c)?.[1] ?? []);
    expect(roles).toEqual(['gateway', 'worker', 'cron', 'smtp']);

    // `npm run local-cluster` is this script line; the test gives it ports of its own.
    const script = (JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts['local-cluster']!;
    const [node, ...argv] = script.split(' ');
    expect(node).toBe('node');
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'cc-local-cluster-'));
    cleanup.push(async () => rmSync(dataDir, { recursive: true, force: true }));
    const [natsPort, routePort, storePort] = [await freeRun(3), await freeRun(3), await freeRun(1)];
    const servers = spawn(
      process.execPath,
      [...argv, '--nats-port', String(natsPort), '--route-port', String(routePort), '--store-port', String(storePort), '--data-dir', dataDir],
      { cwd: repoRoot, env: { ...process.env, NATS_URL: '', MONGO_URL: '' }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const serversExited = once(servers, 'exit') as Promise<[number | null, string | null]>;
    cleanup.push(async () => {
      if (servers.exitCode === null && servers.signalCode === null) servers.kill('SIGKILL');
      await serversExited;
    });
    let stderr = '';
    servers.stderr!.on('data', (c: Buffer) => void (stderr += c.toString()));
    let stdout = '';
    const exportLine = await new Promise<string>((resolve, reject) => {
      servers.stdout!.on('data', (c: Buffer) => {
        stdout += c.toString();
        const line = /^export .*$/m.exec(stdout)?.[0];
        if (line) resolve(line);
      });
      void serversExited.then(([code]) => reject(new Error(`local-cluster exited (${code}) before it was ready: ${stderr}`)));
    });
    const env = Object.fromEntries(
      exportLine
        .replace(/^export /, '')
        .split(' ')
        .map((kv) => kv.split('=', 2) as [string, string]),
    );
    expect(env).toEqual({
      NATS_URL: [0, 1, 2].map((i) => `nats://127.0.0.1:${natsPort + i}`).join(','),
      NATS_REPLICAS: '3',
      MONGO_URL: `mongodb://127.0.0.1:${storePort}/carecircle`,
      METRICS_PORT: '0',
    });

    // Each role in its own process with that environment; the gateway and the SMTP listener on
    // free ports, as when `npm start` holds the default ones.
    const surfaces = await surfaceEnv();
    const processes: RoleProcess[] = roles.map((role) => startRole(role, { ...env, ...surfaces }));
    for (const p of processes) cleanup.push(() => p.kill('SIGKILL'));
    await Promise.all(processes.map((p) => p.waitFor(/"msg":"carecircle started"/, 60_000)));

    const reply = await postJson(
      `${surfaces.SITE_URL}/api/mcp`,
      rpc('tools/call', { name: 'search_care_resources', arguments: { query: 'respite care', limit: 2 } }),
    );
    expect(reply.status).toBe(200);
    expect(JSON.parse(reply.json.result.content[0].text).results.length).toBeGreaterThan(0);

    // Ctrl-C stops the servers, and the command exits 0.
    for (const p of processes) expect(await p.kill('SIGTERM')).toBe(0);
    servers.kill('SIGINT');
    expect((await serversExited)[0]).toBe(0);
  }, 120_000);
});
