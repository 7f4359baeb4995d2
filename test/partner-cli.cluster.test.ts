// `carecircle partner` on a NATS deployment, as an operator runs it (a process of its own): each
// change returns only once every running process has acknowledged it, so two workers that keep the
// institution in memory refuse a retired secret on the very next request; with NATS configured
// but out of reach the command changes nothing and says so; and a running process that does not
// confirm a change is counted and named as a warning.
import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it, vi } from 'vitest';
import { useTwoIngestWorkers } from './harness/ingestWorkers.js';
import { UNCONFIRMED } from '../src/partner/announce.js';
import { startNatsLink } from './harness/natsLink.js';
import { startRole } from './harness/processes.js';
import { freePort, repoRoot } from './harness/servers.js';
import { family, onboard, partnerStore, postEvent, shareWith, visit, type Partner } from './ingest.fixtures.js';

const run = promisify(execFile);

const d = useTwoIngestWorkers('partnercli');

/** The real command line, as a child process with the deployment's configuration. */
async function cli(args: string[], extra: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, ['--import', 'tsx', path.join(repoRoot, 'src/cli.ts'), 'partner', ...args], {
      cwd: repoRoot,
      env: { ...process.env, NODE_ENV: 'test', LOG_LEVEL: 'silent', ...d.env, ...extra },
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

/** The command as a running process whose output can be awaited line by line while it runs. */
function started(args: string[], extra: Record<string, string>) {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(repoRoot, 'src/cli.ts'), 'partner', ...args], {
    cwd: repoRoot,
    env: { ...process.env, NODE_ENV: 'test', LOG_LEVEL: 'silent', ...d.env, ...extra },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const seen = { stdout: '', stderr: '' };
  for (const name of ['stdout', 'stderr'] as const) child[name].on('data', (chunk: Buffer) => void (seen[name] += chunk.toString()));
  const exited = once(child, 'exit').then(([code]) => code as number | null);
  return {
    child,
    seen,
    exited,
    /** Until `pattern` appears on that stream (the command still running or not). */
    async waitFor(name: 'stdout' | 'stderr', pattern: RegExp, timeoutMs = 40_000): Promise<void> {
      await vi.waitFor(
        () => {
          if (!pattern.test(seen[name])) throw new Error(`never printed ${pattern} on ${name}; stdout: ${seen.stdout}\nstderr: ${seen.stderr}`);
        },
        { timeout: timeoutMs, interval: 20 },
      );
    },
  };
}

let n = 0;
const send = (partner: Partner, o: { secret?: string; subject?: string } = {}) =>
  postEvent(d.pipe, partner, visit(partner, o.subject ?? 'client-cli', { source_event_id: `c-${n++}` }), o);

/** Requests each worker answered with this status so far (the workers log every reply at debug). */
const answered = (status: number) => d.workers.map((w) => w.lines.filter((l) => l.includes(`"status":${status}`) && l.includes('"msg":"handled"')).length);

/** Keeps 8 requests in flight while `change` runs, then sends 24 at once: the statuses of those. */
async function acrossChange(partner: Partner, change: () => Promise<void>, o: { secret?: string } = {}): Promise<number[]> {
  let changing = true;
  const load = Promise.all(
    Array.from({ length: 8 }, async () => {
      while (changing) await send(partner, o);
    }),
  );
  await Promise.all(Array.from({ length: 16 }, () => send(partner, o)));
  await change();
  const after = await Promise.all(Array.from({ length: 24 }, () => send(partner, o)));
  changing = false;
  await load;
  return after.map((r) => r.status);
}

describe('carecircle partner over NATS', () => {
  it('when the command rotates and retires while two workers serve events, then the retired secret gets 401 on the very next request on both', async () => {
    const partner = await onboard(d.gateway.store.db, d.gateway.credentials);
    await shareWith(d.gateway, partner, 'client-cli', await family(d.gateway.store.db, d.gateway.credentials, d.gateway.config));
    // Both workers serve the institution, so both hold it in memory before it changes.
    expect((await Promise.all(Array.from({ length: 24 }, () => send(partner)))).map((r) => r.status)).toEqual(Array(24).fill(202));

    const rotated = await cli(['rotate', partner.institutionId, '--json']);
    expect(rotated.code).toBe(0);
    const next = JSON.parse(rotated.stdout) as { secret: string; processes_confirmed: number; processes_silent: number };
    // The two workers and the test's gateway.
    expect(next).toMatchObject({ processes_confirmed: 3, processes_silent: 0 });
    expect((await send(partner, { secret: next.secret })).status).toBe(202);

    const refusedBefore = answered(401);
    let said = '';
    const statuses = await acrossChange(partner, async () => {
      const retired = await cli(['retire', partner.institutionId, partner.secretId]);
      expect(retired.code).toBe(0);
      said = retired.stdout;
    });
    expect(said).toMatch(/now get 401 on every running process \(3 confirmed\)/);
    expect(statuses).toEqual(Array(24).fill(401));
    const refusedAfter = answered(401);
    for (const [i, count] of refusedAfter.entries()) expect(count).toBeGreaterThan(refusedBefore[i]!);
    expect((await send(partner, { secret: next.secret })).status).toBe(202);

    const off = await acrossChange(
      partner,
      async () => {
        const deactivated = await cli(['deactivate', partner.institutionId]);
        expect(deactivated.code).toBe(0);
        expect(deactivated.stdout).toMatch(/every request now gets 403 on every running process/);
      },
      { secret: next.secret },
    );
    expect(off).toEqual(Array(24).fill(403));
  });

  it('when NATS is configured but cannot be reached, then the command writes nothing, says what to check, and exits non-zero', async () => {
    const partner = await onboard(d.gateway.store.db, d.gateway.credentials);
    await shareWith(d.gateway, partner, 'client-down', await family(d.gateway.store.db, d.gateway.credentials, d.gateway.config));
    const before = await partnerStore(d.gateway.store.db, d.gateway.credentials).get(partner.institutionId);
    const down = { NATS_URL: `nats://127.0.0.1:${await freePort()}` };
    for (const args of [
      ['rotate', partner.institutionId],
      ['deactivate', partner.institutionId],
      ['create', '--name', 'Never Made', '--id', 'never-made'],
    ]) {
      const refused = await cli(args, down);
      expect(refused.code).toBe(1);
      expect(refused.stdout).toBe('');
      expect(refused.stderr).toMatch(/NATS_URL is set \(nats:\/\/127\.0\.0\.1:\d+\) but NATS cannot be reached/);
      expect(refused.stderr).toMatch(/Nothing was changed/);
      expect(refused.stderr).toMatch(/Check that nats-server is running/);
    }
    expect(await partnerStore(d.gateway.store.db, d.gateway.credentials).get(partner.institutionId)).toEqual(before);
    expect(await partnerStore(d.gateway.store.db, d.gateway.credentials).get('never-made')).toBeNull();
    expect((await send(partner, { subject: 'client-down' })).status).toBe(202);
  });

  it('when NATS goes away after the change is written, then the command shows the new secret, says it waits for NATS, and confirms on every process once NATS is back', async () => {
    const partner = await onboard(d.gateway.store.db, d.gateway.credentials);
    await shareWith(d.gateway, partner, 'client-wait', await family(d.gateway.store.db, d.gateway.credentials, d.gateway.config));
    const link = await startNatsLink(d.env.NATS_URL!);
    try {
      // The command subscribes to the acknowledgements only once the store has the change: cut there.
      link.cutOn(/SUB \S+\.cc\.creds\.ack\./);
      const rotating = started(['rotate', partner.institutionId], { NATS_URL: link.url });
      await link.cut();
      await rotating.waitFor(
        'stderr',
        /waiting for NATS at nats:\/\/127\.0\.0\.1:\d+ to announce the change to the running processes \(saved already; \d+ s\)/,
      );
      // Away long enough that the processes it last heard from count as gone (6 s): it must hear them again.
      await rotating.waitFor('stderr', /saved already; (?:[7-9]|[1-9]\d+) s\)/);
      // Still waiting, and the secret that cannot be shown again is on screen already.
      expect(rotating.child.exitCode).toBeNull();
      const secret = /secret\s+(ccps_\S+)/.exec(rotating.seen.stdout)?.[1];
      expect(secret).toBeDefined();
      expect((await partnerStore(d.gateway.store.db, d.gateway.credentials).get(partner.institutionId))!.secrets).toHaveLength(2);
      expect(rotating.seen.stdout).not.toMatch(/Both secrets are accepted/);
      link.restore();
      expect(await rotating.exited).toBe(0);
      expect(rotating.seen.stdout).toMatch(/Both secrets are accepted on every running process \(3 confirmed\)/);
      expect((await send(partner, { secret: secret!, subject: 'client-wait' })).status).toBe(202);

      // --json: the JSON comes once at the end; while it waits the secret goes to stderr.
      link.cutOn(/SUB \S+\.cc\.creds\.ack\./);
      const creating = started(['create', '--name', 'Waiting Care', '--json'], { NATS_URL: link.url });
      await link.cut();
      await creating.waitFor('stderr', /waiting for NATS at .* \(saved already; \d+ s\)/);
      expect(creating.child.exitCode).toBeNull();
      const shown = /secret\s+(ccps_\S+)/.exec(creating.seen.stderr)?.[1];
      expect(shown).toBeDefined();
      expect(creating.seen.stdout).toBe('');
      link.restore();
      expect(await creating.exited).toBe(0);
      expect(JSON.parse(creating.seen.stdout)).toMatchObject({ name: 'Waiting Care', secret: shown, processes_confirmed: 3, processes_silent: 0 });

      // Ctrl-C while it waits: the change stays, and the command says what that means.
      link.cutOn(/SUB \S+\.cc\.creds\.ack\./);
      const deactivating = started(['deactivate', partner.institutionId], { NATS_URL: link.url });
      await link.cut();
      await deactivating.waitFor('stderr', /waiting for NATS/);
      deactivating.child.kill('SIGINT');
      expect(await deactivating.exited).toBe(130);
      expect(deactivating.seen.stderr).toMatch(/The change is saved/);
      expect(deactivating.seen.stderr).toMatch(/5 minutes/);
      expect((await partnerStore(d.gateway.store.db, d.gateway.credentials).get(partner.institutionId))!.status).toBe('inactive');
    } finally {
      await link.close();
    }
  }, 240_000);

  it('when a running process does not confirm the change, then the command saves it, counts the silent process, and says what that process may still use', async () => {
    const partner = await onboard(d.gateway.store.db, d.gateway.credentials);
    const link = await startNatsLink(d.env.NATS_URL!);
    const third = startRole('worker', { ...d.env, NATS_URL: link.url });
    try {
      await third.waitFor(/workers serving/);
      // The third worker answers the command's hello, so the command waits for it; its
      // confirmation is where its road to NATS is cut, so the confirmation never arrives.
      link.cutOn(/PUB \S+\.cc\.creds\.ack\./);
      const deactivated = await cli(['deactivate', partner.institutionId]);
      await link.cut();
      expect(deactivated.code).toBe(0);
      expect(deactivated.stderr).toMatch(
        /warning: 1 running process\(es\) did not confirm the change within 3 s \(stopped, cut off from NATS, or stalled\)\. The change is saved\./,
      );
      expect(deactivated.stderr).toContain(UNCONFIRMED);
      expect(deactivated.stdout).toMatch(/every request now gets 403 on the 3 running process\(es\) that confirmed it/);
      expect((await partnerStore(d.gateway.store.db, d.gateway.credentials).get(partner.institutionId))!.status).toBe('inactive');
    } finally {
      await third.kill('SIGKILL');
      await link.close();
    }
  }, 60_000);
});
