// The worker handler behind {base_url}/api/mcp: the public, read-only directory MCP server.
import { subjects } from '../bus/subjects.js';
import type { Config } from '../config.js';
import type { Logger } from '../log.js';
import { McpServer } from '../rpc/mcp.js';
import { endpointDescriptor, serveMcp } from '../rpc/http.js';
import type { HttpHandler } from '../worker/runtime.js';
import { loadCostData } from './costData.js';
import { loadDirectoryData } from './data.js';
import { createDirectoryIndex } from './search.js';
import { directoryTools, type DirectoryDeps } from './tools.js';
import { VERSION } from '../version.js';

/** Data files are read and indexed once per worker process. */
export function loadDirectory(siteUrl: string): DirectoryDeps {
  const data = loadDirectoryData();
  return { data, index: createDirectoryIndex(data), costs: loadCostData(), siteUrl };
}

export function createDirectoryServer(deps: DirectoryDeps, log?: Logger): McpServer {
  return new McpServer({
    name: 'carecircle-directory',
    title: 'carecircle care-resource directory',
    version: VERSION,
    instructions:
      'Public, read-only directory for family caregivers of older adults in the US: search national care resources, read community channels, and estimate long-term-care costs. No sign-in needed.',
    tools: directoryTools(deps),
    notificationStatus: 204,
    invalidArguments: 'error',
    ...(log ? { onInternalError: (err: unknown, ctx: { requestId: string }) => log.error({ err, requestId: ctx.requestId }, 'directory tool failed') } : {}),
  });
}

export function directoryDescriptor(server: McpServer, config: Config, ratePerMin: number) {
  return endpointDescriptor(server, {
    url: `${config.siteUrl}/api/mcp`,
    auth: 'none',
    methods: ['initialize', 'ping', 'tools/list', 'tools/call', 'notifications/initialized'],
    rateLimit: `${ratePerMin} requests per minute per client address`,
  });
}

export function directoryHandler(config: Config, log: Logger, deps: DirectoryDeps = loadDirectory(config.siteUrl)): HttpHandler {
  const server = createDirectoryServer(deps, log);
  const descriptor = directoryDescriptor(server, config, config.rateDirectoryMcpPerMin);
  return {
    subject: subjects(config.busNamespace).directoryMcp,
    handle: (request, reqLog) => serveMcp(server, request, () => descriptor, reqLog),
  };
}
