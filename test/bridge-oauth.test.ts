// carecircle-mcp --login against a real running service: the bridge runs as a child process that
// prints the sign-in address (no browser of its own), real headless Chromium signs in at the
// development identity provider and ticks scopes, and then the MCP SDK client spawns the bridge
// with no key, as a desktop assistant would. The tests run in order and share one token file.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RPC } from '../src/rpc/codes.js';
import { launchBrowser, newPage } from './harness/browser.js';
import { caregiverWithKey } from './harness/identity.js';
import { repoRoot } from './harness/servers.js';
import { startTestService, type TestService } from './harness/service.js';
import { callTool as callEndpoint } from './oauth.fixtures.js';

const BIN = 'bridge/bin.js';
const EMAIL = 'bridge-login@example.com';
const dir = mkdtempSync(path.join(os.tmpdir(), 'cc-bridge-oauth-'));
/** Not there yet: --login creates it (and its parent) 0700. */
const configDir = path.join(dir, 'config', 'carecircle');
const tokenFile = path.join(configDir, 'tokens.json');

let svc: TestService;
let browser: Browser;
let apiKey: string;
const endpoint = () => `${svc.config.appUrl}/api/mcp`;

beforeAll(async () => {
  [svc, browser] = await Promise.all([startTestService({ nats: true }), launchBrowser()]);
  ({ apiKey } = await caregiverWithKey(svc, EMAIL, { firstName: 'Nora', lastName: 'Login' }));
});
afterAll(async () => {
  await browser?.close();
  await svc?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** The environment of a bridge with no key: HOME is a scratch directory, so nothing reaches the real one. */
const bridgeEnv = (extra: Record<string, string> = {}): Record<string, string> => ({
  PATH: process.env.PATH ?? '',
  HOME: dir,
  CARECIRCLE_URL: svc.config.appUrl,
  CARECIRCLE_CONFIG_DIR: configDir,
  CARECIRCLE_NO_BROWSER: '1',
  ...extra,
});

const stored = (): any => JSON.parse(readFileSync(tokenFile, 'utf8')).servers[endpoint()];
function editStored(change: (entry: any) => void): void {
  const file = JSON.parse(readFileSync(tokenFile, 'utf8'));
  change(file.servers[endpoint()]);
  writeFileSync(tokenFile, JSON.stringify(file));
}
const secretsOf = (entry: any): string[] => [entry.accessToken, entry.refreshToken].filter(Boolean);

// ---------------------------------------------------------------------------------------------
// The bridge as a command, and as an assistant runs it

function run(args: string[], env: Record<string, string>) {
  const child = spawn(process.execPath, [BIN, ...args], { cwd: repoRoot, env, stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  const waiters: (() => void)[] = [];
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => {
    stderr += c.toString();
    waiters.splice(0).forEach((w) => w());
  });
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  void exited.then(() => waiters.splice(0).forEach((w) => w()));
  return {
    child,
    exited,
    out: () => ({ stdout, stderr }),
    /** The first stderr match of `pattern`, once the bridge has written it. */
    async stderrMatch(pattern: RegExp): Promise<RegExpExecArray> {
      for (;;) {
        const m = pattern.exec(stderr);
        if (m) return m;
        if (child.exitCode !== null) throw new Error(`bridge exited (${child.exitCode}) before printing ${pattern}: ${stderr}`);
        await new Promise<void>((r) => waiters.push(r));
      }
    },
  };
}

async function runCli(args: string[], env: Record<string, string>) {
  const b = run(args, env);
  b.child.stdin.end();
  const code = await b.exited;
  return { code, ...b.out() };
}

/** Runs --login, signs in as EMAIL in Chromium and ticks `approve` on the consent page. */
async function login(approve: string[]) {
  const b = run(['--login'], bridgeEnv());
  b.child.stdin.end();
  const authorizeUrl = new URL((await b.stderrMatch(/https?:\/\/\S+\/oauth\/authorize\?\S+/))[0]);
  const redirectUri = authorizeUrl.searchParams.get('redirect_uri')!;
  const { page, errors } = await newPage(browser);
  await page.goto(authorizeUrl.href);
  await page.waitForURL(/\/dev\/login/);
  await page.fill('#email', EMAIL);
  await page.click('button[type=submit]');
  await page.waitForSelector('#allow');
  for (const scope of approve) await page.check(`#scope-${scope.replace(/[^a-z]/g, '-')}`);
  await Promise.all([page.waitForURL((u) => u.href.startsWith(redirectUri)), page.click('#allow')]);
  const landing = await page.textContent('h1');
  expect(errors, errors.join('\n')).toEqual([]);
  await page.context().close();
  const code = await b.exited;
  return { code, authorizeUrl, redirectUri, landing, ...b.out() };
}

interface Tap {
  stdout: Buffer[];
  stderr: string;
}

async function connect(env: Record<string, string>) {
  const transport = new StdioClientTransport({ command: process.execPath, args: [BIN], cwd: repoRoot, env, stderr: 'pipe' });
  const tap: Tap = { stdout: [], stderr: '' };
  transport.stderr!.on('data', (c: Buffer) => (tap.stderr += c.toString()));
  const start = transport.start.bind(transport);
  transport.start = async () => {
    await start();
    (transport as any)._process.stdout.on('data', (c: Buffer) => tap.stdout.push(c));
  };
  const client = new Client({ name: 'bridge-oauth-test', version: '1.0.0' });
  await client.connect(transport);
  return { client, tap, close: () => client.close() };
}

/** Every stdout line is a JSON-RPC response: nothing else ever reaches stdout. */
function expectOnlyProtocolLines(tap: Tap): void {
  const text = Buffer.concat(tap.stdout).toString('utf8');
  expect(text.endsWith('\n')).toBe(true);
  for (const l of text.slice(0, -1).split('\n')) expect(JSON.parse(l)).toMatchObject({ jsonrpc: '2.0', id: expect.anything() });
}

const call = (client: Client, name: string) => client.callTool({ name, arguments: {} });
const textOf = (result: any): string => result.content.map((c: { text: string }) => c.text).join('\n');
const failureOf = (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (err: unknown) => err as McpError,
  );

/** One tools/call ping through a raw bridge process, then stdin closes. */
async function pingOnce(env: Record<string, string>) {
  const b = run([], env);
  b.child.stdin.end(`${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'ping', arguments: {} } })}\n`);
  const code = await b.exited;
  const { stdout, stderr } = b.out();
  return { code, stderr, reply: JSON.parse(stdout) as any };
}

async function revokeAtServer(entry: any): Promise<number> {
  const res = await fetch(`${svc.config.authUrl}/oauth/revoke`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ token: entry.refreshToken, token_type_hint: 'refresh_token', client_id: entry.clientId }),
  });
  return res.status;
}

// ---------------------------------------------------------------------------------------------

describe('carecircle-mcp --login', () => {
  it('when a caregiver runs --login and ticks profile:read in Chromium, then the tokens are stored 0600 in a 0700 directory and stdout stays empty', async () => {
    const done = await login(['profile:read']);
    expect(done.code, done.stderr).toBe(0);
    expect(done.stdout).toBe('');
    expect(done.landing).toBe('carecircle-mcp is signed in');
    // A native app's request: loopback callback on a port of its own, PKCE S256, the workspace as the resource.
    expect(done.redirectUri).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/callback$/);
    expect(Object.fromEntries(done.authorizeUrl.searchParams)).toMatchObject({
      response_type: 'code',
      code_challenge_method: 'S256',
      resource: endpoint(),
      // Every scope offered, writing included: the person chooses on the consent page, where writing is never ticked for them.
      scope: 'profile:read care_circle:read care_circle:write',
    });
    expect(done.stderr).toContain('Granted: profile:read. Not granted: care_circle:read, care_circle:write');
    expect(done.stderr).toContain(`tokens stored in ${tokenFile}`);

    expect(statSync(configDir).mode & 0o777).toBe(0o700);
    expect(statSync(path.dirname(configDir)).mode & 0o777).toBe(0o700);
    expect(statSync(tokenFile).mode & 0o777).toBe(0o600);
    // Written by rename, under a lock: neither a temporary file nor the lock is left behind.
    expect(readdirSync(configDir)).toEqual(['tokens.json']);
    const entry = stored();
    expect(entry).toMatchObject({
      server: endpoint(),
      issuer: svc.config.authUrl,
      tokenEndpoint: `${svc.config.authUrl}/oauth/token`,
      revocationEndpoint: `${svc.config.authUrl}/oauth/revoke`,
      clientId: expect.any(String),
      redirectUri: done.redirectUri,
      accessToken: expect.stringMatching(/^ey[\w-]+\.[\w-]+\.[\w-]+$/),
      refreshToken: expect.any(String),
      scope: 'profile:read',
    });
    expect(Date.parse(entry.expiresAt) - Date.now()).toBeGreaterThan(50 * 60_000);
    for (const secret of secretsOf(entry)) expect(done.stderr).not.toContain(secret);
  });

  it('when an assistant starts the bridge with no key, then tools answer with the stored token, and one outside the granted scope is refused -32001 with the --login hint', async () => {
    const c = await connect(bridgeEnv());
    try {
      expect(textOf(await call(c.client, 'ping'))).toMatch(/via=oauth/);
      expect(textOf(await call(c.client, 'get_user_profile'))).toContain(EMAIL);
      const refused = await failureOf(call(c.client, 'list_loved_ones'));
      expect(refused).toBeInstanceOf(McpError);
      expect(refused).toMatchObject({ code: RPC.UNAUTHORIZED, message: expect.stringContaining('care_circle:read') });
      expect((refused!.data as any).hint).toMatch(/granted profile:read, not care_circle:read\. Run carecircle-mcp --login http:\/\/127\.0\.0\.1:\d+ again/);
    } finally {
      await c.close();
    }
    expectOnlyProtocolLines(c.tap);
    expect(c.tap.stderr).toContain(`(OAuth sign-in from ${tokenFile}, scopes: profile:read;`);
    for (const secret of secretsOf(stored())) expect(c.tap.stderr).not.toContain(secret);
  });

  it('when --check runs with the sign-in, then it names the credential and the granted scopes, never a token', async () => {
    const out = await runCli(['--check'], bridgeEnv());
    expect(out.code).toBe(0);
    expect(out.stdout).toContain(`sign-in   OAuth (carecircle-mcp --login), stored in ${tokenFile}`);
    expect(out.stdout).toContain('scopes    profile:read\n');
    expect(out.stdout).toMatch(/ok {4}sign-in accepted: pong .* via=oauth/);
    expect(out.stdout).toMatch(/Verdict: READY/);
    for (const secret of secretsOf(stored())) expect(out.stdout + out.stderr).not.toContain(secret);
  });

  it('when --check runs with a sign-in granted only profile:read, then it names the tools that will be refused and how to tick the scope, and counts only the usable ones', async () => {
    const out = await runCli(['--check'], bridgeEnv());
    expect(out.code).toBe(0);
    expect(out.stdout).toContain('usable with this sign-in: ping, get_user_profile\n');
    expect(out.stdout).toContain(
      'WARN  refused with this sign-in: list_loved_ones (needs care_circle:read), list_care_events (needs care_circle:read), get_health_summary (needs care_circle:read), list_medications (needs care_circle:read), update_medication (needs care_circle:write), add_appointment (needs care_circle:write), list_appointments (needs care_circle:read), add_task (needs care_circle:write), update_task (needs care_circle:write), list_tasks (needs care_circle:read), add_care_note (needs care_circle:write), log_medication_dose (needs care_circle:write), record_vital (needs care_circle:write), retract_entry (needs care_circle:write)',
    );
    expect(out.stdout).toMatch(
      /fix: run carecircle-mcp --login http:\/\/127\.0\.0\.1:\d+ again in a terminal and tick care_circle:read and care_circle:write on the consent page/,
    );
    expect(out.stdout).toContain('Verdict: READY (2 of 16 tools usable with this sign-in).');
  });

  it('when a key is configured as well, then the key is used and the token file is never read, and --login refuses to start', async () => {
    // A token file that would stop any bridge that read it.
    const other = mkdtempSync(path.join(dir, 'unreadable-'));
    writeFileSync(path.join(other, 'tokens.json'), 'not json', { mode: 0o600 });
    const env = bridgeEnv({ CARECIRCLE_API_KEY: apiKey, CARECIRCLE_CONFIG_DIR: other });
    const check = await runCli(['--check'], env);
    expect(check.stdout).toMatch(/key {7}sk-svc-…[0-9a-f]{4} from CARECIRCLE_API_KEY/);
    expect(check.stdout).toMatch(/ok {4}key accepted: pong .* via=api-key/);
    expect(check.code).toBe(0);
    const refused = await runCli(['--login'], env);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('CARECIRCLE_API_KEY is set and a configured key always wins');
    expect(refused.stdout).toBe('');
  });

  it('when the stored access token has expired, then the bridge renews it first and rotates the stored refresh token', async () => {
    const before = stored();
    editStored((e) => (e.expiresAt = new Date(Date.now() - 60_000).toISOString()));
    const { code, reply, stderr } = await pingOnce(bridgeEnv());
    expect(code).toBe(0);
    expect(reply.result.content[0].text).toMatch(/via=oauth/);
    expect(stderr).toContain('renewed the access token (scopes: profile:read)');
    const after = stored();
    expect(after.refreshToken).not.toBe(before.refreshToken);
    expect(after.accessToken).not.toBe(before.accessToken);
    expect(Date.parse(after.expiresAt)).toBeGreaterThan(Date.now());
    expect(statSync(tokenFile).mode & 0o777).toBe(0o600);
  });

  it('when the server refuses the stored access token, then the bridge renews it and sends the call once more', async () => {
    const before = stored();
    // Still "valid" by the clock, but the signature is broken: the endpoint answers 401.
    editStored((e) => (e.accessToken = `${e.accessToken.slice(0, -6)}AAAAAA`));
    const { reply, stderr } = await pingOnce(bridgeEnv());
    expect(reply.result.content[0].text).toMatch(/via=oauth/);
    expect(stderr).toContain('renewed the access token');
    expect(stored().refreshToken).not.toBe(before.refreshToken);
  });

  it('when two bridges find the access token expired at the same time, then exactly one renews it and the sign-in survives', async () => {
    editStored((e) => (e.expiresAt = new Date(Date.now() - 60_000).toISOString()));
    const both = await Promise.all([pingOnce(bridgeEnv()), pingOnce(bridgeEnv())]);
    for (const b of both) expect(b.reply.result.content[0].text).toMatch(/via=oauth/);
    // The other one took the renewed token from the file instead of spending the old refresh token (a reuse, which revokes the grant).
    expect(both.filter((b) => b.stderr.includes('renewed the access token'))).toHaveLength(1);
    editStored((e) => (e.expiresAt = new Date(Date.now() - 60_000).toISOString()));
    expect((await pingOnce(bridgeEnv())).reply.result.content[0].text).toMatch(/via=oauth/);
  });

  it('when the grant is revoked at /oauth/revoke, then every call answers -32001 with the --login hint, until --login again (on another port, same client) revives the running bridge', async () => {
    const c = await connect(bridgeEnv());
    try {
      expect(textOf(await call(c.client, 'ping'))).toMatch(/via=oauth/);
      const first = stored();
      expect(await revokeAtServer(first)).toBe(200);

      const refused = await failureOf(call(c.client, 'ping'));
      expect(refused).toMatchObject({ code: RPC.UNAUTHORIZED });
      expect((refused!.data as any).hint).toMatch(/run carecircle-mcp --login http:\/\/127\.0\.0\.1:\d+ in a terminal/);
      const again = await failureOf(call(c.client, 'get_user_profile'));
      expect(again, again?.message).toMatchObject({
        code: RPC.UNAUTHORIZED,
        message: expect.stringMatching(/Your carecircle sign-in has ended: carecircle refused to renew it \(invalid_grant/),
      });
      expect((again!.data as any).hint).toContain('carecircle-mcp --login');
      // The dead tokens are gone from the file; the registered client stays for the next --login.
      expect(stored()).toMatchObject({ clientId: first.clientId });
      expect(stored().refreshToken).toBeUndefined();
      const check = await runCli(['--check'], bridgeEnv());
      expect(check.code).toBe(1);
      expect(check.stdout).toMatch(/FAIL {2}sign-in accepted: Your carecircle sign-in has ended/);

      // The port registered last time is taken: --login listens on another one and the server accepts it (RFC 8252 §7.3).
      const busy = createServer();
      busy.listen(Number(new URL(first.redirectUri).port), '127.0.0.1');
      await once(busy, 'listening');
      try {
        const done = await login(['profile:read', 'care_circle:read']);
        expect(done.code, done.stderr).toBe(0);
        expect(new URL(done.redirectUri).port).not.toBe(new URL(first.redirectUri).port);
        expect(done.authorizeUrl.searchParams.get('client_id')).toBe(first.clientId);
        expect(done.stderr).not.toContain('registered this bridge');
        expect(done.stderr).toContain('Granted: profile:read, care_circle:read.');
      } finally {
        busy.close();
      }
      expect(stored()).toMatchObject({ clientId: first.clientId, scope: 'profile:read care_circle:read' });

      // The same bridge process, without a restart, reads the new sign-in.
      const loved: any = await call(c.client, 'list_loved_ones');
      expect(JSON.parse(loved.content.at(-1).text).lovedOnes[0]).toMatchObject({ firstName: 'Nora' });
    } finally {
      await c.close();
    }
    expectOnlyProtocolLines(c.tap);
  });

  it('when --logout runs, then the refresh token is revoked at the server, the entry is removed, and a bridge without a key says how to sign in', async () => {
    const entry = stored();
    const out = await runCli(['--logout'], bridgeEnv());
    expect(out.code, out.stderr).toBe(0);
    expect(out.stdout).toBe('');
    expect(out.stderr).toContain('the sign-in was revoked at carecircle');
    expect(JSON.parse(readFileSync(tokenFile, 'utf8')).servers).toEqual({});
    expect(statSync(tokenFile).mode & 0o777).toBe(0o600);
    // Revoking the refresh token took the grant, and the access token with it.
    expect((await callEndpoint(svc, entry.accessToken, 'ping')).status).toBe(401);

    const start = await runCli([], bridgeEnv());
    expect(start.code).toBe(2);
    expect(start.stderr).toMatch(
      /No API key, and no browser sign-in stored for http:\/\/127\.0\.0\.1:\d+\/api\/mcp\. Mint a key at .*\/settings .*carecircle-mcp --login http:\/\/127\.0\.0\.1:\d+/,
    );
    expect(start.stdout).toBe('');
  });
});
