// Serving an MCP server over the forwarded HTTP envelope: GET descriptor, POST JSON-RPC.
import type { HttpReplyEnvelope, HttpRequestEnvelope } from '../bus/envelopes.js';
import type { Logger } from '../log.js';
import { RPC } from './codes.js';
import { RpcError } from './errors.js';
import { CURRENT_PROTOCOL_VERSION, DEFAULT_PROTOCOL_VERSION, failure, SUPPORTED_PROTOCOL_VERSIONS, type McpServer } from './mcp.js';

/** A GET that wants only an event stream gets 405: we never stream, and a 200 JSON would loop SSE clients. */
export function wantsOnlyEventStream(accept: string | undefined): boolean {
  if (!accept) return false;
  const types = accept.split(',').map((t) => t.split(';')[0]?.trim().toLowerCase());
  return types.includes('text/event-stream') && !types.some((t) => t === 'application/json' || t === '*/*' || t === 'application/*');
}

export async function serveMcp(
  server: McpServer,
  request: HttpRequestEnvelope,
  describe: () => Record<string, unknown>,
  _log: Logger,
  caller?: unknown,
): Promise<HttpReplyEnvelope> {
  if (request.method === 'GET') {
    if (wantsOnlyEventStream(request.headers.accept)) {
      const err = new RpcError(RPC.INVALID_REQUEST, 'This endpoint does not stream; POST JSON-RPC messages instead', undefined, 405);
      return { status: 405, headers: { allow: 'POST' }, body: failure(null, err) };
    }
    return { status: 200, headers: { 'cache-control': 'public, max-age=300' }, body: describe() };
  }
  // A failure outside every message (none is expected) is logged once, by the worker that answers it.
  return server.handlePost(
    { method: request.method, headers: request.headers, body: request.body },
    { requestId: request.requestId, clientIp: request.clientIp, ...(caller === undefined ? {} : { caller }) },
  );
}

/** What GET on an MCP endpoint answers: the server's identity and tools, plus endpoint facts. */
export function endpointDescriptor(
  server: McpServer,
  endpoint: { url: string; auth: string; methods: readonly string[]; rateLimit: string },
  extra: Record<string, unknown> = {},
) {
  return {
    name: server.options.name,
    title: server.options.title,
    version: server.options.version,
    description: server.options.instructions,
    transport: 'streamable-http',
    // SPEC's field: what a request naming no version speaks. The current revision is named beside it.
    protocolVersion: DEFAULT_PROTOCOL_VERSION,
    currentProtocolVersion: CURRENT_PROTOCOL_VERSION,
    supportedProtocolVersions: SUPPORTED_PROTOCOL_VERSIONS,
    auth: endpoint.auth,
    endpoint: endpoint.url,
    methods: endpoint.methods,
    rateLimit: endpoint.rateLimit,
    ...extra,
    tools: server.publicTools,
  };
}
