import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { HandlerFailure } from '../bus/errors.js';
import { encodingOf } from '../bus/replies.js';
import { RPC } from './codes.js';
import { ToolError, ToolFailure } from './errors.js';
import { defineTool, McpServer, type McpServerOptions } from './mcp.js';

const echo = defineTool({
  name: 'echo',
  title: 'Echo',
  description: 'Returns its text.',
  input: z.object({ text: z.string().min(1), times: z.number().int().min(1).max(3).default(1) }).strict(),
  annotations: { readOnlyHint: true },
  output: z.object({ text: z.string() }),
  handler: async ({ text, times }) => ({ structured: { text: text.repeat(times) } }),
});
const broken = defineTool({
  name: 'broken',
  title: 'Broken',
  description: 'Always fails.',
  input: z.object({ kind: z.enum(['internal', 'failure', 'tool']) }).strict(),
  annotations: {},
  output: z.object({}),
  handler: async ({ kind }) => {
    if (kind === 'tool') throw new ToolError('that channel does not exist');
    if (kind === 'failure') throw new ToolFailure('upstream data file is unreadable');
    throw new Error('secret connection string mongodb://user:pw@host');
  },
});

function server(over: Partial<McpServerOptions> = {}) {
  return new McpServer({
    name: 't',
    title: 'T',
    version: '1',
    tools: [echo, broken],
    notificationStatus: 204,
    invalidArguments: 'error',
    maxReplyBytes: 1_048_576,
    ...over,
  });
}
const ctx = { requestId: 'r1', clientIp: '127.0.0.1' };
const post = (s: McpServer, body: unknown, headers: Record<string, string> = {}) => s.handlePost({ method: 'POST', headers, body }, ctx);
const call = (name: string, args: unknown, id: unknown = 1) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } });

describe('mcp core - methods', () => {
  it('initialize answers 2025-03-26 by default, echoes 2025-06-18, never errors on an unknown version', async () => {
    for (const [asked, answered] of [
      [undefined, '2025-03-26'],
      ['2025-06-18', '2025-06-18'],
      ['2099-01-01', '2025-11-25'],
    ]) {
      const r = await post(server(), { jsonrpc: '2.0', id: 1, method: 'initialize', params: asked ? { protocolVersion: asked } : {} });
      expect(r.status).toBe(200);
      expect((r.body as any).result.protocolVersion).toBe(answered);
      expect((r.body as any).result.capabilities.tools).toBeDefined();
    }
  });

  it('tools/list serves generated schemas with additionalProperties false and annotations', async () => {
    const r = await post(server(), { jsonrpc: '2.0', id: 'a', method: 'tools/list' });
    const tool = (r.body as any).result.tools.find((t: any) => t.name === 'echo');
    expect(tool.inputSchema).toMatchObject({ type: 'object', additionalProperties: false, required: ['text'] });
    expect(tool.inputSchema.$schema).toBeUndefined();
    expect(tool.annotations).toMatchObject({ readOnlyHint: true, title: 'Echo' });
  });

  it('unknown method and unknown tool are -32601', async () => {
    const m = await post(server(), { jsonrpc: '2.0', id: 1, method: 'resources/list' });
    expect((m.body as any).error.code).toBe(RPC.METHOD_NOT_FOUND);
    const t = await post(server(), call('nope', {}));
    expect((t.body as any).error).toMatchObject({ code: RPC.METHOD_NOT_FOUND, message: 'Unknown tool: nope' });
  });

  it('invalid arguments name the field: -32602, or an isError result when configured', async () => {
    const e = await post(server(), call('echo', { text: '', extra: 1 }));
    expect((e.body as any).error.code).toBe(RPC.INVALID_PARAMS);
    expect((e.body as any).error.message).toMatch(/text:/);
    const r = await post(server({ invalidArguments: 'result' }), call('echo', { times: 9, text: 'x' }));
    expect((r.body as any).result.isError).toBe(true);
    expect((r.body as any).result.content[0].text).toMatch(/times:/);
  });

  it('a throwing handler is -32002 with the cause, and nothing internal leaks', async () => {
    const f = await post(server(), call('broken', { kind: 'failure' }));
    expect((f.body as any).error).toMatchObject({ code: RPC.TOOL_FAILED, message: 'Tool broken failed: upstream data file is unreadable' });
    const seen: unknown[] = [];
    const i = await post(server({ onInternalError: (err) => seen.push(err) }), call('broken', { kind: 'internal' }));
    expect((i.body as any).error.code).toBe(RPC.TOOL_FAILED);
    expect(JSON.stringify(i.body)).not.toMatch(/mongodb|secret|stack/);
    expect(seen).toHaveLength(1);
    const t = await post(server(), call('broken', { kind: 'tool' }));
    expect((t.body as any).result).toEqual({ content: [{ type: 'text', text: 'that channel does not exist' }], isError: true });
  });

  it('structuredContent only when the negotiated version has it', async () => {
    const old = await post(server(), call('echo', { text: 'hi', times: 2 }));
    expect((old.body as any).result).toEqual({ content: [{ type: 'text', text: '{"text":"hihi"}' }] });
    const neu = await post(server(), call('echo', { text: 'hi' }), { 'mcp-protocol-version': '2025-06-18' });
    expect((neu.body as any).result.structuredContent).toEqual({ text: 'hi' });
  });
});

describe('mcp core - declared scopes', () => {
  const runs: string[] = [];
  const guarded = defineTool({
    ...echo,
    name: 'guarded',
    title: 'Guarded',
    scope: 'notes:read',
    handler: async ({ text }: { text: string }) => (runs.push(text), { structured: { text } }),
  } as never);
  const prompt = { name: 'recap', title: 'Recap', description: 'A recap.', arguments: [], scope: 'notes:read', get: async () => ({ messages: [] }) };
  const resources = {
    templates: [],
    scope: 'notes:read',
    list: async () => [{ uri: 'x://1', name: 'one', title: 'One', mimeType: 'text/plain' }],
    read: async (uri: string) => [{ uri, mimeType: 'text/plain', text: 'one' }],
  };
  // The caller is whatever the surface verified: here the list of scopes it holds.
  const scoped = () => server({ tools: [echo, guarded], prompts: [prompt], resources, holdsScope: (caller, scope) => (caller as string[]).includes(scope) });
  const as = (s: McpServer, caller: string[], body: unknown) => s.handlePost({ method: 'POST', headers: {}, body }, { ...ctx, caller });
  const names = (r: { body?: unknown }, key: string) => ((r.body as any).result[key] as { name: string }[]).map((t) => t.name);

  it('when a tool declares a scope, then a caller without it is not shown it and is refused before the handler runs', async () => {
    const s = scoped();
    expect(names(await as(s, [], { jsonrpc: '2.0', id: 1, method: 'tools/list' }), 'tools')).toEqual(['echo']);
    const refused = await as(s, [], call('guarded', { text: 'hi' }));
    expect((refused.body as any).error).toEqual({
      code: RPC.UNAUTHORIZED,
      message: 'This tool needs the notes:read scope',
      data: { hint: 'Reconnect and approve notes:read.', scope: 'notes:read' },
    });
    expect(runs).toEqual([]);
    expect(names(await as(s, ['notes:read'], { jsonrpc: '2.0', id: 1, method: 'tools/list' }), 'tools')).toEqual(['echo', 'guarded']);
    expect((await as(s, ['notes:read'], call('guarded', { text: 'hi' }))).body).toMatchObject({
      result: { content: [{ type: 'text', text: '{"text":"hi"}' }] },
    });
    expect(runs).toEqual(['hi']);
  });

  it('when a prompt or resources declare a scope, then a caller without it sees none and is refused getting or reading one', async () => {
    const s = scoped();
    const rpc = (method: string, params: Record<string, unknown> = {}) => ({ jsonrpc: '2.0', id: 1, method, params });
    expect(names(await as(s, [], rpc('prompts/list')), 'prompts')).toEqual([]);
    expect((await as(s, [], rpc('resources/list'))).body).toMatchObject({ result: { resources: [] } });
    for (const body of [rpc('prompts/get', { name: 'recap' }), rpc('resources/read', { uri: 'x://1' })])
      expect((await as(s, [], body)).body, body.method).toMatchObject({ error: { code: RPC.UNAUTHORIZED, data: { scope: 'notes:read' } } });
    expect(names(await as(s, ['notes:read'], rpc('prompts/list')), 'prompts')).toEqual(['recap']);
    expect((await as(s, ['notes:read'], rpc('resources/read', { uri: 'x://1' }))).body).toMatchObject({ result: { contents: [{ text: 'one' }] } });
  });

  it('when a feature declares a scope and the server has no way to check it, then the server refuses to start', () => {
    expect(() => server({ tools: [echo, guarded] })).toThrow(/guarded|notes:read/);
  });
});

describe('mcp core - envelopes', () => {
  it('invalid envelope is 400 -32600 with the id echoed', async () => {
    const r = await post(server(), { jsonrpc: '1.0', id: 7, method: 'ping' });
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ jsonrpc: '2.0', id: 7, error: { code: RPC.INVALID_REQUEST } });
  });

  it('notifications get the configured empty status', async () => {
    expect(await post(server(), { jsonrpc: '2.0', method: 'notifications/initialized' })).toEqual({ status: 204, headers: {} });
    expect((await post(server({ notificationStatus: 202 }), { jsonrpc: '2.0', method: 'notifications/initialized' })).status).toBe(202);
  });

  it('a batch is answered as a batch, without notifications, refusing initialize inside it', async () => {
    const r = await post(server(), [
      { jsonrpc: '2.0', id: 1, method: 'ping' },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { jsonrpc: '2.0', id: 2, method: 'initialize', params: {} },
      { bad: true },
      call('echo', { text: 'b' }, 3),
    ]);
    expect(r.status).toBe(200);
    const body = r.body as any[];
    expect(body).toHaveLength(4);
    expect(body[0]).toEqual({ jsonrpc: '2.0', id: 1, result: {} });
    expect(body[1].error.code).toBe(RPC.INVALID_REQUEST);
    expect(body[1].id).toBe(2);
    expect(body[2]).toMatchObject({ id: null, error: { code: RPC.INVALID_REQUEST } });
    expect(body[3].id).toBe(3);
  });

  it("when a batch's replies pass maxReplyBytes, then it stops there, refused as too_large, and the rest never runs", async () => {
    let ran = 0;
    const bulky = defineTool({
      name: 'bulky',
      title: 'Bulky',
      description: 'Returns 3000 characters.',
      input: z.object({}).strict(),
      annotations: { readOnlyHint: true },
      output: z.object({ text: z.string() }),
      handler: async () => {
        ran++;
        return { structured: { text: 'x'.repeat(3000) } };
      },
    });
    const s = server({ tools: [bulky], maxReplyBytes: 10_000 });
    const batch = Array.from({ length: 50 }, (_, i) => call('bulky', {}, i));
    const refused = await post(s, batch).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(refused).toBeInstanceOf(HandlerFailure);
    expect(refused).toMatchObject({ kind: 'too_large' });
    expect((refused as Error).message).toMatch(/^reply too large: \d+ bytes after \d+ of the batch's 50 messages, the limit is 10000$/);
    // Four replies of about 3 KB pass 10 000 bytes; one more may have been under way beside them.
    expect(ran).toBeGreaterThanOrEqual(4);
    expect(ran).toBeLessThanOrEqual(5);

    // Under the limit the batch is answered whole, in order, its JSON written once from the counted texts.
    ran = 0;
    const whole = await post(s, batch.slice(0, 3));
    expect(ran).toBe(3);
    expect((whole.body as any[]).map((r) => r.id)).toEqual([0, 1, 2]);
    expect(encodingOf(whole.body)).toBe(JSON.stringify(whole.body));
  });

  it('an empty batch, and a batch under 2025-06-18, are 400', async () => {
    expect((await post(server(), [])).status).toBe(400);
    const r = await post(server(), [{ jsonrpc: '2.0', id: 1, method: 'ping' }], { 'mcp-protocol-version': '2025-06-18' });
    expect(r.status).toBe(400);
  });

  it('an unsupported MCP-Protocol-Version header is 400 and names the supported ones', async () => {
    const r = await post(server(), { jsonrpc: '2.0', id: 1, method: 'ping' }, { 'mcp-protocol-version': '1999-01-01' });
    expect(r.status).toBe(400);
    expect((r.body as any).error.data.hint).toMatch(/2025-03-26/);
  });
});
