// The MCP server core: method dispatch, tool registry, version negotiation and the HTTP mapping
// of JSON-RPC (single, batch, notifications). Every error becomes a response here and only here,
// except a batch whose reply passes MAX_REPLY_BYTES: that is the bus's `too_large`, as it would be.
import { z } from 'zod';
import type { HttpReplyEnvelope } from '../bus/envelopes.js';
import { HandlerFailure } from '../bus/errors.js';
import { isTransient, RETRY_AFTER_SEC } from '../bus/failures.js';
import { encodedAs, encodeJson, encodingOf } from '../bus/replies.js';
import { metrics } from '../metrics/index.js';
import { RPC } from './codes.js';
import { describeIssues, isNotification, isPlainObject, parseRpcRequest, salvageId, type RpcId, type RpcRequest, type RpcResponse } from './envelope.js';
import { InsufficientScope, invalidRequest, RpcError, ToolError, ToolFailure } from './errors.js';
import {
  DEFAULT_PROTOCOL_VERSION,
  envelopeVersion,
  isModernVersion,
  isSupportedVersion,
  META,
  MODERN_PROTOCOL_VERSIONS,
  modernRequestError,
  NEWEST_LEGACY_VERSION,
  STRUCTURED_FROM,
  SUPPORTED_PROTOCOL_VERSIONS,
  unsupportedVersion,
} from './versions.js';

import { FEATURE_METHODS, FeatureSet, type Features } from './features.js';
import {
  toInputSchema,
  toOutputSchema,
  type CallContext,
  type ScopeCheck,
  type ToolAnnotations,
  type ToolDefinition,
  type ToolResult,
  type WriteReport,
} from './tool.js';
import {
  argumentDigest,
  pendingIdOf,
  CONFIRM_INPUT,
  IDEMPOTENCY_KEY_META,
  idempotencyKeyReused,
  RequestStateError,
  writeInProgress,
  type ConfirmationOutcome,
  type ElicitAnswer,
  type ElicitQuestion,
  type WriteMachinery,
} from './writes.js';

export {
  defineTool,
  implementTool,
  toInputSchema,
  toOutputSchema,
  type CallContext,
  type ScopeCheck,
  type ToolAnnotations,
  type ToolDeclaration,
  type ToolDefinition,
  type ToolResult,
  type WriteReport,
} from './tool.js';
export type {
  Features,
  PromptDeclaration,
  PromptDefinition,
  PromptMessage,
  ResourceContents,
  ResourceEntry,
  ResourceProvider,
  ResourceTemplateDeclaration,
} from './features.js';
export {
  CURRENT_PROTOCOL_VERSION,
  DEFAULT_PROTOCOL_VERSION,
  LEGACY_PROTOCOL_VERSIONS,
  MODERN_PROTOCOL_VERSIONS,
  SUPPORTED_PROTOCOL_VERSIONS,
} from './versions.js';

/** Prompts and resources (rpc/features.ts) are optional; tools are always there. */
export interface McpServerOptions extends Features {
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
  /**
   * Whether a caller holds a scope. Every tool, prompt and resource that declares a `scope` is
   * shown (tools/list, server/discover, the feature lists) and run only when this says so; it is
   * required as soon as one of them declares a scope.
   */
  holdsScope?: ScopeCheck;
  /** Caching hints on 2026-07-28 lists: `private` when what a caller sees depends on who it is. */
  cacheScope?: 'public' | 'private';
  /**
   * Largest reply a batch may make, in bytes of JSON (MAX_REPLY_BYTES): a batch stops at the first
   * reply that takes it past this and is refused as too large, without answering the rest.
   */
  maxReplyBytes: number;
  /**
   * Idempotency and confirmation for the tools that are not read-only (rpc/writes.ts). Without it
   * every tool runs as called (the sandbox's, whose writes are a throwaway demo's own).
   */
  writes?: WriteMachinery;
}

export interface HttpCall {
  method: string;
  headers: Record<string, string>;
  body?: unknown;
}

export type PublicTool = {
  name: string;
  title: string;
  description: string;
  inputSchema: Record<string, unknown>;
  outputSchema?: Record<string, unknown>;
  annotations: ToolAnnotations;
};

/** How long a 2026-07-28 client may reuse tools/list and server/discover (the descriptor's max-age). */
const LIST_TTL_MS = 300_000;

/**
 * Messages of a batch answered at once: two overlap one's database reads with the other's work,
 * and a batch stopped at the reply limit has computed at most one reply past the one that passed it.
 */
const BATCH_LANES = 2;

/** Built once: a schema constructed per call would be compiled again by zod on every request. */
const toolCallParams = z.object({ name: z.string().min(1), arguments: z.record(z.string(), z.unknown()).optional() });

export class McpServer {
  private readonly tools = new Map<string, ToolDefinition>();
  readonly publicTools: readonly PublicTool[];
  /** The same tools with their `outputSchema`, for versions that have structured content. */
  readonly typedTools: readonly PublicTool[];
  private readonly features: FeatureSet;

  private readonly holdsScope: ScopeCheck;

  constructor(readonly options: McpServerOptions) {
    const scoped = [...options.tools, ...(options.prompts ?? []), ...(options.resources ? [options.resources] : [])].find((f) => f.scope !== undefined);
    if (scoped && !options.holdsScope)
      throw new Error(`${options.name}: a feature declares the ${scoped.scope} scope but the server has no holdsScope to check it`);
    this.holdsScope = options.holdsScope ?? (() => false);
    this.features = new FeatureSet(options, this.holdsScope);
    for (const tool of options.tools) this.tools.set(tool.name, tool);
    // Generated once: tools/list and the descriptors are served from this cache.
    this.publicTools = options.tools.map((t) => ({
      name: t.name,
      title: t.title,
      description: t.description,
      inputSchema: toInputSchema(t.input),
      annotations: { title: t.title, ...t.annotations },
    }));
    this.typedTools = this.publicTools.map((t, i) => ({ ...t, outputSchema: toOutputSchema(options.tools[i]!.output) }));
  }

  /** Answer one HTTP POST carrying JSON-RPC (a single message or a batch). */
  async handlePost(call: HttpCall, ctx: Omit<CallContext, 'protocolVersion'>): Promise<HttpReplyEnvelope> {
    const headerVersion = call.headers['mcp-protocol-version'];
    const body = call.body;
    if (isRpcResponse(body)) return this.takeAnswer(body, ctx);
    const single = Array.isArray(body) ? undefined : parseRpcRequest(body);
    // The era is the body's: a request carrying the per-request envelope is 2026-07-28 traffic.
    if (single?.success) {
      const claimed = envelopeVersion(single.data);
      if (claimed !== undefined) return this.handleModern(single.data, claimed, call.headers, ctx);
      if (headerVersion !== undefined && isModernVersion(headerVersion))
        return this.errorReply(
          salvageId(body),
          new RpcError(
            RPC.INVALID_PARAMS,
            `Invalid params: MCP ${headerVersion} requests carry _meta.${META.protocolVersion} and _meta.${META.clientCapabilities}`,
            undefined,
            400,
          ),
        );
    }
    if (headerVersion !== undefined && !isSupportedVersion(headerVersion))
      return this.errorReply(Array.isArray(body) ? null : salvageId(body), unsupportedVersion(headerVersion, false));
    const full: CallContext = { ...ctx, protocolVersion: headerVersion ?? DEFAULT_PROTOCOL_VERSION };

    if (Array.isArray(body)) {
      if (body.length === 0) return this.errorReply(null, invalidRequest('an empty batch'));
      const modernMember = body.some(carriesEnvelope);
      if (full.protocolVersion >= STRUCTURED_FROM || modernMember)
        return this.errorReply(
          null,
          invalidRequest(`batches are not part of MCP ${modernMember ? MODERN_PROTOCOL_VERSIONS[0] : full.protocolVersion}; send one message per POST`),
        );
      const replies = await this.answerBatch(body, full);
      return replies.length ? { status: 200, headers: {}, body: replies } : { status: this.options.notificationStatus, headers: {} };
    }

    if (!single?.success) return this.errorReply(salvageId(body), invalidRequest(describeIssues(single!.error!)));
    // A single message may be answered on an event stream, with a question for the person first.
    let question: ElicitQuestion | undefined;
    const sessionId = call.headers['mcp-session-id'];
    const reply = await this.answerMessage(single.data, { ...full, ...(sessionId ? { sessionId } : {}), streamQuestion: (q) => void (question = q) }, false);
    if (reply === null) return { status: this.options.notificationStatus, headers: {} };
    if (question && 'result' in reply) return { status: 200, headers: {}, elicit: question };
    const answered = singleReply(reply);
    if (single.data.method === 'initialize' && 'result' in reply) {
      const session = await this.sessionFor(single.data.params, full);
      if (session) answered.headers = { ...answered.headers, 'mcp-session-id': session };
    }
    return answered;
  }

  /**
   * What a 2025-era client declared at initialize, kept where it carries it: a signed Mcp-Session-Id,
   * issued only to a client that can be asked (elicitation) by a server with write tools.
   */
  private async sessionFor(params: Record<string, unknown> | undefined, ctx: CallContext): Promise<string | undefined> {
    const w = this.options.writes;
    const caps = params?.capabilities;
    if (!w?.elicitation || ctx.caller === undefined || !isPlainObject(caps) || !isPlainObject(caps.elicitation)) return undefined;
    return w.states.sealSession(w.callerKey(ctx.caller), { elicitation: true }, (w.clock ?? Date.now)());
  }

  /**
   * A client's JSON-RPC response: its answer to a question this server put on a tools/call's stream.
   * The question's id is sealed and bound to the caller, so only the caller who was asked can answer;
   * the answer then goes to the stream waiting for it, wherever that is (202), or finds none (404).
   */
  private async takeAnswer(body: Record<string, unknown>, ctx: Omit<CallContext, 'protocolVersion'>): Promise<HttpReplyEnvelope> {
    const w = this.options.writes;
    const notAsked = (why: string) =>
      this.errorReply(null, new RpcError(RPC.INVALID_REQUEST, `No question is waiting for this answer: ${why}`, { hint: ANSWER_HINT }, 404));
    if (!w?.elicitation || ctx.caller === undefined) return notAsked('this endpoint asks no questions of this caller');
    if (typeof body.id !== 'string') return notAsked("the id is not one of this server's questions");
    const claims = await w.states.openQuestion(body.id, w.callerKey(ctx.caller), (w.clock ?? Date.now)());
    if (!claims) return notAsked("the id is not one of this server's questions for this caller, or it has expired");
    const result = body.result;
    const action =
      isPlainObject(result) && ['accept', 'decline', 'cancel'].includes(result.action as string)
        ? (result.action as 'accept' | 'decline' | 'cancel')
        : undefined;
    if ('result' in body && !action)
      return this.errorReply(
        null,
        new RpcError(RPC.INVALID_PARAMS, 'Invalid params: result.action must be "accept", "decline" or "cancel"', { hint: ANSWER_HINT }, 400),
      );
    // An error in place of a result (the client could not show it) counts as the person dismissing it.
    const content = isPlainObject(result) && isPlainObject(result.content) ? result.content : undefined;
    // One answer per question: a second is refused here, without waiting to learn nobody takes it.
    if (await w.idempotency.claim(`answer:${claims.jti}`, claims.digest, (w.clock ?? Date.now)())) return notAsked('it was answered already');
    const delivered = await w.elicitation.answers.deliver(claims.jti, { action: action ?? 'cancel', ...(content ? { content } : {}) });
    if (!delivered) return notAsked('it was answered already, or the call stopped waiting');
    return { status: 202, headers: {} };
  }

  /** A 2026-07-28 request: checked against its headers, answered statelessly. */
  private async handleModern(
    msg: RpcRequest,
    claimed: unknown,
    headers: Record<string, string>,
    ctx: Omit<CallContext, 'protocolVersion'>,
  ): Promise<HttpReplyEnvelope> {
    const notification = isNotification(msg);
    const refused = modernRequestError(msg, claimed, headers, notification);
    if (refused) return this.errorReply(notification ? null : (msg.id ?? null), refused);
    if (notification) return { status: 202, headers: {} };
    const full: CallContext = { ...ctx, protocolVersion: claimed as string, modern: true };
    if (!MODERN_METHODS.has(msg.method) && !this.features.handles(msg.method))
      return this.errorReply(
        msg.id ?? null,
        new RpcError(
          RPC.METHOD_NOT_FOUND,
          `Method not found: ${msg.method}`,
          { hint: `Supported methods in ${full.protocolVersion}: ${[...MODERN_METHODS].join(', ')}.` },
          404,
        ),
      );
    try {
      const result = await this.dispatch(msg, full);
      return singleReply({
        jsonrpc: '2.0',
        id: msg.id ?? null,
        result: { resultType: 'complete', ...result, _meta: { ...(result._meta as object | undefined), [META.serverInfo]: this.serverInfo() } },
      });
    } catch (err) {
      return singleReply(failure(msg.id ?? null, this.toRpcError(err, full)));
    }
  }

  /**
   * A batch's replies in order, a few messages at a time, counting the bytes of their JSON as each
   * arrives. The bus refuses a reply above MAX_REPLY_BYTES anyway; stopping at the first reply past
   * it means the rest is never computed, so a small batch of large calls cannot make a worker build
   * tens of megabytes only to throw them away. Refused as the bus refuses it (`too_large`, 413).
   */
  private async answerBatch(messages: readonly unknown[], ctx: CallContext): Promise<RpcResponse[]> {
    const limit = this.options.maxReplyBytes;
    const replies: (RpcResponse | null)[] = [];
    const texts: string[] = [];
    // `[` now; each reply adds its bytes and the comma or `]` after it.
    let bytes = 1;
    let next = 0;
    let answered = 0;
    const lane = async (): Promise<void> => {
      while (bytes <= limit && next < messages.length) {
        const at = next++;
        const reply = await this.handleMessage(messages[at], ctx, true);
        answered++;
        replies[at] = reply;
        if (reply === null) continue;
        const text = encodeJson(reply)!;
        texts[at] = text;
        bytes += Buffer.byteLength(text, 'utf8') + 1;
      }
    };
    await Promise.all(Array.from({ length: Math.min(BATCH_LANES, messages.length) }, lane));
    if (bytes > limit) {
      metrics.mcpBatchItemsSkipped.inc({ server: this.options.name }, messages.length - answered);
      throw new HandlerFailure(
        'too_large',
        `reply too large: ${bytes} bytes after ${answered} of the batch's ${messages.length} messages, the limit is ${limit}`,
      );
    }
    const kept = replies.filter((r): r is RpcResponse => r !== null);
    // Each reply was encoded to be counted: the batch's JSON is those texts, written once.
    return encodedAs(kept, `[${texts.filter((t) => t !== undefined).join(',')}]`);
  }

  /** One message, validated; null when it is a notification. */
  private async handleMessage(raw: unknown, ctx: CallContext, inBatch: boolean): Promise<RpcResponse | null> {
    const parsed = parseRpcRequest(raw);
    if (!parsed.success) return failure(salvageId(raw), invalidRequest(describeIssues(parsed.error)));
    return this.answerMessage(parsed.data, ctx, inBatch);
  }

  /** One message already validated (a single POST's body is validated once, in handlePost). */
  private async answerMessage(msg: RpcRequest, ctx: CallContext, inBatch: boolean): Promise<RpcResponse | null> {
    const notification = isNotification(msg);
    try {
      if (inBatch && msg.method === 'initialize') throw invalidRequest('initialize cannot be part of a batch', 200);
      const result = await this.dispatch(msg, ctx);
      if (notification) return null;
      const id = msg.id ?? null;
      const resultJson = encodingOf(result);
      const reply: RpcResponse = { jsonrpc: '2.0', id, result };
      return resultJson === undefined ? reply : encodedAs(reply, `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":${resultJson}}`);
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
      case 'server/discover':
        return this.discover(ctx);
      case 'tools/list':
        return { tools: this.visibleTools(ctx), ...(ctx.modern ? this.cacheHints() : {}) };
      case 'tools/call':
        return this.callTool(msg.params, ctx, msg.id);
      default:
        if (this.features.handles(msg.method))
          return this.features.dispatch(msg.method, msg.params, ctx, (ttlMs) => (ctx.modern ? this.cacheHints(ttlMs) : {}));
        if (msg.method.startsWith('notifications/')) return {};
        throw new RpcError(RPC.METHOD_NOT_FOUND, `Method not found: ${msg.method}`, {
          hint: `Supported methods: initialize, ping, tools/list, tools/call, ${FEATURE_METHODS.filter((m) => this.features.handles(m))
            .map((m) => `${m}, `)
            .join('')}notifications/initialized.`,
        });
    }
  }

  /** Whether this caller may see and call a tool: the one place a declared scope is enforced. */
  private mayUse(tool: ToolDefinition, ctx: CallContext): boolean {
    return tool.scope === undefined || this.holdsScope(ctx.caller, tool.scope);
  }

  /** The tools this caller may use, with output schemas where the version has structured content. */
  private visibleTools(ctx: CallContext): readonly PublicTool[] {
    const tools = ctx.protocolVersion >= STRUCTURED_FROM ? this.typedTools : this.publicTools;
    return tools.filter((t) => this.mayUse(this.tools.get(t.name)!, ctx));
  }

  private cacheHints(ttlMs = LIST_TTL_MS) {
    return { ttlMs, cacheScope: this.options.cacheScope ?? 'public' };
  }

  private serverInfo() {
    return { name: this.options.name, title: this.options.title, version: this.options.version };
  }

  /** server/discover: versions, capabilities and identity; `tools` only when the caller may use one. */
  private discover(ctx: CallContext): Record<string, unknown> {
    const tools = this.visibleTools(ctx).map((t) => t.name);
    return {
      supportedVersions: [...SUPPORTED_PROTOCOL_VERSIONS].reverse(),
      capabilities: { ...(tools.length ? { tools: { listChanged: false } } : {}), ...this.features.capabilities(ctx) },
      ...(this.options.instructions ? { instructions: this.options.instructions } : {}),
      ...this.cacheHints(),
      _meta: { [VISIBLE_TOOLS_META]: tools },
    };
  }

  private initialize(params: Record<string, unknown> | undefined): Record<string, unknown> {
    const asked = typeof params?.protocolVersion === 'string' ? params.protocolVersion : undefined;
    // An unknown version gets the newest we negotiate here; a client that names none gets the oldest.
    const protocolVersion =
      asked === undefined ? DEFAULT_PROTOCOL_VERSION : isSupportedVersion(asked) && !isModernVersion(asked) ? asked : NEWEST_LEGACY_VERSION;
    return {
      protocolVersion,
      capabilities: { tools: { listChanged: false }, ...this.features.capabilities() },
      serverInfo: this.serverInfo(),
      ...(this.options.instructions ? { instructions: this.options.instructions } : {}),
    };
  }

  private async callTool(params: Record<string, unknown> | undefined, ctx: CallContext, id?: RpcId): Promise<Record<string, unknown>> {
    const call = callParams(params);
    if (!call.success)
      throw new RpcError(RPC.INVALID_PARAMS, `Invalid params: ${describeIssues(call.error)}`, {
        hint: 'tools/call takes {"name": string, "arguments": object}.',
      });
    const tool = this.tools.get(call.data.name);
    if (!tool)
      // 2026-07-28 names an unknown tool as invalid params; the 2025 era keeps its -32601.
      throw new RpcError(ctx.modern ? RPC.INVALID_PARAMS : RPC.METHOD_NOT_FOUND, `Unknown tool: ${call.data.name}`, {
        hint: `Available tools: ${[...this.tools.keys()].join(', ')}. Call tools/list for their arguments.`,
      });
    const given = call.data.arguments ?? {};
    const accepted = tool.accept?.(given);
    const args = accepted === undefined ? tool.input.safeParse(given) : { success: true as const, data: accepted };
    if (!args.success) {
      const message = `Invalid arguments for ${tool.name}: ${describeIssues(args.error)}`;
      // 2026-07-28 makes input validation a tool execution error the model can correct.
      if (this.options.invalidArguments === 'result' || ctx.modern) return { content: [{ type: 'text', text: message }], isError: true };
      throw new RpcError(RPC.INVALID_PARAMS, message, { hint: "See the tool's inputSchema in tools/list." });
    }
    if (!this.mayUse(tool, ctx)) throw new InsufficientScope(tool.scope!);
    if (!isWrite(tool) || !this.options.writes) return (await this.runTool(tool, args.data, ctx)).reply;
    const report: WriteReport = { tool: tool.name, targets: [], confirmation: 'not_needed', replayed: false };
    try {
      return await this.callWrite(this.options.writes, tool, args.data, params ?? {}, ctx, report);
    } finally {
      ctx.reportWrite?.(id, report);
    }
  }

  /** A tool's reply to its arguments, with the tool's own result (absent when it answered with an error). */
  private async runTool(tool: ToolDefinition, args: unknown, ctx: CallContext): Promise<{ reply: Record<string, unknown>; result?: ToolResult }> {
    try {
      const result = await tool.handler(args, ctx);
      const json = JSON.stringify(result.structured);
      const content = [...(result.summary ? [{ type: 'text', text: result.summary }] : []), { type: 'text', text: json }];
      if (ctx.protocolVersion < STRUCTURED_FROM) return { reply: { content }, result };
      // The answer holds the result twice, as the text block and as itself: its JSON is written once.
      return {
        reply: encodedAs({ content, structuredContent: result.structured }, `{"content":${JSON.stringify(content)},"structuredContent":${json}}`),
        result,
      };
    } catch (err) {
      if (err instanceof ToolError) return { reply: { content: [{ type: 'text', text: err.message }], isError: true } };
      if (err instanceof RpcError) throw err;
      if (err instanceof ToolFailure) throw new RpcError(RPC.TOOL_FAILED, `Tool ${tool.name} failed: ${err.message}`);
      if (isTransient(err)) throw unavailable();
      this.options.onInternalError?.(err, ctx);
      throw new RpcError(RPC.TOOL_FAILED, `Tool ${tool.name} failed: internal error`, { hint: `Try again; quote request id ${ctx.requestId} if it persists.` });
    }
  }

  /**
   * A write: its `_meta` idempotency key checked, its first result replayed if this caller already
   * made it in the window, its question asked and answered, then applied once.
   */
  private async callWrite(
    w: WriteMachinery,
    tool: ToolDefinition,
    args: unknown,
    params: Record<string, unknown>,
    ctx: CallContext,
    report: WriteReport,
  ): Promise<Record<string, unknown>> {
    const now = (w.clock ?? Date.now)();
    const callerKey = w.callerKey(ctx.caller);
    const digest = argumentDigest(tool.name, args);
    const named = isPlainObject(params._meta) ? params._meta[IDEMPOTENCY_KEY_META] : undefined;
    if (named !== undefined) {
      if (typeof named !== 'string' || named.length < 1 || named.length > 200)
        throw new RpcError(RPC.INVALID_PARAMS, `Invalid params: _meta.${IDEMPOTENCY_KEY_META} must be a string of 1 to 200 characters`);
      // The key is bound to the first arguments it came with; the write itself is claimed below.
      const bound = await w.idempotency.claim(`${callerKey}:key:${argumentDigest('', named)}`, digest, now);
      if (bound && bound.digest !== digest) throw idempotencyKeyReused();
    }
    // An answer is checked before anything else: an altered, expired or used requestState is refused
    // even when the write it names was already made.
    let answered;
    try {
      answered = ctx.modern && params.requestState !== undefined ? await this.answered(w, { tool: tool.name, callerKey, digest, now }, params) : undefined;
    } catch (err) {
      if (err instanceof RequestStateError) report.confirmation = 'refused';
      throw err;
    }
    if (!ctx.modern && ctx.answer) {
      try {
        answered = await this.answeredOnStream(w, { tool: tool.name, callerKey, digest, now }, ctx.answer);
      } catch (err) {
        if (err instanceof RequestStateError) report.confirmation = 'refused';
        throw err;
      }
    }
    if (answered) report.confirmation = answered.outcome;
    if (answered?.reply) return answered.reply;
    const id = `${callerKey}:${digest}`;
    // A retry of a write already applied needs no second question.
    const earlier = await w.idempotency.find(id, now);
    if (earlier) return this.replay(earlier.result, report);

    const question = !answered && tool.confirm ? await tool.confirm(args, ctx) : undefined;
    if (question) {
      const asked = await this.ask(w, { tool, args, callerKey, digest, question, now }, params, ctx);
      report.confirmation = asked.outcome;
      if (asked.madeInApp !== undefined) return this.replay(asked.madeInApp, report);
      if (asked.reply) return asked.reply;
    }
    const first = await w.idempotency.claim(id, digest, now);
    if (first) return this.replay(first.result, report);
    let ran;
    try {
      ran = await this.runTool(tool, args, ctx);
    } catch (err) {
      await w.idempotency.release(id).catch(() => undefined);
      throw err;
    }
    if (!ran.result) {
      // Refused by the tool: nothing was written, so a corrected retry is a new write.
      await w.idempotency.release(id);
      return ran.reply;
    }
    report.targets = ran.result.targets ?? idsIn(ran.result.structured);
    await w.idempotency.complete(id, JSON.stringify({ reply: ran.reply, targets: report.targets }));
    if (report.confirmation === 'approved_in_app') await w.pending.used(pendingIdOf(callerKey, digest));
    return ran.reply;
  }

  /**
   * A change the person approved in the app, made there as their assistant would have made it: run
   * under the assistant's idempotency claim, so its later identical call gets this result and the
   * change is made once. Refused (nothing made) when the tool refuses it or what the question was
   * about changed since (`basis`); undefined when this server has no such tool.
   */
  async applyApproved(
    change: { tool: string; args: unknown; caller: unknown; basis?: string },
    ctx: Pick<CallContext, 'requestId' | 'clientIp'>,
  ): Promise<{ made: true; result: string; targets: readonly string[] } | { made: false; reason: string; stale: boolean } | undefined> {
    const w = this.options.writes;
    const tool = this.tools.get(change.tool);
    if (!w || !tool) return undefined;
    const full: CallContext = { ...ctx, caller: change.caller, protocolVersion: NEWEST_LEGACY_VERSION };
    const args = tool.input.safeParse(change.args);
    if (!args.success) return { made: false, stale: true, reason: 'The change no longer fits what carecircle accepts; nothing was changed.' };
    if (tool.basis && (await tool.basis(args.data, full)) !== change.basis)
      return {
        made: false,
        stale: true,
        reason:
          'What this change was about has changed since your assistant asked (someone changed it in the meantime), so nothing was changed. Ask your assistant again if it is still wanted.',
      };
    const now = (w.clock ?? Date.now)();
    const id = `${w.callerKey(change.caller)}:${argumentDigest(tool.name, args.data)}`;
    const first = await w.idempotency.claim(id, argumentDigest(tool.name, args.data), now);
    if (first) {
      if (first.result === undefined) throw writeInProgress();
      return { made: true, result: first.result, targets: (JSON.parse(first.result) as { targets: string[] }).targets };
    }
    let ran;
    try {
      ran = await this.runTool(tool, args.data, full);
    } catch (err) {
      await w.idempotency.release(id).catch(() => undefined);
      throw err;
    }
    if (!ran.result) {
      await w.idempotency.release(id);
      const content = ran.reply.content as { text?: string }[] | undefined;
      return { made: false, stale: false, reason: content?.[0]?.text ?? 'carecircle could not make this change; nothing was changed.' };
    }
    const targets = ran.result.targets ?? idsIn(ran.result.structured);
    const result = JSON.stringify({ reply: ran.reply, targets });
    await w.idempotency.complete(id, result);
    return { made: true, result, targets };
  }

  /** The person's answer to an `input_required` question, once its requestState checks out and is used up. */
  private async answered(
    w: WriteMachinery,
    bound: { tool: string; callerKey: string; digest: string; now: number },
    params: Record<string, unknown>,
  ): Promise<{ outcome: ConfirmationOutcome; reply?: Record<string, unknown> }> {
    const { tool, callerKey, digest, now } = bound;
    const state = params.requestState;
    if (typeof state !== 'string') throw new RequestStateError('invalid');
    const claims = await w.states.open(state, { callerKey, tool, digest }, now);
    const answer = isPlainObject(params.inputResponses) ? params.inputResponses[CONFIRM_INPUT] : undefined;
    if (!isPlainObject(answer) || typeof answer.action !== 'string')
      throw new RpcError(RPC.INVALID_PARAMS, `Invalid params: inputResponses.${CONFIRM_INPUT} is required with the requestState it answers`, {
        hint: `Send the person's answer to the "${CONFIRM_INPUT}" input request: {"action": "accept", "content": {"approve": true}}, or "decline".`,
      });
    // One answer, one write: the state's id is claimed like a write, so it cannot be used twice.
    if (await w.idempotency.claim(`state:${claims.jti}`, digest, now)) throw new RequestStateError('replayed');
    if (answer.action === 'accept' && isPlainObject(answer.content) && answer.content.approve === true) return { outcome: 'confirmed' };
    return { outcome: 'declined', reply: notDone('Not done: the person did not approve this change. Nothing was changed.') };
  }

  /** The answer a gateway brought back from the call's stream, once the question it answers checks out and is used up. */
  private async answeredOnStream(
    w: WriteMachinery,
    bound: { tool: string; callerKey: string; digest: string; now: number },
    answer: ElicitAnswer,
  ): Promise<{ outcome: ConfirmationOutcome; reply?: Record<string, unknown> }> {
    const claims = await w.states.openQuestion(answer.question, bound.callerKey, bound.now);
    if (!claims) throw new RequestStateError('invalid');
    if (claims.tool !== bound.tool || claims.digest !== bound.digest) throw new RequestStateError('mismatch');
    if (await w.idempotency.claim(`state:${claims.jti}`, bound.digest, bound.now)) throw new RequestStateError('replayed');
    if (answer.action === 'accept' && answer.content?.confirm === true) return { outcome: 'confirmed' };
    const text = {
      accept: 'Not done: the person did not confirm this change. Nothing was changed.',
      decline: 'Not done: the person declined this change. Nothing was changed.',
      cancel: 'Not done: the person dismissed the question without answering. Nothing was changed.',
      unanswered: 'Not done: the person did not answer in time. Nothing was changed; call again to ask them afresh.',
    }[answer.action];
    const outcome = answer.action === 'cancel' ? 'cancelled' : answer.action === 'unanswered' ? 'unanswered' : 'declined';
    return { outcome, reply: notDone(text) };
  }

  private replay(stored: string | undefined, report: WriteReport): Record<string, unknown> {
    if (stored === undefined) throw writeInProgress();
    const first = JSON.parse(stored) as { reply: Record<string, unknown>; targets: string[] };
    report.replayed = true;
    report.targets = first.targets;
    return first.reply;
  }

  /**
   * Ask the person. 2026-07-28 clients that can elicit get `input_required` and answer by calling
   * again with `inputResponses` and the signed `requestState`; 2025-era clients that declared
   * elicitation (their session id says so) get `elicitation/create` on the call's event stream; every
   * other client leaves the change waiting for the person in the app.
   */
  private async ask(
    w: WriteMachinery,
    asked: { tool: ToolDefinition; args: unknown; callerKey: string; digest: string; question: string; now: number },
    params: Record<string, unknown>,
    ctx: CallContext,
  ): Promise<{ outcome: ConfirmationOutcome; reply?: Record<string, unknown>; madeInApp?: string }> {
    const { callerKey, digest, question, now } = asked;
    const tool = asked.tool.name;
    if (ctx.modern && canElicit(params))
      return {
        outcome: 'asked',
        reply: {
          resultType: 'input_required',
          inputRequests: {
            [CONFIRM_INPUT]: {
              method: 'elicitation/create',
              params: {
                mode: 'form',
                message: question,
                requestedSchema: {
                  type: 'object',
                  properties: { approve: { type: 'boolean', title: 'Approve', description: question, default: false } },
                  required: ['approve'],
                },
              },
            },
          },
          requestState: await w.states.seal({ callerKey, tool, digest }, now),
        },
      };
    // A 2025-era client that declared elicitation is asked on this call's own event stream.
    if (!ctx.modern && w.elicitation && ctx.streamQuestion && ctx.sessionId && (await w.states.openSession(ctx.sessionId, callerKey, now)).elicitation) {
      const { token, jti } = await w.states.sealQuestion({ callerKey, tool, digest }, now, w.elicitation.timeoutMs);
      ctx.streamQuestion({
        key: jti,
        timeoutMs: w.elicitation.timeoutMs,
        request: {
          jsonrpc: '2.0',
          id: token,
          method: 'elicitation/create',
          params: {
            message: question,
            requestedSchema: {
              type: 'object',
              properties: { confirm: { type: 'boolean', title: 'Confirm', description: question, default: false } },
              required: ['confirm'],
            },
          },
        },
      });
      return { outcome: 'asked', reply: {} };
    }
    const basis = await asked.tool.basis?.(asked.args, ctx);
    const change = await w.pending.park({
      caller: ctx.caller,
      callerKey,
      tool,
      digest,
      question,
      args: asked.args,
      now,
      ...(basis !== undefined ? { basis } : {}),
    });
    // Approved and made in the app already: this call gets what the approval made.
    if (change.status === 'applied' && change.result !== undefined) return { outcome: 'approved_in_app', madeInApp: change.result };
    if (change.status === 'applying') throw writeInProgress();
    if (change.status === 'approved') return { outcome: 'approved_in_app' };
    if (change.status === 'declined') {
      await w.pending.used(change.id);
      return { outcome: 'declined_in_app', reply: notDone(`Not done: the person declined "${question}" in carecircle. Nothing was changed.`) };
    }
    return {
      outcome: 'waiting_in_app',
      reply: notDone(
        `Waiting for the person to approve: "${question}" Nothing is changed yet. They can approve or decline it in carecircle at ${w.approveAt}; once approved, call ${tool} again with the same arguments and it is made.`,
      ),
    };
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

/** A tool that changes something: every tool not declared read-only goes through the write path. */
const isWrite = (tool: ToolDefinition): boolean => tool.annotations.readOnlyHint !== true;

/** Whether a 2026-07-28 request says its client can put a question to the person. */
function canElicit(params: Record<string, unknown>): boolean {
  const caps = isPlainObject(params._meta) ? params._meta[META.clientCapabilities] : undefined;
  return isPlainObject(caps) && caps.elicitation !== undefined && caps.elicitation !== null;
}

/** A JSON-RPC response (no method; an id and a result or an error) posted by a client. */
function isRpcResponse(body: unknown): body is Record<string, unknown> {
  return isPlainObject(body) && body.method === undefined && 'id' in body && ('result' in body || 'error' in body);
}

const ANSWER_HINT = 'Answer an elicitation/create request of this server on the stream it came on, with its id, within its time.';

/** A write not made (declined, or waiting for the person): told to the model as a result it can read. */
const notDone = (text: string) => ({ content: [{ type: 'text', text }], isError: true });

/** A write's target records when the tool names none: its result's `id` and `…Id` fields. */
function idsIn(structured: Record<string, unknown>): string[] {
  return Object.entries(structured).flatMap(([k, v]) => ((k === 'id' || k.endsWith('Id')) && typeof v === 'string' ? [v] : []));
}

/** tools/call params checked by hand; zod names what is wrong with the rest. */
function callParams(params: Record<string, unknown> | undefined): ReturnType<typeof toolCallParams.safeParse> {
  if (params && typeof params.name === 'string' && params.name.length > 0 && (params.arguments === undefined || isPlainObject(params.arguments)))
    return { success: true, data: { name: params.name, ...(params.arguments === undefined ? {} : { arguments: params.arguments }) } };
  return toolCallParams.safeParse(params ?? {});
}

/** A batch member written for 2026-07-28, which has no batches. */
function carriesEnvelope(raw: unknown): boolean {
  const parsed = parseRpcRequest(raw);
  return parsed.success && envelopeVersion(parsed.data) !== undefined;
}

/** Where server/discover names the tools this caller may use (the revision's result has no tool list). */
const VISIBLE_TOOLS_META = 'dev.carecircle/tools';

/** What a 2026-07-28 client may call; `ping` and the handshake are gone from that revision. */
const MODERN_METHODS = new Set(['server/discover', 'tools/list', 'tools/call']);

/** A lone message that found a dependency down is a 503 with Retry-After, like every surface's. */
function singleReply(reply: RpcResponse): HttpReplyEnvelope {
  if ('error' in reply && reply.error.code === RPC.UNAVAILABLE) return { status: 503, headers: { 'retry-after': String(RETRY_AFTER_SEC) }, body: reply };
  return { status: 200, headers: {}, body: reply };
}

/** A dependency (database, bus) is down for now: the caller retries after the delay. */
const unavailable = () =>
  new RpcError(
    RPC.UNAVAILABLE,
    'Service temporarily unavailable',
    { hint: 'A service it depends on is unavailable; retry after the Retry-After delay.', retryAfterSec: RETRY_AFTER_SEC },
    503,
  );

export function failure(id: RpcId, err: RpcError): RpcResponse {
  return { jsonrpc: '2.0', id, error: { code: err.code, message: err.message, ...(err.data ? { data: err.data } : {}) } };
}

/** A whole-response JSON-RPC error (for gateways: parse errors, limits, unavailability). */
export function rpcErrorBody(err: RpcError, id: RpcId = null): RpcResponse {
  return failure(id, err);
}
