// The MCP server core: method dispatch, tool registry, version negotiation and the HTTP mapping
// of JSON-RPC (single, batch, notifications). Every error becomes a response here and only here.
import { z } from 'zod';
import type { HttpReplyEnvelope } from '../bus/envelopes.js';
import { isTransient, RETRY_AFTER_SEC } from '../bus/failures.js';
import { RPC } from './codes.js';
import { describeIssues, isNotification, rpcRequest, salvageId, type RpcId, type RpcRequest, type RpcResponse } from './envelope.js';
import { invalidRequest, RpcError, ToolError, ToolFailure } from './errors.js';

export const DEFAULT_PROTOCOL_VERSION = '2025-03-26';
export const SUPPORTED_PROTOCOL_VERSIONS = ['2025-03-26', '2025-06-18'] as const;
const STRUCTURED_FROM = '2025-06-18';

export interface ToolAnnotations {
  title?: string;
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint?: boolean;
}

export interface CallContext {
  requestId: string;
  clientIp: string;
  protocolVersion: string;
  /** Whatever the surface verified about the caller (absent on public endpoints). */
  caller?: unknown;
}

export interface ToolResult {
  /** The machine-readable result: sent as JSON text, and as `structuredContent` when negotiated. */
  structured: Record<string, unknown>;
  /** A readable summary, sent as the first text block when present. */
  summary?: string;
}

/** What a tool is, as clients and discovery documents see it: declared once by its slice. */
export interface ToolDeclaration {
  name: string;
  title: string;
  description: string;
  annotations: ToolAnnotations;
}

export interface ToolDefinition<S extends z.ZodType = z.ZodType> extends ToolDeclaration {
  input: S;
  handler: (args: z.output<S>, ctx: CallContext) => Promise<ToolResult>;
}

/** Helps TypeScript infer a tool's argument type from its schema. */
export const defineTool = <S extends z.ZodType>(tool: ToolDefinition<S>): ToolDefinition => tool as unknown as ToolDefinition;

/** A declared tool with its arguments and handler; infers the argument type from the schema. */
export const implementTool = <S extends z.ZodType>(declaration: ToolDeclaration, impl: { input: S; handler: ToolDefinition<S>['handler'] }): ToolDefinition =>
  ({ ...declaration, ...impl }) as unknown as ToolDefinition;

export interface McpServerOptions {
  name: string;
  title: string;
  version: string;
  instructions?: string;
  tools: ToolDefinition[];
  /** Status for a POST holding only notifications: SPEC says 204 for the directory, MCP says 202. */
  notificationStatus: 202 | 204;
  /** How invalid tool arguments are answered: a -32602 error, or a result with `isError: true`. */
  invalidArguments: 'error' | 'result';
  /** Called with errors that are not the caller's fault, for logging. */
  onInternalError?: (err: unknown, ctx: CallContext) => void;
}

export interface HttpCall {
  method: string;
  headers: Record<string, string>;
  body?: unknown;
}

export type PublicTool = { name: string; title: string; description: string; inputSchema: Record<string, unknown>; annotations: ToolAnnotations };

/** JSON Schema of a tool's arguments, generated once from zod. */
export function toInputSchema(schema: z.ZodType): Record<string, unknown> {
  const json = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  delete json.$schema;
  return json;
}

/** Built once: a schema constructed per call would be compiled again by zod on every request. */
const toolCallParams = z.object({ name: z.string().min(1), arguments: z.record(z.string(), z.unknown()).optional() });

export class McpServer {
  private readonly tools = new Map<string, ToolDefinition>();
  readonly publicTools: readonly PublicTool[];

  constructor(readonly options: McpServerOptions) {
    for (const tool of options.tools) this.tools.set(tool.name, tool);
    // Generated once: tools/list and the descriptors are served from this cache.
    this.publicTools = options.tools.map((t) => ({
      name: t.name,
      title: t.title,
      description: t.description,
      inputSchema: toInputSchema(t.input),
      annotations: { title: t.title, ...t.annotations },
    }));
  }

  /** Answer one HTTP POST carrying JSON-RPC (a single message or a batch). */
  async handlePost(call: HttpCall, ctx: Omit<CallContext, 'protocolVersion'>): Promise<HttpReplyEnvelope> {
    const headerVersion = call.headers['mcp-protocol-version'];
    if (headerVersion !== undefined && !(SUPPORTED_PROTOCOL_VERSIONS as readonly string[]).includes(headerVersion)) {
      return this.errorReply(
        Array.isArray(call.body) ? null : salvageId(call.body),
        new RpcError(RPC.INVALID_REQUEST, `Unsupported MCP-Protocol-Version "${headerVersion}"`, {
          hint: `Supported versions: ${SUPPORTED_PROTOCOL_VERSIONS.join(', ')}. Omit the header to use ${DEFAULT_PROTOCOL_VERSION}.`,
        }, 400),
      );
    }
    const full: CallContext = { ...ctx, protocolVersion: headerVersion ?? DEFAULT_PROTOCOL_VERSION };
    const body = call.body;

    if (Array.isArray(body)) {
      if (body.length === 0) return this.errorReply(null, invalidRequest('an empty batch'));
      if (full.protocolVersion >= STRUCTURED_FROM)
        return this.errorReply(null, invalidRequest(`batches are not part of MCP ${full.protocolVersion}; send one message per POST`));
      const replies = (await Promise.all(body.map((m) => this.handleMessage(m, full, true)))).filter((r): r is RpcResponse => r !== null);
      return replies.length ? { status: 200, headers: {}, body: replies } : { status: this.options.notificationStatus, headers: {} };
    }

    const parsed = rpcRequest.safeParse(body);
    if (!parsed.success) return this.errorReply(salvageId(body), invalidRequest(describeIssues(parsed.error)));
    const reply = await this.handleMessage(parsed.data, full, false);
    if (reply === null) return { status: this.options.notificationStatus, headers: {} };
    // A lone message that found a dependency down is a 503 with Retry-After, like every surface's.
    if ('error' in reply && reply.error.code === RPC.UNAVAILABLE) return { status: 503, headers: { 'retry-after': String(RETRY_AFTER_SEC) }, body: reply };
    return { status: 200, headers: {}, body: reply };
  }

  /** One message, validated; null when it is a notification. */
  private async handleMessage(raw: unknown, ctx: CallContext, inBatch: boolean): Promise<RpcResponse | null> {
    const parsed = rpcRequest.safeParse(raw);
    if (!parsed.success) return failure(salvageId(raw), invalidRequest(describeIssues(parsed.error)));
    const msg = parsed.data;
    const notification = isNotification(msg);
    try {
      if (inBatch && msg.method === 'initialize') throw invalidRequest('initialize cannot be part of a batch', 200);
      const result = await this.dispatch(msg, ctx);
      return notification ? null : { jsonrpc: '2.0', id: msg.id ?? null, result };
    } catch (err) {
      if (notification) return null;
      return failure(msg.id ?? null, this.toRpcError(err, ctx));
    }
  }

  private async dispatch(msg: RpcRequest, ctx: CallContext): Promise<Record<string, unknown>> {
    switch (msg.method) {
      case 'initialize':
        return this.initialize(msg.params);
      case 'ping':
        return {};
      case 'tools/list':
        return { tools: this.publicTools };
      case 'tools/call':
        return this.callTool(msg.params, ctx);
      default:
        if (msg.method.startsWith('notifications/')) return {};
        throw new RpcError(RPC.METHOD_NOT_FOUND, `Method not found: ${msg.method}`, {
          hint: 'Supported methods: initialize, ping, tools/list, tools/call, notifications/initialized.',
        });
    }
  }

  private initialize(params: Record<string, unknown> | undefined): Record<string, unknown> {
    const asked = typeof params?.protocolVersion === 'string' ? params.protocolVersion : undefined;
    const protocolVersion = asked && (SUPPORTED_PROTOCOL_VERSIONS as readonly string[]).includes(asked) ? asked : DEFAULT_PROTOCOL_VERSION;
    return {
      protocolVersion,
      capabilities: { tools: { listChanged: false } },
      serverInfo: { name: this.options.name, title: this.options.title, version: this.options.version },
      ...(this.options.instructions ? { instructions: this.options.instructions } : {}),
    };
  }

  private async callTool(params: Record<string, unknown> | undefined, ctx: CallContext): Promise<Record<string, unknown>> {
    const call = toolCallParams.safeParse(params ?? {});
    if (!call.success) throw new RpcError(RPC.INVALID_PARAMS, `Invalid params: ${describeIssues(call.error)}`, { hint: 'tools/call takes {"name": string, "arguments": object}.' });
    const tool = this.tools.get(call.data.name);
    if (!tool)
      throw new RpcError(RPC.METHOD_NOT_FOUND, `Unknown tool: ${call.data.name}`, {
        hint: `Available tools: ${[...this.tools.keys()].join(', ')}. Call tools/list for their arguments.`,
      });
    const args = tool.input.safeParse(call.data.arguments ?? {});
    if (!args.success) {
      const message = `Invalid arguments for ${tool.name}: ${describeIssues(args.error)}`;
      if (this.options.invalidArguments === 'result') return { content: [{ type: 'text', text: message }], isError: true };
      throw new RpcError(RPC.INVALID_PARAMS, message, { hint: 'See the tool\'s inputSchema in tools/list.' });
    }
    try {
      const result = await tool.handler(args.data, ctx);
      const content = [
        ...(result.summary ? [{ type: 'text', text: result.summary }] : []),
        { type: 'text', text: JSON.stringify(result.structured) },
      ];
      return ctx.protocolVersion >= STRUCTURED_FROM ? { content, structuredContent: result.structured } : { content };
    } catch (err) {
      if (err instanceof ToolError) return { content: [{ type: 'text', text: err.message }], isError: true };
      if (err instanceof RpcError) throw err;
      if (err instanceof ToolFailure) throw new RpcError(RPC.TOOL_FAILED, `Tool ${tool.name} failed: ${err.message}`);
      if (isTransient(err)) throw unavailable();
      this.options.onInternalError?.(err, ctx);
      throw new RpcError(RPC.TOOL_FAILED, `Tool ${tool.name} failed: internal error`, { hint: `Try again; quote request id ${ctx.requestId} if it persists.` });
    }
  }

  private toRpcError(err: unknown, ctx: CallContext): RpcError {
    if (err instanceof RpcError) return err;
    if (isTransient(err)) return unavailable();
    this.options.onInternalError?.(err, ctx);
    return new RpcError(RPC.INTERNAL_ERROR, 'Internal error', { hint: `Quote request id ${ctx.requestId} if it persists.` });
  }

  private errorReply(id: RpcId, err: RpcError): HttpReplyEnvelope {
    return { status: err.httpStatus, headers: {}, body: failure(id, err) };
  }
}

/** A dependency (database, bus) is down for now: the caller retries after the delay. */
const unavailable = () =>
  new RpcError(RPC.UNAVAILABLE, 'Service temporarily unavailable', { hint: 'A service it depends on is unavailable; retry after the Retry-After delay.', retryAfterSec: RETRY_AFTER_SEC }, 503);

export function failure(id: RpcId, err: RpcError): RpcResponse {
  return { jsonrpc: '2.0', id, error: { code: err.code, message: err.message, ...(err.data ? { data: err.data } : {}) } };
}

/** A whole-response JSON-RPC error (for gateways: parse errors, limits, unavailability). */
export function rpcErrorBody(err: RpcError, id: RpcId = null): RpcResponse {
  return failure(id, err);
}
