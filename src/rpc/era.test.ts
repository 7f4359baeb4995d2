import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool, McpServer, type McpServerOptions } from './mcp.js';
import { decodeHeaderValue, MODERN_RPC } from './versions.js';

const echo = defineTool({
  name: 'echo',
  title: 'Echo',
  description: 'Returns its text.',
  input: z.object({ text: z.string().min(1) }).strict(),
  annotations: { readOnlyHint: true },
  output: z.object({ text: z.string() }),
  handler: async ({ text }) => ({ structured: { text } }),
});
const secret = defineTool({ ...echo, name: 'secret', title: 'Secret', scope: 'secret:read' } as never);

const MODERN = '2026-07-28';
const meta = { 'io.modelcontextprotocol/protocolVersion': MODERN, 'io.modelcontextprotocol/clientCapabilities': {} };
function server(over: Partial<McpServerOptions> = {}) {
  return new McpServer({
    name: 't',
    title: 'T',
    version: '1',
    tools: [echo, secret],
    holdsScope: () => true,
    notificationStatus: 204,
    invalidArguments: 'error',
    maxReplyBytes: 1_048_576,
    ...over,
  });
}
const ctx = { requestId: 'r1', clientIp: '127.0.0.1' };
const post = (s: McpServer, body: unknown, headers: Record<string, string> = {}) => s.handlePost({ method: 'POST', headers, body }, ctx);
const modern = (method: string, params: Record<string, unknown> = {}) => ({ jsonrpc: '2.0', id: 1, method, params: { ...params, _meta: meta } });
const headers = (method: string, name?: string) => ({ 'mcp-protocol-version': MODERN, 'mcp-method': method, ...(name ? { 'mcp-name': name } : {}) });

describe('mcp core - 2026-07-28', () => {
  it('tools/call answers with resultType, structuredContent and the text block', async () => {
    const r = await post(server(), modern('tools/call', { name: 'echo', arguments: { text: 'hi' } }), headers('tools/call', 'echo'));
    expect(r.status).toBe(200);
    expect((r.body as any).result).toMatchObject({
      resultType: 'complete',
      structuredContent: { text: 'hi' },
      content: [{ type: 'text', text: '{"text":"hi"}' }],
    });
  });

  it('an unknown tool is -32602, invalid arguments an isError result, as the revision says', async () => {
    const u = await post(server(), modern('tools/call', { name: 'nope', arguments: {} }), headers('tools/call', 'nope'));
    expect((u.body as any).error.code).toBe(-32602);
    const a = await post(server(), modern('tools/call', { name: 'echo', arguments: { text: '' } }), headers('tools/call', 'echo'));
    expect((a.body as any).result).toMatchObject({ isError: true, resultType: 'complete' });
  });

  it('a notification is 202 with no body, even where the 2025 era answers 204', async () => {
    expect(await post(server(), { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1, _meta: meta } })).toEqual({
      status: 202,
      headers: {},
    });
  });

  it('a batch carrying the envelope is refused whole', async () => {
    const r = await post(server(), [modern('tools/list')]);
    expect(r.status).toBe(400);
  });

  it('tools/list and server/discover show only visible tools; lists carry cache hints', async () => {
    const s = server({ holdsScope: () => false, cacheScope: 'private' });
    const l = await post(s, modern('tools/list'), headers('tools/list'));
    expect((l.body as any).result.tools.map((t: any) => t.name)).toEqual(['echo']);
    expect((l.body as any).result).toMatchObject({ ttlMs: 300_000, cacheScope: 'private' });
    expect((l.body as any).result.tools[0].outputSchema).toMatchObject({ type: 'object', required: ['text'] });
    const d = await post(s, modern('server/discover'), headers('server/discover'));
    expect((d.body as any).result).toMatchObject({
      supportedVersions: [MODERN, '2025-11-25', '2025-06-18', '2025-03-26'],
      _meta: { 'dev.carecircle/tools': ['echo'] },
    });
    const none = await post(
      server({ tools: [{ ...echo, scope: 'echo:use' }, secret], holdsScope: () => false }),
      modern('server/discover'),
      headers('server/discover'),
    );
    expect((none.body as any).result.capabilities).toEqual({});
  });

  it('checks run in the revision order: header/body version, version, envelope, routing headers', async () => {
    const cases: [unknown, Record<string, string>, number, number][] = [
      [modern('tools/list'), { ...headers('tools/list'), 'mcp-protocol-version': '2025-06-18' }, 400, MODERN_RPC.HEADER_MISMATCH],
      [
        { ...modern('tools/list'), params: { _meta: { ...meta, 'io.modelcontextprotocol/protocolVersion': '2030-01-01' } } },
        { 'mcp-protocol-version': '2030-01-01', 'mcp-method': 'tools/list' },
        400,
        MODERN_RPC.UNSUPPORTED_PROTOCOL_VERSION,
      ],
      [{ ...modern('tools/list'), params: { _meta: { 'io.modelcontextprotocol/protocolVersion': MODERN } } }, headers('tools/list'), 400, -32602],
      [modern('tools/list'), { 'mcp-method': 'tools/list' }, 400, MODERN_RPC.HEADER_MISMATCH],
      [modern('tools/list'), { 'mcp-protocol-version': MODERN }, 400, MODERN_RPC.HEADER_MISMATCH],
      [modern('tools/call', { name: 'echo', arguments: { text: 'x' } }), headers('tools/call', 'secret'), 400, MODERN_RPC.HEADER_MISMATCH],
      [modern('ping'), headers('ping'), 404, -32601],
      [{ jsonrpc: '2.0', id: 1, method: 'tools/list' }, headers('tools/list'), 400, -32602],
    ];
    for (const [body, h, status, code] of cases) {
      const r = await post(server(), body, h);
      expect([r.status, (r.body as any).error.code], JSON.stringify(h)).toEqual([status, code]);
    }
  });

  it('2025-era tools/list adds outputSchema from 2025-06-18 on and leaves 2025-03-26 as it was', async () => {
    const old = await post(server(), { jsonrpc: '2.0', id: 1, method: 'tools/list' });
    expect((old.body as any).result.tools[0].outputSchema).toBeUndefined();
    expect((old.body as any).result.resultType).toBeUndefined();
    const neu = await post(server(), { jsonrpc: '2.0', id: 1, method: 'tools/list' }, { 'mcp-protocol-version': '2025-11-25' });
    expect((neu.body as any).result.tools[0].outputSchema).toBeDefined();
  });

  it('Mcp-Name accepts the =?base64?…?= form and refuses a broken one', () => {
    expect(decodeHeaderValue('echo')).toBe('echo');
    expect(decodeHeaderValue(`=?base64?${Buffer.from('Hello, 世界').toString('base64')}?=`)).toBe('Hello, 世界');
    expect(decodeHeaderValue('=?base64?***?=')).toBeUndefined();
  });
});
