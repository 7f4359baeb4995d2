// The stdio bridge in both protocol eras: the official SDK v2 client spawns it as an assistant
// does and speaks 2026-07-28 (no initialize, per-request _meta, server/discover) or the 2025 era
// (initialize), and the v1 SDK client speaks 2025; each lists and calls tools, prompts and resources.
import { Client as ClientV2 } from '@modelcontextprotocol/client';
import { StdioClientTransport as StdioV2 } from '@modelcontextprotocol/client/stdio';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport as StdioV1 } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { caregiverWithKey } from './harness/identity.js';
import { repoRoot } from './harness/servers.js';
import { startTestService, type TestService } from './harness/service.js';

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

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService({ nats: true });
});
afterAll(async () => {
  await svc?.stop();
});

const bridge = (apiKey: string) => ({
  command: process.execPath,
  args: ['bridge/bin.js'],
  cwd: repoRoot,
  env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', CARECIRCLE_URL: svc.config.appUrl, CARECIRCLE_API_KEY: apiKey },
  stderr: 'pipe' as const,
});

type AnyClient = Pick<ClientV2, 'listTools' | 'callTool' | 'listPrompts' | 'getPrompt' | 'listResources' | 'readResource'>;

/** The same questions in any era: tools, the weekly summary and the timeline resource. */
async function askEverything(client: AnyClient, lovedOneId: string) {
  const { tools } = await client.listTools();
  expect(tools.map((t) => t.name).sort()).toEqual(TOOLS);
  const ping = await client.callTool({ name: 'ping', arguments: {} });
  expect((ping.content as { text: string }[])[0]!.text).toMatch(/^pong from .* via=api-key$/);
  const events = await client.callTool({ name: 'list_care_events', arguments: { lovedOneId, limit: 5 } });
  expect(events.isError).toBeFalsy();
  const { prompts } = await client.listPrompts();
  expect(prompts.map((p) => p.name)).toEqual(['weekly_care_summary']);
  const summary = await client.getPrompt({ name: 'weekly_care_summary', arguments: { lovedOneId } });
  expect((summary.messages[0]!.content as { text: string }).text).toContain('Rosa Rivera');
  const { resources } = await client.listResources();
  expect(resources.map((r) => r.uri)).toEqual([`carecircle://loved-ones/${lovedOneId}/timeline`]);
  const read = await client.readResource({ uri: resources[0]!.uri });
  expect((read.contents[0] as { text: string }).text).toContain("Rosa Rivera's care timeline");
}

describe.concurrent('the stdio bridge in both eras', () => {
  for (const modern of [true, false]) {
    it(`when the SDK v2 client speaks ${modern ? '2026-07-28 (no initialize)' : 'the 2025 era'} to the bridge, then it discovers and calls tools, prompts and resources`, async () => {
      const who = await caregiverWithKey(svc, `bridge-v2-${modern ? 'modern' : 'legacy'}@example.com`);
      const transport = new StdioV2(bridge(who.apiKey));
      let stderr = '';
      transport.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
      const client = new ClientV2({ name: 'carecircle-bridge-era-test', version: '1.0.0' }, modern ? { versionNegotiation: { mode: 'auto' } } : {});
      await client.connect(transport);
      try {
        expect(client.getNegotiatedProtocolVersion()).toBe(modern ? '2026-07-28' : '2025-11-25');
        expect(client.getServerVersion()).toMatchObject({ name: 'carecircle-workspace' });
        await askEverything(client, who.lovedOneId);
      } finally {
        await client.close();
      }
      // A 2026-07-28 client never sends initialize through the bridge; a 2025 one does.
      expect(stderr.includes('negotiated MCP'), stderr).toBe(!modern);
    });
  }

  it('when the v1 SDK client speaks the 2025 era to the bridge, then it initializes and calls tools, prompts and resources', async () => {
    const who = await caregiverWithKey(svc, 'bridge-v1@example.com');
    const client = new ClientV1({ name: 'carecircle-bridge-v1-test', version: '1.0.0' });
    await client.connect(new StdioV1(bridge(who.apiKey)));
    try {
      expect(client.getServerVersion()).toMatchObject({ name: 'carecircle-workspace' });
      await askEverything(client as unknown as AnyClient, who.lovedOneId);
    } finally {
      await client.close();
    }
  });
});
