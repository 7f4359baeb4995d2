// The bridge file the app serves, run as Settings → Connect an assistant says: each stdio snippet,
// exactly as the page prints it, launched from an empty folder by the MCP SDK's stdio client against
// a running service, with only the downloaded file on disk (no clone, no npm package).
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BRIDGE_PLACEHOLDER } from '../src/app/connect.js';
import { appendCareEvents } from '../src/family/records.js';
import { caregiverWithKey } from './harness/identity.js';
import { startTestService, type TestService } from './harness/service.js';

const tmp = mkdtempSync(path.join(os.tmpdir(), 'cc-bridge-download-'));
let svc: TestService;
let family: Awaited<ReturnType<typeof caregiverWithKey>>;

beforeAll(async () => {
  svc = await startTestService();
  family = await caregiverWithKey(svc, 'download@example.com');
  await appendCareEvents(svc.timelines, [
    {
      _id: 'evt_download_1',
      lovedOneId: family.lovedOneId,
      workspaceId: family.workspaceId,
      source: 'partner',
      institutionId: 'inst_test',
      eventType: 'note_added',
      occurredAt: new Date(Date.now() - 3_600_000),
      receivedAt: new Date(),
      payload: { caregiver_id: 'Ana', note_text: 'Read the paper on the porch.' },
    },
  ]);
});
afterAll(async () => {
  await svc?.stop();
  rmSync(tmp, { recursive: true, force: true });
});

const unescape = (html: string) =>
  html
    .replace(/&quot;/g, '"')
    .replace(/&#39;|&#x27;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');

/** Mint a key through the Settings form and read the Connect page that follows, as a browser would. */
async function connectPage(): Promise<{ html: string; apiKey: string }> {
  const origin = new URL(svc.config.appUrl).origin;
  const minted = await fetch(`${svc.urls.app}/settings/keys`, {
    method: 'POST',
    headers: { cookie: family.cookie, origin, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ name: 'Desktop' }),
    redirect: 'manual',
  });
  expect(minted.status).toBe(303);
  const flash = minted.headers.get('set-cookie')!.split(';')[0]!;
  const page = await fetch(`${svc.urls.app}/settings/connect`, { headers: { cookie: `${family.cookie}; ${flash}` } });
  const html = await page.text();
  return { html, apiKey: unescape(/id="new-key"[^>]*>\s*([^<]+?)\s*</.exec(html)![1]!) };
}

const snippet = (html: string, id: string): any => JSON.parse(unescape(new RegExp(`id="config-${id}"[^>]*>([^<]*)</pre>`).exec(html)![1]!));

describe('bridge download - the snippets of the Connect page', () => {
  it('when a person downloads the bridge, then the file matches the SHA-256 the page shows and the checksum file', async () => {
    const { html } = await connectPage();
    const shown = /id="bridge-sha256">\s*([0-9a-f]{64})\s*</.exec(html)?.[1];
    expect(shown, 'checksum on the page').toBeDefined();
    const file = await fetch(`${svc.urls.app}/downloads/carecircle-bridge.mjs`);
    expect(file.status).toBe(200);
    expect(file.headers.get('content-disposition')).toBe('attachment; filename="carecircle-bridge.mjs"');
    const bytes = Buffer.from(await file.arrayBuffer());
    expect(createHash('sha256').update(bytes).digest('hex')).toBe(shown);
    // One file: everything but Node's own modules is inside it.
    const imports = [...bytes.toString('utf8').matchAll(/^import .* from "([^"]+)";$/gm)].map((m) => m[1]!);
    expect(imports.length).toBeGreaterThan(0);
    expect(imports.filter((spec) => !spec.startsWith('node:'))).toEqual([]);
    expect(await (await fetch(`${svc.urls.app}/downloads/carecircle-bridge.mjs.sha256`)).text()).toBe(`${shown}  carecircle-bridge.mjs\n`);
    expect(html).not.toContain('npx');
  });

  for (const [id, entryOf] of [
    ['claude-desktop', (c: any) => c.mcpServers.carecircle],
    ['zed', (c: any) => c.context_servers.carecircle],
  ] as const) {
    it(`when the ${id} snippet is launched from an empty folder with the downloaded file, then list_care_events answers through it`, async () => {
      const { html, apiKey } = await connectPage();
      const entry = entryOf(snippet(html, id)) as { command: string; args: string[]; env: Record<string, string> };
      expect(entry.env).toEqual({ CARECIRCLE_URL: svc.config.appUrl, CARECIRCLE_API_KEY: apiKey });
      expect(entry.args).toEqual([BRIDGE_PLACEHOLDER]);

      const saved = mkdtempSync(path.join(tmp, 'downloads-'));
      const bridgeFile = path.join(saved, 'carecircle-bridge.mjs');
      writeFileSync(bridgeFile, Buffer.from(await (await fetch(`${svc.urls.app}/downloads/carecircle-bridge.mjs`)).arrayBuffer()));
      const empty = mkdtempSync(path.join(tmp, 'cwd-'));

      const transport = new StdioClientTransport({
        command: entry.command,
        args: entry.args.map((a) => (a === BRIDGE_PLACEHOLDER ? bridgeFile : a)),
        env: entry.env,
        cwd: empty,
        stderr: 'pipe',
      });
      let stderr = '';
      transport.stderr?.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
      const client = new Client({ name: `carecircle-${id}-test`, version: '1.0.0' });
      try {
        await client.connect(transport);
        const result = await client.callTool({ name: 'list_care_events', arguments: { lovedOneId: family.lovedOneId } });
        expect(result.isError, stderr).toBeFalsy();
        expect(JSON.stringify(result.structuredContent ?? result.content)).toContain('Read the paper on the porch.');
      } finally {
        await client.close();
      }
      expect(readdirSync(empty)).toEqual([]);
    });
  }

  it('when the downloaded file is asked for help, then every command it names is the one to type: node with the file', async () => {
    const bridgeFile = path.join(mkdtempSync(path.join(tmp, 'help-')), 'carecircle-bridge.mjs');
    writeFileSync(bridgeFile, Buffer.from(await (await fetch(`${svc.urls.app}/downloads/carecircle-bridge.mjs`)).arrayBuffer()));
    const { stdout } = await promisify(execFile)(process.execPath, [bridgeFile, '--help']);
    expect(stdout).toContain('  node carecircle-bridge.mjs --login [URL]\n');
    expect(stdout).toContain('run node carecircle-bridge.mjs --login again');
    expect(stdout).not.toMatch(/carecircle-mcp --/);
  });

  for (const [id, entryOf] of [
    ['cursor', (c: any) => c.mcpServers.carecircle],
    ['vscode', (c: any) => c.servers.carecircle],
  ] as const) {
    it(`when the ${id} snippet's URL and header are used as given, then list_care_events answers over HTTP`, async () => {
      const { html, apiKey } = await connectPage();
      const entry = entryOf(snippet(html, id)) as { url: string; headers: Record<string, string> };
      expect(entry.headers).toEqual({ Authorization: `Bearer ${apiKey}` });
      const client = new Client({ name: `carecircle-${id}-test`, version: '1.0.0' });
      try {
        await client.connect(new StreamableHTTPClientTransport(new URL(entry.url), { requestInit: { headers: entry.headers } }));
        const result = await client.callTool({ name: 'list_care_events', arguments: { lovedOneId: family.lovedOneId } });
        expect(result.isError).toBeFalsy();
        expect(JSON.stringify(result.structuredContent ?? result.content)).toContain('Read the paper on the porch.');
      } finally {
        await client.close();
      }
    });
  }
});
