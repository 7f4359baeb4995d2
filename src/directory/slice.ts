// The directory slice: the public, read-only directory MCP endpoint on the site host.
import { DEFAULT_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS } from '../rpc/mcp.js';
import { jsonContent, ref } from '../http/openapi.js';
import { defineRoutes, defineSlice, handlers } from '../slice/contract.js';
import { perMinute } from '../limits/limiter.js';
import { directoryEndpoint } from './handler.js';
import { DIRECTORY_ENDPOINT } from './endpoint.js';
import { MCP_REQUEST_HEADERS, STRUCTURED_FROM } from '../rpc/versions.js';

export const SITE_MCP_BODY_LIMIT = 256 * 1024;

const routes = defineRoutes({
  mcp: {
    hosts: ['site'],
    path: '/api/mcp',
    methods: ['GET', 'POST'],
    edge: 'mcp',
    bodyLimit: SITE_MCP_BODY_LIMIT,
    rate: { bucket: 'directory-mcp', by: 'ip', policy: (c) => perMinute(c.rateDirectoryMcpPerMin) },
    forwardHeaders: MCP_REQUEST_HEADERS,
    // The hottest request of all: answered ahead of Koa, through the same checks.
    lean: true,
    openapi: ({ config }) => ({
      get: {
        tags: ['mcp'],
        summary: 'Describe the directory MCP endpoint',
        operationId: 'describe_directory_mcp',
        responses: {
          '200': { description: 'Endpoint description and tool list.', content: jsonContent(ref('McpDescriptor')) },
          '405': { description: 'Only an event stream was acceptable; this endpoint does not stream.', content: jsonContent(ref('JsonRpcResponse')) },
        },
      },
      post: {
        tags: ['mcp'],
        summary: 'Send a JSON-RPC message',
        description:
          'MCP 2026-07-28 (server/discover, tools/list, tools/call with the version and client capabilities in params._meta, and the Mcp-Method / Mcp-Name headers equal to the body) and the 2025 versions (initialize, ping, tools/list, tools/call, notifications/initialized). No authentication.',
        operationId: 'call_directory_mcp',
        // The gateway forwards no empty header: an empty value is the header left out, so the
        // schemas accept '' and the descriptions say what leaving the header out means.
        parameters: [
          {
            name: 'MCP-Protocol-Version',
            in: 'header',
            required: false,
            description: `Empty or absent: ${DEFAULT_PROTOCOL_VERSION}, unless the body carries its own version.`,
            schema: { type: 'string', enum: ['', ...SUPPORTED_PROTOCOL_VERSIONS] },
          },
          {
            name: 'Mcp-Method',
            in: 'header',
            required: false,
            description: "Required under 2026-07-28: the body's method. An empty value counts as absent.",
            schema: { type: 'string' },
          },
          {
            name: 'Mcp-Name',
            in: 'header',
            required: false,
            description: 'Required under 2026-07-28 for tools/call: the tool name, plain or =?base64?…?=. An empty value counts as absent.',
            schema: { type: 'string' },
          },
        ],
        requestBody: {
          required: true,
          content: jsonContent({
            oneOf: [
              ref('JsonRpcRequest'),
              {
                type: 'array',
                minItems: 1,
                items: ref('JsonRpcRequest'),
                description: `A batch (versions before ${STRUCTURED_FROM}); an empty batch is refused (-32600).`,
              },
            ],
          }),
        },
        responses: {
          '200': {
            description: 'A JSON-RPC response (success or error), or an array for a batch.',
            content: jsonContent({ oneOf: [ref('JsonRpcResponse'), { type: 'array', items: ref('JsonRpcResponse') }] }),
          },
          '204': { description: 'The message was a notification (notifications/initialized).' },
          '202': { description: 'A 2026-07-28 notification.' },
          '400': {
            description:
              'Not JSON (-32700), not a JSON-RPC envelope (-32600); under 2026-07-28 a header that disagrees with the body (-32020), an unsupported version (-32022) or an incomplete _meta (-32602).',
            content: jsonContent(ref('JsonRpcResponse')),
          },
          '404': { description: 'Under 2026-07-28, a method that revision does not have (-32601).', content: jsonContent(ref('JsonRpcResponse')) },
          '403': { description: 'A browser Origin this endpoint does not serve.', content: jsonContent(ref('JsonRpcResponse')) },
          '413': { description: `Body over ${SITE_MCP_BODY_LIMIT / 1024} KB.`, content: jsonContent(ref('JsonRpcResponse')) },
          '415': { description: 'Content-Type is not application/json.', content: jsonContent(ref('JsonRpcResponse')) },
          '429': {
            description: `More than ${config.rateDirectoryMcpPerMin} requests a minute from one address (-32029, Retry-After).`,
            content: jsonContent(ref('JsonRpcResponse')),
          },
          '503': { description: 'No worker answered in time (-32030, Retry-After).', content: jsonContent(ref('JsonRpcResponse')) },
        },
      },
    }),
  },
});

export const directorySlice = defineSlice({
  name: 'directory',
  routes,
  mcp: [DIRECTORY_ENDPOINT],
  serve: (ctx) => {
    const endpoint = directoryEndpoint(ctx.config, ctx.log);
    return handlers(routes).on('mcp', 'GET', endpoint).on('mcp', 'POST', endpoint).done();
  },
});
