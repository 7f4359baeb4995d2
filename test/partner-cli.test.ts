// `carecircle partner …` as an operator runs it, against the real database: the commands in-process
// (each child process costs seconds of start-up), and `carecircle partner send` as a child process.
import { execFile } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { partnerCommand } from '../src/partner/cli.js';
import { repoRoot } from './harness/servers.js';
import { startTestService, type TestService } from './harness/service.js';
import { careEvents, family, shareWith, TEST_DATA_KEY, type Partner } from './ingest.fixtures.js';

const run = promisify(execFile);

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService({ env: { DATA_KEY: TEST_DATA_KEY } });
});
afterAll(async () => {
  await svc?.stop();
});

/** One command in this process, with its output captured. */
async function partner(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const out = vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => ((stdout += String(chunk)), true));
  const err = vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => ((stderr += String(chunk)), true));
  try {
    const code = await partnerCommand(args, svc.config);
    return { code, stdout, stderr };
  } finally {
    out.mockRestore();
    err.mockRestore();
  }
}

/** The real command line, as a child process. */
async function cli(args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, ['--import', 'tsx', path.join(repoRoot, 'src/cli.ts'), 'partner', ...args], {
      cwd: repoRoot,
      env: { ...process.env, NODE_ENV: 'test', LOG_LEVEL: 'silent', MONGO_URL: svc.mongoUrl, DATA_KEY: TEST_DATA_KEY, ...env },
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

describe('carecircle partner', () => {
  it('when an operator creates, rotates and retires, then each secret is printed once and show reports which secrets are live', async () => {
    const created = await partner(['create', '--name', 'CLI Home Care', '--id', 'cli-home', '--json']);
    expect(created.code).toBe(0);
    const c = JSON.parse(created.stdout);
    expect(c).toMatchObject({
      institution_id: 'cli-home',
      name: 'CLI Home Care',
      secret_id: expect.stringMatching(/^sec_/),
      secret: expect.stringMatching(/^ccps_/),
    });
    const rotated = JSON.parse((await partner(['rotate', 'cli-home', '--json'])).stdout);
    expect(rotated.secret).not.toBe(c.secret);
    expect((await partner(['retire', 'cli-home', c.secret_id])).code).toBe(0);
    const shown = await partner(['show', 'cli-home', '--json']);
    const view = JSON.parse(shown.stdout);
    expect(view.secrets.map((s: { secret_id: string; state: string }) => [s.secret_id, s.state])).toEqual([
      [c.secret_id, 'retired'],
      [rotated.secret_id, 'live'],
    ]);
    expect(shown.stdout).not.toContain('ccps_');
    const listed = await partner(['list']);
    expect(listed.stdout).toMatch(/^cli-home {2}active {2}CLI Home Care$/m);
    expect(listed.stdout).not.toContain('ccps_');
    const refused = await partner(['retire', 'cli-home', rotated.secret_id]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/last live secret/);
  });

  it('when a partner sends an event file with `partner send`, then it is signed, accepted and stored, and the rule that stopped it is printed', async () => {
    const created = JSON.parse((await partner(['create', '--name', 'Sender', '--json'])).stdout);
    const p: Partner = { institutionId: created.institution_id, secretId: created.secret_id, secret: created.secret };
    const fam = await family(svc.store.db, svc.credentials, svc.config);
    await shareWith(svc, p, 'client-cli', fam);
    const file = path.join(os.tmpdir(), `cc-event-${process.pid}.json`);
    const at = new Date(Date.now() - 60_000).toISOString();
    writeFileSync(
      file,
      JSON.stringify({
        subject_ref: 'client-cli',
        event_type: 'note_added',
        occurred_at: at,
        payload: { caregiver_id: 'cg', note_text: 'Slept well.' },
        source_event_id: 'cli-1',
      }),
    );
    const env = { CARECIRCLE_PARTNER_SECRET: p.secret, CARECIRCLE_PARTNER_INSTITUTION: p.institutionId };
    const sent = await cli(['send', '--file', file, '--url', svc.urls.pipe!, '--json'], env);
    expect(sent.code).toBe(0);
    const result = JSON.parse(sent.stdout);
    expect(result).toMatchObject({ ok: true, rule: 'accepted', status: 202, duplicate: false });
    expect(sent.stderr).toContain('done: accepted with 202');
    expect(await careEvents(svc.store.db).findOne({ _id: result.eventId })).toMatchObject({ lovedOneId: fam.lovedOneId, eventType: 'note_added' });

    vi.stubEnv('CARECIRCLE_PARTNER_SECRET', p.secret);
    try {
      const unmapped = await partner(['send', '--file', file, '--url', svc.urls.pipe!, '--institution', 'cli-nobody']);
      expect(unmapped.code).toBe(1);
      expect(unmapped.stderr).toMatch(/stopped: 403 is terminal/);
    } finally {
      vi.unstubAllEnvs();
      rmSync(file, { force: true });
    }
  });
});
