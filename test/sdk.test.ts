// The official MCP TypeScript SDK client against the directory endpoint over Streamable HTTP.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from './harness/service.js';

describe('MCP SDK client - directory endpoint', () => {
  let svc: TestService;
  let client: Client;
  beforeAll(async () => {
    svc = await startTestService({ nats: true });
    client = new Client({ name: 'carecircle-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${svc.urls.site}/api/mcp`)));
  });
  afterAll(async () => {
    await client?.close();
    await svc?.stop();
  });

  it('when connected, then the server introduces itself with a supported version', () => {
    expect(client.getServerVersion()).toMatchObject({ name: 'carecircle-directory' });
    expect(client.getServerCapabilities()?.tools).toBeDefined();
  });

  it('when listing tools, then all three come with schemas the SDK accepts', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(['calculate_long_term_care_cost', 'get_channel', 'search_care_resources']);
  });

  it('when calling every tool, then each answers', async () => {
    const search = await client.callTool({ name: 'search_care_resources', arguments: { query: 'veterans caregiver support', limit: 3 } });
    expect(search.isError).toBeFalsy();
    const found = (search.structuredContent ?? JSON.parse((search.content as any)[0].text)) as any;
    expect(found.results[0].title).toMatch(/Veteran|VA/);

    const channel = await client.callTool({ name: 'get_channel', arguments: { slug: 'long-distance-caregiving' } });
    expect(channel.isError).toBeFalsy();

    const cost = await client.callTool({ name: 'calculate_long_term_care_cost', arguments: { careType: 'home_health_aide', state: 'Ohio', years: 3 } });
    const est = (cost.structuredContent ?? JSON.parse((cost.content as any)[0].text)) as any;
    expect(est.location).toMatchObject({ scope: 'state', code: 'OH' });
    expect(est.perYear).toHaveLength(3);
  });

  it('when a tool argument is wrong, then the SDK surfaces the error naming the field', async () => {
    await expect(client.callTool({ name: 'search_care_resources', arguments: { query: 'x', limit: 99 } })).rejects.toThrow(/limit/);
  });
});
