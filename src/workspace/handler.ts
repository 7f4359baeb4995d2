// The worker handler behind {app_url}/api/mcp: authenticate first, then MCP, then the audit rows.
import type { Credentials } from '../auth/credentials.js';
import type { Db } from 'mongodb';
import type { HttpReplyEnvelope } from '../bus/envelopes.js';
import type { Bus } from '../bus/types.js';
import type { Config } from '../config.js';
import { KeyStore } from '../keys/keys.js';
import { perMinute, type Limiter } from '../limits/limiter.js';
import type { Logger } from '../log.js';
import { RPC } from '../rpc/codes.js';
import { RpcError } from '../rpc/errors.js';
import { isNotification, rpcRequest, salvageId, type RpcResponse } from '../rpc/envelope.js';
import { failure, McpServer } from '../rpc/mcp.js';
import { takeForMessages } from '../rpc/rateLimit.js';
import { VERSION } from '../version.js';
import type { RouteHandler } from '../slice/contract.js';
import { auditWriter, type AuditRow } from './audit.js';
import { authenticate, AuthRefusal, resourceMetadataUrl, type WorkspaceCaller } from './caller.js';
import { WORKSPACE_ENDPOINT, WORKSPACE_INSTRUCTIONS } from './endpoint.js';
import { WorkspaceStore } from '../family/records.js';
import { PlansStore } from '../family/plans.js';
import { planTools } from './planTools.js';
import { workspacePrompts } from './prompts.js';
import { workspaceResources } from './resources.js';
import { callerHoldsScope, workspaceTools } from './tools.js';
import { MedicationList } from '../family/medications.js';
import type { MedicationToolDeps } from './medicationTools.js';
import { clientNamer } from './clientNames.js';
import type { Timelines } from '../store/timeline/port.js';
import type { WriteMachinery } from '../rpc/writes.js';
import type { ToolDefinition, WriteReport } from '../rpc/tool.js';
import { resolveDataKey } from '../partner/secretBox.js';
import { MongoIdempotencyStore, PendingStore, requestStates } from './writeStore.js';
import { busAnswers } from '../rpc/answers.js';

/** Who a write came from, for its idempotency: the person and the credential they used. */
export const callerKeyOf = (caller: unknown): string => {
  const c = caller as WorkspaceCaller;
  return `${c.uid}/${c.keyId ?? c.clientId ?? c.via}`;
};

/**
 * The workspace's write machinery over its store, with confirmations signed under a key derived from
 * DATA_KEY, and answers to questions asked on a call's stream routed over the bus.
 */
export function workspaceWrites(config: Config, db: Db, log: Logger, bus: Bus, clock: () => number = Date.now): WriteMachinery {
  return {
    callerKey: callerKeyOf,
    idempotency: new MongoIdempotencyStore(db),
    pending: new PendingStore(db),
    states: requestStates(resolveDataKey(config, log)),
    approveAt: `${config.appUrl}/settings#waiting`,
    elicitation: { timeoutMs: config.mcpElicitationTimeoutMs, answers: busAnswers(bus, config.busNamespace) },
    clock,
  };
}

/** `plans`: the appointments and tasks the weekly summary reads. */
export function createWorkspaceServer(
  store: WorkspaceStore,
  tools: ToolDefinition[],
  maxReplyBytes: number,
  log?: Logger,
  writes?: WriteMachinery,
  plans?: PlansStore,
): McpServer {
  return new McpServer({
    name: WORKSPACE_ENDPOINT.name,
    title: WORKSPACE_ENDPOINT.title,
    version: VERSION,
    instructions: WORKSPACE_INSTRUCTIONS,
    tools,
    prompts: workspacePrompts(store, Date.now, plans),
    resources: workspaceResources(store),
    notificationStatus: 202,
    invalidArguments: 'error',
    holdsScope: callerHoldsScope,
    cacheScope: 'private',
    maxReplyBytes,
    ...(writes ? { writes } : {}),
    ...(log ? { onInternalError: (err: unknown, ctx: { requestId: string }) => log.error({ err, requestId: ctx.requestId }, 'workspace tool failed') } : {}),
  });
}

/** method and tool of each message in a body, for the audit log (never arguments). */
function auditedMessages(body: unknown): { id: unknown; method: string; tool: string | null }[] {
  const messages = Array.isArray(body) ? body : [body];
  return messages.flatMap((m) => {
    const parsed = rpcRequest.safeParse(m);
    if (!parsed.success) return [];
    const tool = parsed.data.method === 'tools/call' && typeof parsed.data.params?.name === 'string' ? parsed.data.params.name.slice(0, 100) : null;
    return [{ id: isNotification(parsed.data) ? undefined : parsed.data.id, method: parsed.data.method.slice(0, 100), tool }];
  });
}

/** A write's targets and confirmation, named in its audit row (never its arguments). */
function writeFields(report: WriteReport | undefined): Partial<AuditRow> {
  if (!report) return {};
  return { targets: report.targets.slice(0, 20), confirmation: report.confirmation, ...(report.replayed ? { replayed: true } : {}) };
}

function succeeded(reply: HttpReplyEnvelope, id: unknown): boolean {
  if (reply.status >= 400) return false;
  if (reply.body === undefined) return true; // notifications
  const responses = (Array.isArray(reply.body) ? reply.body : [reply.body]) as RpcResponse[];
  const r = responses.find((x) => x.id === id);
  if (!r) return true;
  return !('error' in r) && (r.result as { isError?: boolean }).isError !== true;
}

/** Named seams of the endpoint: its clock (confirmation expiry) and its tools (a test's own write tool). */
export interface WorkspaceSeams {
  clock?: () => number;
  tools?: (store: WorkspaceStore, medications: Omit<MedicationToolDeps, 'store'>) => ToolDefinition[];
}

/** The workspace's MCP server with its tools and write machinery, over the family records. */
export function workspaceServer(
  config: Config,
  db: Db,
  credentials: Credentials,
  timelines: Timelines,
  log: Logger,
  bus: Bus,
  seams: WorkspaceSeams = {},
): { server: McpServer; store: WorkspaceStore } {
  const store = new WorkspaceStore(db, credentials, config.inboxDomain, timelines);
  // Whose assistant wrote a change: the connected app's own name, or the API key's name.
  const clientName = clientNamer(db, credentials);
  const medications = { medications: new MedicationList(db), clientName };
  const server = createWorkspaceServer(
    store,
    [...(seams.tools?.(store, medications) ?? workspaceTools(store, medications, clientName)), ...planTools(store, db, credentials)],
    config.maxReplyBytes,
    log,
    workspaceWrites(config, db, log, bus, seams.clock),
    new PlansStore(db),
  );
  return { server, store };
}

/** Authenticate first, then the session caller's rate limit, then MCP, then the audit rows. */
export function workspaceEndpoint(
  config: Config,
  db: Db,
  credentials: Credentials,
  timelines: Timelines,
  log: Logger,
  bus: Bus,
  limiter: Limiter,
  seams: WorkspaceSeams = {},
): RouteHandler {
  const { server, store } = workspaceServer(config, db, credentials, timelines, log, bus, seams);
  const keys = new KeyStore(db, credentials);
  const audit = auditWriter(timelines, bus, config.busNamespace, log);
  const sessionPolicy = perMinute(config.rateMcpSessionPerMin);
  return async (req, _params, reqLog) => {
    // A refusal answers the message it refuses: a single message gets its id back.
    const messageId = Array.isArray(req.body) ? null : salvageId(req.body);
    let caller: WorkspaceCaller;
    try {
      caller = await authenticate(db, credentials, config, req.headers, keys, store);
    } catch (err) {
      if (err instanceof AuthRefusal) return { status: err.httpStatus, headers: { 'www-authenticate': err.wwwAuthenticate }, body: failure(messageId, err) };
      // Anything else (the database down, say) is answered by cause where every worker failure is.
      throw err;
    }
    // Bearer credentials are limited at the gateway, by credential. A session cookie names a person
    // only once the session is read, here, and a person can hold many sessions: the bucket is theirs.
    if (caller.via === 'session') {
      const refused = await takeForMessages(limiter, `mcp-session:uid:${caller.uid}`, sessionPolicy, req.body);
      if (refused) return { status: refused.error.httpStatus, headers: refused.headers ?? {}, body: failure(messageId, refused.error) };
    }
    if (req.method === 'GET') {
      const err = new RpcError(
        RPC.INVALID_REQUEST,
        'This endpoint does not stream; POST JSON-RPC messages instead',
        { hint: 'POST one JSON-RPC message per request.' },
        405,
      );
      return { status: 405, headers: { allow: 'POST' }, body: failure(null, err) };
    }
    const started = performance.now();
    let reply: HttpReplyEnvelope | undefined;
    // What each write call (by JSON-RPC id) changed and how the person confirmed it, for its row.
    const writes = new Map<unknown, WriteReport>();
    try {
      reply = await server.handlePost(
        { method: req.method, headers: req.headers, body: req.body },
        {
          requestId: req.requestId,
          clientIp: req.clientIp,
          caller,
          reportWrite: (id, report) => writes.set(id, report),
          ...(req.answer ? { answer: req.answer } : {}),
        },
      );
    } finally {
      // A batch refused as too large is audited too, each message as failed.
      const durationMs = Math.round(performance.now() - started);
      const messages = auditedMessages(req.body);
      // Stored in the stream (NATS) or queued here, never waiting for the store.
      await audit
        .record(
          messages.map((m) => ({
            ...writeFields(writes.get(m.id)),
            uid: caller.uid,
            tenant: caller.tenant,
            method: m.method,
            tool: m.tool,
            success: reply !== undefined && succeeded(reply, m.id),
            durationMs,
            authMethod: caller.via,
            ...(caller.keyId ? { keyId: caller.keyId } : {}),
            ...(caller.clientId ? { clientId: caller.clientId } : {}),
            at: new Date(),
          })),
        )
        .catch((err: unknown) => reqLog.error({ err }, 'audit append failed'));
    }
    // A missing OAuth scope is an HTTP-level refusal too, so clients can step up (RFC 6750).
    const single = !Array.isArray(reply.body) ? (reply.body as RpcResponse | undefined) : undefined;
    const scope = single && 'error' in single ? (single.error.data as { scope?: string } | undefined)?.scope : undefined;
    if (scope)
      return {
        ...reply,
        status: 403,
        headers: {
          ...reply.headers,
          'www-authenticate': `Bearer error="insufficient_scope", scope="${scope}", resource_metadata="${resourceMetadataUrl(config)}"`,
        },
      };
    return reply;
  };
}
