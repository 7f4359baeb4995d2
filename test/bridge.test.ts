// The stdio bridge (carecircle-mcp) against a real running service: the MCP SDK client spawns it
// as a desktop assistant does; raw stdin/stdout covers what a well-behaved client never sends.
// Every test checks that stdout held JSON-RPC replies only, each id answered once.
import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RPC } from '../src/rpc/codes.js';
import { appCall, caregiverWithKey } from './harness/identity.js';
import { freePort, repoRoot } from './harness/servers.js';
import { postJson, rpc, startTestService, surfaceEnv, type TestService } from './harness/service.js';

const BIN = 'bridge/bin.js';
const TOOLS = [
  'add_appointment',
  'add_care_note',
  'add_task',
  'get_health_summary',
  'get_user_profile',
  'list_appointments',
  'list_care_events',
  'list_loved_ones',
  'list_medications',
  'list_tasks',
  'log_medication_dose',
  'ping',
  'record_vital',
  'retract_entry',
  'update_medication',
  'update_task',
];
const dir = mkdtempSync(path.join(os.tmpdir(), 'cc-bridge-test-'));

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService({ nats: true });
});
afterAll(async () => {
  await svc?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const bridgeEnv = (apiKey: string, url = svc.config.appUrl) => ({ CARECIRCLE_URL: url, CARECIRCLE_API_KEY: apiKey });

function keyFile(apiKey: string, mode = 0o600): string {
  const file = path.join(dir, `key-${Math.random().toString(36).slice(2)}`);
  writeFileSync(file, `${apiKey}\n`);
  chmodSync(file, mode);
  return file;
}

// ---------------------------------------------------------------------------------------------
// What came out on stdout

interface Tap {
  stdout: Buffer[];
  stderr: string;
}

/** Every stdout line is one JSON-RPC response or a batch of them, and no id is answered twice. */
function expectOnlyProtocolLines(tap: Tap): any[] {
  const text = Buffer.concat(tap.stdout).toString('utf8');
  expect(text === '' || text.endsWith('\n')).toBe(true);
  const lines =
    text === ''
      ? []
      : text
          .slice(0, -1)
          .split('\n')
          .map((l) => JSON.parse(l) as unknown);
  const ids: string[] = [];
  for (const line of lines) {
    const messages = Array.isArray(line) ? line : [line];
    expect(messages.length).toBeGreaterThan(0);
    for (const m of messages as any[]) {
      expect(m.jsonrpc).toBe('2.0');
      expect('id' in m).toBe(true);
      expect('result' in m).not.toBe('error' in m);
      if ('error' in m) expect(m.error).toEqual(expect.objectContaining({ code: expect.any(Number), message: expect.any(String) }));
      if (m.id !== null) ids.push(JSON.stringify(m.id));
    }
  }
  expect(new Set(ids).size).toBe(ids.length);
  return lines;
}

// ---------------------------------------------------------------------------------------------
// The bridge under the MCP SDK client, as an assistant runs it

async function connect(env: Record<string, string>, args: string[] = []) {
  const transport = new StdioClientTransport({ command: process.execPath, args: [BIN, ...args], cwd: repoRoot, env, stderr: 'pipe' });
  const tap: Tap = { stdout: [], stderr: '' };
  const errors: Error[] = [];
  transport.stderr!.on('data', (c: Buffer) => (tap.stderr += c.toString()));
  // A second reader on the child's stdout: the bytes exactly as the client received them.
  const start = transport.start.bind(transport);
  transport.start = async () => {
    await start();
    (transport as any)._process.stdout.on('data', (c: Buffer) => tap.stdout.push(c));
  };
  const client = new Client({ name: 'bridge-test', version: '1.0.0' });
  await client.connect(transport);
  // Set after connect (which installs its own): a stdout line the SDK cannot parse lands here.
  client.onerror = (err) => errors.push(err);
  return { client, tap, errors, close: () => client.close() };
}

/** The JSON block of a tool result (the last one), and the readable summary (the first). */
const textOf = (result: any): string => result.content.at(-1).text;
const pongOf = (result: any): string => result.content[0].text;
const callTool = (client: Client, name: string, args: Record<string, unknown> = {}, timeout?: number) =>
  client.callTool({ name, arguments: args }, undefined, timeout ? { timeout } : undefined);
const failureOf = (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (err: unknown) => err as McpError,
  );

// ---------------------------------------------------------------------------------------------
// The bridge on raw pipes

function spawnBridge(env: Record<string, string>, args: string[] = []) {
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd: repoRoot,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const tap: Tap = { stdout: [], stderr: '' };
  child.stdout.on('data', (c: Buffer) => tap.stdout.push(c));
  child.stderr.on('data', (c: Buffer) => (tap.stderr += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  const waiters: (() => void)[] = [];
  const poke = () => waiters.splice(0).forEach((w) => w());
  child.stdout.on('data', poke);
  child.stderr.on('data', poke);
  child.on('close', poke);
  /** Resolves once `ready()` holds, re-checked whenever the bridge writes. */
  const until = async (ready: () => boolean): Promise<void> => {
    while (!ready()) {
      if (child.exitCode !== null) throw new Error(`bridge exited (${child.exitCode}): ${tap.stderr}`);
      await new Promise<void>((r) => waiters.push(r));
    }
  };
  const replies = (): any[] => {
    const text = Buffer.concat(tap.stdout).toString('utf8');
    return text
      .split('\n')
      .slice(0, -1)
      .map((l) => JSON.parse(l) as unknown);
  };
  const replyTo = async (id: unknown) => {
    await until(() => replies().some((r) => !Array.isArray(r) && r.id === id));
    return replies().find((r) => !Array.isArray(r) && r.id === id);
  };
  const send = (line: string) => child.stdin.write(`${line}\n`);
  return { child, tap, exited, until, replies, replyTo, send };
}

async function runCli(args: string[], env: Record<string, string>) {
  const b = spawnBridge(env, args);
  b.child.stdin.end();
  const code = await b.exited;
  return { code, stdout: Buffer.concat(b.tap.stdout).toString('utf8'), stderr: b.tap.stderr };
}

const line = (id: unknown, method: string, params?: Record<string, unknown>) => JSON.stringify({ jsonrpc: '2.0', id, method, ...(params ? { params } : {}) });
const pingTool = (id: unknown) => line(id, 'tools/call', { name: 'ping', arguments: {} });

// ---------------------------------------------------------------------------------------------

// Independent tests (own caregiver, own key, own bridge) run side by side to keep the file quick.
describe.concurrent('stdio bridge', () => {
  describe('an assistant through the MCP SDK', () => {
    it('when an assistant connects with a key file, then it initializes, lists the four tools and calls each one', async () => {
      const who = await caregiverWithKey(svc, 'bridge-tools@example.com');
      const c = await connect({ CARECIRCLE_URL: svc.config.appUrl }, ['--api-key-file', keyFile(who.apiKey)]);
      try {
        expect(c.client.getServerVersion()).toMatchObject({ name: 'carecircle-workspace' });
        const { tools } = await c.client.listTools();
        expect(tools.map((t) => t.name).sort()).toEqual(TOOLS);
        expect(pongOf(await callTool(c.client, 'ping'))).toMatch(/^pong from .* tenant=family via=api-key$/);
        expect(JSON.parse(textOf(await callTool(c.client, 'get_user_profile')))).toMatchObject({ email: 'bridge-tools@example.com', tenant: 'family' });
        const loved = JSON.parse(textOf(await callTool(c.client, 'list_loved_ones')));
        expect(loved.lovedOnes).toEqual([expect.objectContaining({ id: who.lovedOneId, firstName: 'Rosa' })]);
        expect(JSON.parse(textOf(await callTool(c.client, 'list_care_events', { lovedOneId: who.lovedOneId, limit: 5 })))).toMatchObject({
          lovedOneId: who.lovedOneId,
          events: [],
        });
        const bad = await failureOf(callTool(c.client, 'list_care_events', { limit: 99 }));
        expect(bad).toMatchObject({ code: RPC.INVALID_PARAMS, message: expect.stringMatching(/limit/) });
      } finally {
        await c.close();
      }
      expectOnlyProtocolLines(c.tap);
      expect(c.errors).toEqual([]);
      expect(c.tap.stderr).toMatch(/→ http:\/\/127\.0\.0\.1:\d+\/api\/mcp \(key sk-svc-…[0-9a-f]{4} from --api-key-file/);
      expect(c.tap.stderr).not.toContain(who.apiKey);
    });

    it('when 50 calls are in flight at once, then each gets its own reply', async () => {
      const who = await caregiverWithKey(svc, 'bridge-fifty@example.com');
      const c = await connect(bridgeEnv(who.apiKey));
      try {
        const names = ['ping', 'get_user_profile', 'list_loved_ones', 'list_care_events'];
        const results = await Promise.all(Array.from({ length: 50 }, (_, i) => callTool(c.client, names[i % 4]!)));
        results.forEach((r, i) => {
          expect(r.isError).toBeFalsy();
          if (i % 4 === 0) expect(pongOf(r)).toMatch(/via=api-key/);
          if (i % 4 === 2) expect(JSON.parse(textOf(r)).lovedOnes[0].id).toBe(who.lovedOneId);
        });
      } finally {
        await c.close();
      }
      const lines = expectOnlyProtocolLines(c.tap);
      expect(lines).toHaveLength(51); // initialize and the 50 calls
      expect(c.errors).toEqual([]);
    });

    it('when the key is revoked mid-session, then the next call fails with -32001 and says where to mint a new key', async () => {
      const who = await caregiverWithKey(svc, 'bridge-revoked@example.com');
      const c = await connect(bridgeEnv(who.apiKey));
      try {
        expect(pongOf(await callTool(c.client, 'ping'))).toMatch(/via=api-key/);
        expect((await appCall(svc, who.cookie, 'POST', `/api/keys/${who.keyId}/revoke`)).status).toBe(200);
        const err = await failureOf(callTool(c.client, 'list_loved_ones'));
        expect(err).toBeInstanceOf(McpError);
        expect(err).toMatchObject({ code: RPC.UNAUTHORIZED, message: expect.stringMatching(/API key revoked/) });
        expect(err!.data).toMatchObject({ httpStatus: 403, hint: expect.stringContaining(`${svc.config.appUrl}/settings`) });
        expect((err!.data as any).hint).toMatch(/CARECIRCLE_API_KEY/);
      } finally {
        await c.close();
      }
      expectOnlyProtocolLines(c.tap);
      expect(c.errors).toEqual([]);
    });

    it('when the key runs out of requests, then the bridge waits Retry-After and retries once, and answers -32029 when that fails too', async () => {
      const who = await caregiverWithKey(svc, 'bridge-limited@example.com');
      const c = await connect(bridgeEnv(who.apiKey));
      try {
        // Straight to the endpoint, past the bridge: empty this key's bucket (60 a minute, one more each second).
        const statuses = await Promise.all(
          Array.from({ length: 65 }, () => postJson(`${svc.urls.app}/api/mcp`, rpc('ping'), { authorization: `Bearer ${who.apiKey}` }).then((r) => r.status)),
        );
        expect(statuses).toContain(429);
        // More calls than the wait mints tokens for: the retry lets some through and the rest are refused.
        const outcomes = await Promise.all(Array.from({ length: 8 }, () => callTool(c.client, 'ping').then(pongOf, (err: unknown) => err as McpError)));
        const passed = outcomes.filter((o) => typeof o === 'string');
        const refused = outcomes.filter((o) => typeof o !== 'string');
        expect(passed.length).toBeGreaterThanOrEqual(1);
        for (const text of passed) expect(text).toMatch(/via=api-key/);
        expect(refused.length).toBeGreaterThanOrEqual(1);
        for (const e of refused) {
          expect(e).toMatchObject({ code: RPC.RATE_LIMITED, message: expect.stringMatching(/Rate limit exceeded/) });
          expect(e.data).toMatchObject({ retryAfterSec: expect.any(Number), httpStatus: 429, hint: expect.stringMatching(/Wait \d+ s/) });
        }
        expect(c.tap.stderr).toMatch(/rate limited \(429\); retrying once in \d+ s/);
        expect(c.tap.stderr).toMatch(/rate limited \(429\); answered -32029/);
      } finally {
        await c.close();
      }
      expectOnlyProtocolLines(c.tap);
      expect(c.errors).toEqual([]);
    });

    it('when the server goes down, then calls fail with -32603 within the timeout, and succeed again once it is back', async () => {
      const ports = await surfaceEnv();
      const first = await startTestService({ nats: true, env: ports });
      let second: TestService | undefined;
      let firstRunning = true;
      const who = await caregiverWithKey(first, 'bridge-restart@example.com');
      const timeoutMs = 2000;
      const c = await connect(bridgeEnv(who.apiKey, first.config.appUrl), ['--timeout-ms', String(timeoutMs)]);
      try {
        expect(pongOf(await callTool(c.client, 'ping'))).toMatch(/via=api-key/);
        await first.stop();
        firstRunning = false;
        // The SDK gives up after the bound: an answer at all proves the bridge answered within it.
        const err = await failureOf(callTool(c.client, 'ping', {}, timeoutMs + 3000));
        expect(err).toMatchObject({ code: RPC.INTERNAL_ERROR, message: expect.stringMatching(/Cannot reach carecircle at 127\.0\.0\.1:\d+: .*ECONNREFUSED/) });
        expect((err!.data as any).hint).toMatch(/start carecircle/);

        second = await startTestService({ nats: true, env: ports, mongoUrl: first.mongoUrl });
        expect(pongOf(await callTool(c.client, 'ping'))).toMatch(/via=api-key/);
      } finally {
        await c.close();
        if (firstRunning) await first.stop();
        await second?.stop();
      }
      expectOnlyProtocolLines(c.tap);
      expect(c.errors).toEqual([]);
    });
  });

  describe('raw stdin and stdout', () => {
    it('when stdin carries garbage, oversized and malformed lines, then each gets a parse or envelope error and the bridge keeps serving', async () => {
      const who = await caregiverWithKey(svc, 'bridge-garbage@example.com');
      const b = spawnBridge(bridgeEnv(who.apiKey));
      b.send('not json');
      b.send('{"jsonrpc":"2.0","id":"trunc","method":"tools/li');
      // Over 1 MiB, written as the SDK writes a request: the id last.
      b.send(JSON.stringify({ method: 'tools/call', params: { name: 'ping', arguments: { pad: 'x'.repeat(1_500_000) } }, jsonrpc: '2.0', id: 'big' }));
      b.send('42');
      b.send('[]');
      b.send('{"jsonrpc":"2.0","id":"no-method"}');
      b.send('');
      b.send('{"jsonrpc":"2.0","id":99,"result":{}}');
      b.send('{"jsonrpc":"2.0","method":"notifications/initialized"}');
      b.send(`[${line('b1', 'ping')},${pingTool('b2')},{"jsonrpc":"2.0","method":"notifications/initialized"},3]`);
      b.child.stdin.write(Buffer.from([0x00, 0xff, 0xfe, 0x0a]));
      b.send(line('unknown', 'completion/complete'));
      b.send(pingTool('alive'));
      b.child.stdin.end();
      expect(await b.exited).toBe(0);

      const lines = expectOnlyProtocolLines(b.tap);
      expect(lines).toHaveLength(10);
      const single = (id: unknown) => lines.find((l) => !Array.isArray(l) && l.id === id);
      const nullIds = lines.filter((l) => !Array.isArray(l) && l.id === null).map((l) => l.error.code);
      expect(nullIds.sort((x, y) => x - y)).toEqual([RPC.PARSE_ERROR, RPC.PARSE_ERROR, RPC.INVALID_REQUEST, RPC.INVALID_REQUEST]);
      expect(single('trunc').error).toMatchObject({ code: RPC.PARSE_ERROR, message: expect.stringMatching(/not valid JSON/) });
      expect(single('big').error).toMatchObject({ code: RPC.PARSE_ERROR, message: expect.stringMatching(/1500\d+ bytes.*1 MiB/) });
      expect(single('no-method').error).toMatchObject({ code: RPC.INVALID_REQUEST, message: expect.stringMatching(/method/) });
      expect(single('unknown').error).toMatchObject({ code: RPC.METHOD_NOT_FOUND });
      expect(single('alive').result.content[0].text).toMatch(/via=api-key/);
      expect(single(99)).toBeUndefined();
      const batch = lines.find((l) => Array.isArray(l));
      expect(batch).toEqual([
        { jsonrpc: '2.0', id: 'b1', result: {} },
        { jsonrpc: '2.0', id: 'b2', result: expect.objectContaining({ content: expect.any(Array) }) },
        expect.objectContaining({ id: null, error: expect.objectContaining({ code: RPC.INVALID_REQUEST }) }),
      ]);
    });

    it('when initialize negotiates 2025-06-18, then later requests carry that version (structured results, no batches)', async () => {
      const who = await caregiverWithKey(svc, 'bridge-version@example.com');
      const b = spawnBridge(bridgeEnv(who.apiKey));
      try {
        b.send(line(1, 'initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } }));
        expect((await b.replyTo(1)).result.protocolVersion).toBe('2025-06-18');
        b.send(pingTool(2));
        expect((await b.replyTo(2)).result.structuredContent).toMatchObject({ pong: true, via: 'api-key' });
        b.send(`[${line(3, 'ping')},${line(4, 'ping')}]`);
        await b.until(() => b.replies().some(Array.isArray));
        const batch = b.replies().find(Array.isArray) as any[];
        expect(batch.map((r: any) => r.id)).toEqual([3, 4]);
        for (const r of batch)
          expect(r.error).toMatchObject({ code: RPC.INVALID_REQUEST, message: expect.stringMatching(/batches are not part of MCP 2025-06-18/) });
      } finally {
        b.child.stdin.end();
      }
      expect(await b.exited).toBe(0);
      expect(b.tap.stderr).toMatch(/negotiated MCP 2025-06-18/);
      expectOnlyProtocolLines(b.tap);
    });

    it('when stdin closes with requests in flight, then every reply is written before the bridge exits 0', async () => {
      const who = await caregiverWithKey(svc, 'bridge-eof@example.com');
      // The key through --header with ${VAR}, as a Windows config would pass a value with spaces.
      const b = spawnBridge({ CARECIRCLE_URL: svc.config.appUrl, CC_TOKEN: who.apiKey }, ['--header', 'Authorization:Bearer ${CC_TOKEN}']);
      for (let i = 0; i < 10; i++) b.send(line(i, 'tools/call', { name: 'list_care_events', arguments: { limit: 3 } }));
      b.child.stdin.end();
      expect(await b.exited).toBe(0);
      const lines = expectOnlyProtocolLines(b.tap);
      expect(lines.map((l) => l.id).sort()).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
      for (const l of lines) expect(l.result.content).toBeDefined();
    });
  });

  describe('a service whose workers do not answer', () => {
    let gateway: TestService;
    const someKey = `sk-svc-${'ab'.repeat(32)}`;
    beforeAll(async () => {
      // A gateway alone: it retries for the window, then answers 503 -32030.
      gateway = await startTestService({ role: 'gateway', nats: true, env: { GATEWAY_RETRY_WINDOW_MS: '2500' } });
    });
    afterAll(async () => {
      await gateway?.stop();
    });

    it('when the server is slower than --timeout-ms, then the request is answered -32603 with the cause', async () => {
      const b = spawnBridge(bridgeEnv(someKey, gateway.config.appUrl), ['--timeout-ms', '300']);
      b.send(pingTool('slow'));
      const reply = await b.replyTo('slow');
      b.child.stdin.end();
      expect(await b.exited).toBe(0);
      expect(reply.error).toMatchObject({
        code: RPC.INTERNAL_ERROR,
        message: 'carecircle did not answer within 300 ms',
        data: { hint: expect.stringMatching(/readyz.*--timeout-ms/) },
      });
      expectOnlyProtocolLines(b.tap);
    });

    it("when SIGTERM arrives with requests waiting on the server, then they are answered (the server's -32030) before exit 0", async () => {
      const b = spawnBridge(bridgeEnv(someKey, gateway.config.appUrl), ['--log-level', 'debug']);
      for (const id of [1, 2, 3]) b.send(pingTool(id));
      await b.until(() => [1, 2, 3].every((id) => b.tap.stderr.includes(`→ tools/call (id ${id})`)));
      b.child.kill('SIGTERM');
      expect(await b.exited).toBe(0);
      const lines = expectOnlyProtocolLines(b.tap);
      expect(lines.map((l) => l.id).sort()).toEqual([1, 2, 3]);
      for (const l of lines)
        expect(l.error).toMatchObject({ code: RPC.UNAVAILABLE, data: { httpStatus: 503, retryAfterSec: expect.any(Number), hint: expect.any(String) } });
      expect(b.tap.stderr).toMatch(/SIGTERM; answering 3 pending/);
    });
  });

  describe('carecircle-mcp --check', () => {
    it('when the key is good, then every step passes and the verdict is READY (exit 0)', async () => {
      const who = await caregiverWithKey(svc, 'bridge-check@example.com');
      const out = await runCli(['--check'], bridgeEnv(who.apiKey));
      expect(out.stdout).toMatch(/ok {4}server reached: carecircle-workspace \S+ \(MCP 2025-06-18/);
      expect(out.stdout).toMatch(/ok {4}key accepted: pong from .* via=api-key/);
      expect(out.stdout).toContain(
        `ok    16 tools: ping, get_user_profile, list_loved_ones, list_care_events, get_health_summary, list_medications, update_medication, add_care_note, log_medication_dose, record_vital, retract_entry, add_appointment, list_appointments, add_task, update_task, list_tasks`,
      );
      expect(out.stdout).toMatch(/Verdict: READY/);
      expect(out.stdout).not.toContain(who.apiKey);
      expect(out.code).toBe(0);
      expect(out.stdout).toMatch(/server reached: .*, the family workspace endpoint\n/);
      expect(out.stdout).toContain('usable with this key: all 16 listed (a read-only key is shown no write tools)');
      expect(out.stdout).toContain('Verdict: READY (16 of 16 tools usable with this key).');
      expect(out.stdout).not.toContain('WARN');
    });

    it('when pointed at the site URL, then it names the public directory and the app URL to use instead (exit 1), never "Unknown tool"', async () => {
      const out = await runCli(['--check', svc.config.siteUrl], { CARECIRCLE_API_KEY: `sk-svc-${'ab'.repeat(32)}` });
      expect(out.stdout).toContain(
        `FAIL  the workspace endpoint: this is carecircle's public directory at ${svc.config.siteUrl}/api/mcp, not the family workspace`,
      );
      expect(out.stdout).toContain("fix: Set CARECIRCLE_URL to carecircle's app URL (APP_URL, where caregivers sign in), for example http://localhost:8081");
      expect(out.stdout).not.toContain('Unknown tool');
      expect(out.stdout).toMatch(/Verdict: NOT READY/);
      expect(out.code).toBe(1);
    });

    it('when pointed at the sandbox endpoint, then it names it and the app URL to use instead (exit 1)', async () => {
      const out = await runCli(['--check', `${svc.config.appUrl}/api/mcp/public`], { CARECIRCLE_API_KEY: `sk-svc-${'ab'.repeat(32)}` });
      expect(out.stdout).toContain(`endpoint  ${svc.config.appUrl}/api/mcp/public\n`);
      expect(out.stdout).toContain(`FAIL  the workspace endpoint: this is carecircle's sandbox endpoint at ${svc.config.appUrl}/api/mcp/public`);
      expect(out.stdout).toContain(`fix: Set CARECIRCLE_URL to carecircle's app URL, ${svc.config.appUrl} (without /api/mcp/public).`);
      expect(out.stdout).toMatch(/Verdict: NOT READY/);
      expect(out.code).toBe(1);
    });

    it('when the key is revoked, then the key step fails with the fix and the verdict is NOT READY (exit 1)', async () => {
      const who = await caregiverWithKey(svc, 'bridge-check-revoked@example.com');
      await appCall(svc, who.cookie, 'POST', `/api/keys/${who.keyId}/revoke`);
      const out = await runCli(['--check'], bridgeEnv(who.apiKey));
      expect(out.stdout).toMatch(/ok {4}server reached/);
      expect(out.stdout).toMatch(/FAIL {2}key accepted: API key revoked \(-32001\)/);
      expect(out.stdout).toContain(`fix: This key was revoked; mint a new one at ${svc.config.appUrl}/settings.`);
      expect(out.stdout).toMatch(/Verdict: NOT READY/);
      expect(out.code).toBe(1);
    });

    it('when nothing listens at the URL, then reaching the server fails with the cause and the fix (exit 1)', async () => {
      const url = `http://127.0.0.1:${await freePort()}`;
      const out = await runCli(['--check', url], { CARECIRCLE_API_KEY: `sk-svc-${'cd'.repeat(32)}` });
      expect(out.stdout).toContain(`endpoint  ${url}/api/mcp`);
      expect(out.stdout).toMatch(/FAIL {2}reach the server: Cannot reach carecircle at 127\.0\.0\.1:\d+: .*ECONNREFUSED/);
      expect(out.stdout).toMatch(/fix: Nothing is listening there: start carecircle \(npm start\), or set CARECIRCLE_URL/);
      expect(out.stdout).toMatch(/Verdict: NOT READY/);
      expect(out.code).toBe(1);
    });

    it('when the key file is readable by others, then the bridge refuses to start and says which chmod to run (exit 2)', async () => {
      const who = `sk-svc-${'ef'.repeat(32)}`;
      const file = keyFile(who, 0o644);
      const out = await runCli(['--api-key-file', file], { CARECIRCLE_URL: svc.config.appUrl });
      expect(out.code).toBe(2);
      expect(out.stderr).toContain(`chmod 600 ${file}`);
      expect(out.stdout).toBe('');
    });
  });
});
