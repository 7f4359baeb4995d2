// The worker handler behind {base_url}/api/mcp: the public, read-only directory MCP server.
import type { Config } from '../config.js';
import type { Logger } from '../log.js';
import { McpServer } from '../rpc/mcp.js';
import { endpointDescriptor, serveMcp } from '../rpc/http.js';
import type { RouteHandler } from '../slice/contract.js';
import { VERSION } from '../version.js';
import { loadCostData } from './costData.js';
import { loadDirectoryData } from './data.js';
import { DIRECTORY_ENDPOINT, DIRECTORY_INSTRUCTIONS } from './endpoint.js';
import { createDirectoryIndex, type DirectoryIndex } from './search.js';
import { directoryTools, type DirectoryDeps } from './tools.js';

// The index is frozen once built, so the directory and site slices of a process share one.
let index: DirectoryIndex | undefined;

/** Data files are read and indexed once per worker process. */
export function loadDirectory(siteUrl: string): DirectoryDeps {
  const data = loadDirectoryData();
  index ??= createDirectoryIndex(data);
  return { data, index, costs: loadCostData(), siteUrl };
}

export function createDirectoryServer(deps: DirectoryDeps, maxReplyBytes: number, log?: Logger): McpServer {
  return new McpServer({
    name: DIRECTORY_ENDPOINT.name,
    title: DIRECTORY_ENDPOINT.title,
    version: VERSION,
    instructions: DIRECTORY_INSTRUCTIONS,
    tools: directoryTools(deps),
    notificationStatus: 204,
    invalidArguments: 'error',
    maxReplyBytes,
    ...(log ? { onInternalError: (err: unknown, ctx: { requestId: string }) => log.error({ err, requestId: ctx.requestId }, 'directory tool failed') } : {}),
  });
}

export function directoryDescriptor(server: McpServer, config: Config, ratePerMin: number) {
  return endpointDescriptor(server, {
    url: DIRECTORY_ENDPOINT.url(config),
    auth: 'none',
    methods: ['initialize', 'ping', 'tools/list', 'tools/call', 'notifications/initialized'],
    rateLimit: `${ratePerMin} requests per minute per client address`,
  });
}

/** GET answers the descriptor, POST the JSON-RPC messages. */
export function directoryEndpoint(config: Config, log: Logger, deps: DirectoryDeps = loadDirectory(config.siteUrl)): RouteHandler {
  const server = createDirectoryServer(deps, config.maxReplyBytes, log);
  const descriptor = directoryDescriptor(server, config, config.rateDirectoryMcpPerMin);
  return (request, _params, reqLog) => serveMcp(server, request, () => descriptor, reqLog);
}
