// The worker handler behind {app_url}/api/mcp/public: the unauthenticated sandbox endpoint.
import type { Credentials } from '../auth/credentials.js';
import type { Db } from 'mongodb';
import type { Bus } from '../bus/types.js';
import { subjects } from '../bus/subjects.js';
import type { Config } from '../config.js';
import type { Limiter } from '../limits/limiter.js';
import type { Logger } from '../log.js';
import { RPC } from '../rpc/codes.js';
import { RpcError } from '../rpc/errors.js';
import { endpointDescriptor, serveMcp } from '../rpc/http.js';
import { failure, McpServer } from '../rpc/mcp.js';
import { VERSION } from '../version.js';
import type { RouteHandler } from '../slice/contract.js';
import { SANDBOX_ENDPOINT } from './endpoint.js';
import { SandboxService } from './service.js';
import { sandboxTools, START_WORKSPACE_TOOL } from './tool.js';
import type { Timelines } from '../store/timeline/port.js';

export function sandboxRateNote(config: Config): string {
  return `Per client address: a burst of ${config.sandboxRateCapacity} workspaces, then one more every ${Math.round(config.sandboxRateRefill / 60_000)} minutes. Over the limit: HTTP 429, JSON-RPC -32029, Retry-After and error.data.retryAfterSec; wait that long and retry once.`;
}

export function createSandboxServer(
  config: Config,
  db: Db,
  credentials: Credentials,
  timelines: Timelines,
  bus: Bus,
  limiter: Limiter,
  log?: Logger,
): McpServer {
  return new McpServer({
    name: SANDBOX_ENDPOINT.name,
    title: SANDBOX_ENDPOINT.title,
    version: VERSION,
    instructions: SANDBOX_ENDPOINT.instructions(config),
    tools: sandboxTools({
      service: new SandboxService(db, credentials, config.inboxDomain, timelines),
      limiter,
      policy: { capacity: config.sandboxRateCapacity, refillMs: config.sandboxRateRefill },
      appUrl: config.appUrl,
      bus,
      opsSubject: subjects(config.busNamespace).opsSandboxCreated,
      opsNotify: config.opsNotify,
    }),
    notificationStatus: 202,
    invalidArguments: 'result',
    maxReplyBytes: config.maxReplyBytes,
    ...(log ? { onInternalError: (err: unknown, ctx: { requestId: string }) => log.error({ err, requestId: ctx.requestId }, 'sandbox tool failed') } : {}),
  });
}

/** GET answers the descriptor, POST the JSON-RPC messages. */
export function sandboxEndpoint(config: Config, db: Db, credentials: Credentials, timelines: Timelines, bus: Bus, limiter: Limiter, log: Logger): RouteHandler {
  const server = createSandboxServer(config, db, credentials, timelines, bus, limiter, log);
  const descriptor = endpointDescriptor(
    server,
    { url: SANDBOX_ENDPOINT.url(config), auth: 'none', methods: ['initialize', 'ping', 'tools/list', 'tools/call'], rateLimit: sandboxRateNote(config) },
    {
      handshake: 'optional: POST tools/call directly, no initialize needed',
      maxBodyBytes: 65536,
      claim: `${config.appUrl}/onboarding?workspace=<workspaceId>`,
      example: {
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: {
          name: START_WORKSPACE_TOOL.name,
          arguments: { lovedOneFirstName: 'Rosa', lovedOneLastName: 'Rivera', sandbox: true, primaryCaregiverEmail: 'you@example.com' },
        },
      },
    },
  );
  return async (req, _params, reqLog) => {
    if (!config.tenants.includes('family')) {
      const err = new RpcError(
        RPC.UNAVAILABLE,
        'Family workspaces are not provisioned in this deployment',
        { hint: 'Do not retry: this deployment has no family tenant (TENANTS).' },
        503,
      );
      return { status: 503, headers: {}, body: failure(null, err) };
    }
    const reply = await serveMcp(server, req, () => descriptor, reqLog);
    // A refused creation is an HTTP-level 429 too, with Retry-After (SPEC sandbox errors).
    const body = reply.body as { error?: { code: number; data?: { retryAfterSec?: number } } } | undefined;
    if (!Array.isArray(reply.body) && body?.error?.code === RPC.RATE_LIMITED) {
      return { ...reply, status: 429, headers: { ...reply.headers, 'retry-after': String(body.error.data?.retryAfterSec ?? 60) } };
    }
    return reply;
  };
}
