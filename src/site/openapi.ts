// The site API's OpenAPI 3.0.3 description, built from configuration and from the zod schemas the
// workers parse and answer with, so the document and the service cannot disagree.
import { z } from 'zod';
import { communityAction, communityActionResult, threadList, threadWithComments, PAGE_LIMIT_DEFAULT, PAGE_LIMIT_MAX } from '../community/schema.js';
import type { Config } from '../config.js';
import { API_ERROR_CODES } from '../http/apiError.js';
import { newsletterRequest, newsletterResponse } from '../newsletter/schema.js';
import { SUPPORTED_PROTOCOL_VERSIONS } from '../rpc/mcp.js';

export const OPENAPI_VERSION = '3.0.3';
/** The version of the site API description (SPEC: Versioning). */
export const SITE_API_VERSION = '1.0.0';

type Json = Record<string, unknown>;

const schemaOf = (s: z.ZodType, io: 'input' | 'output' = 'output'): Json => z.toJSONSchema(s, { target: 'openapi-3.0', io, unrepresentable: 'any' }) as Json;
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const errorRef = (name: string) => ({ $ref: `#/components/responses/${name}` });
const jsonContent = (schema: Json) => ({ 'application/json': { schema } });

const apiErrorSchema: Json = {
  type: 'object',
  description: 'Site API error: the `error` object and a top-level copy of the same three fields.',
  required: ['error', 'code', 'message', 'hint'],
  properties: {
    error: {
      type: 'object',
      required: ['code', 'message', 'hint'],
      properties: { code: { type: 'string', enum: [...API_ERROR_CODES] }, message: { type: 'string' }, hint: { type: 'string' } },
    },
    code: { type: 'string', enum: [...API_ERROR_CODES] },
    message: { type: 'string' },
    hint: { type: 'string' },
  },
};

const rpcId = { description: 'String, number or null.', anyOf: [{ type: 'string', nullable: true }, { type: 'number' }] };

const jsonRpcRequest: Json = {
  type: 'object',
  required: ['jsonrpc', 'method'],
  properties: { jsonrpc: { type: 'string', enum: ['2.0'] }, id: rpcId, method: { type: 'string' }, params: { type: 'object', additionalProperties: true } },
};

const jsonRpcResponse: Json = {
  type: 'object',
  required: ['jsonrpc'],
  properties: {
    jsonrpc: { type: 'string', enum: ['2.0'] },
    id: rpcId,
    result: { type: 'object', additionalProperties: true },
    error: {
      type: 'object',
      required: ['code', 'message'],
      properties: {
        code: { type: 'integer' },
        message: { type: 'string' },
        data: { type: 'object', additionalProperties: true, properties: { hint: { type: 'string' }, retryAfterSec: { type: 'integer' } } },
      },
    },
  },
};

const toolSchema: Json = {
  type: 'object',
  required: ['name', 'description', 'inputSchema'],
  properties: { name: { type: 'string' }, title: { type: 'string' }, description: { type: 'string' }, inputSchema: { type: 'object', additionalProperties: true } },
};

const mcpDescriptor: Json = {
  type: 'object',
  required: ['name', 'endpoint', 'transport', 'protocolVersion', 'tools'],
  properties: {
    name: { type: 'string' },
    title: { type: 'string' },
    version: { type: 'string' },
    description: { type: 'string' },
    transport: { type: 'string', enum: ['streamable-http'] },
    protocolVersion: { type: 'string' },
    supportedProtocolVersions: { type: 'array', items: { type: 'string', enum: [...SUPPORTED_PROTOCOL_VERSIONS] } },
    auth: { type: 'string' },
    endpoint: { type: 'string', format: 'uri' },
    methods: { type: 'array', items: { type: 'string' } },
    rateLimit: { type: 'string' },
    tools: { type: 'array', items: ref('McpTool') },
  },
};

const oauthMetadataSchema: Json = {
  type: 'object',
  description: 'RFC 8414 authorization-server metadata.',
  required: ['issuer', 'authorization_endpoint', 'token_endpoint', 'response_types_supported'],
  properties: {
    issuer: { type: 'string', format: 'uri' },
    authorization_endpoint: { type: 'string', format: 'uri' },
    token_endpoint: { type: 'string', format: 'uri' },
    registration_endpoint: { type: 'string', format: 'uri' },
    revocation_endpoint: { type: 'string', format: 'uri' },
    jwks_uri: { type: 'string', format: 'uri' },
    response_types_supported: { type: 'array', items: { type: 'string' } },
    code_challenge_methods_supported: { type: 'array', items: { type: 'string' } },
    scopes_supported: { type: 'array', items: { type: 'string' } },
  },
};

const linkTarget: Json = { type: 'object', required: ['href'], properties: { href: { type: 'string', format: 'uri' }, type: { type: 'string' }, title: { type: 'string' } } };
const linksetSchema: Json = {
  type: 'object',
  description: 'RFC 9264 linkset (JSON), as profiled by RFC 9727 for API catalogs.',
  required: ['linkset'],
  properties: {
    linkset: {
      type: 'array',
      items: { type: 'object', required: ['anchor'], properties: { anchor: { type: 'string', format: 'uri' } }, additionalProperties: { type: 'array', items: ref('LinkTarget') } },
    },
  },
};

const serverJsonSchema: Json = {
  type: 'object',
  description: "The MCP registry's server.json: this service's MCP endpoints as remotes.",
  required: ['name', 'description', 'version', 'remotes'],
  properties: {
    $schema: { type: 'string', format: 'uri' },
    name: { type: 'string' },
    title: { type: 'string' },
    description: { type: 'string' },
    version: { type: 'string' },
    websiteUrl: { type: 'string', format: 'uri' },
    remotes: { type: 'array', items: { type: 'object', required: ['type', 'url'], properties: { type: { type: 'string' }, url: { type: 'string' } } } },
    _meta: { type: 'object', additionalProperties: true },
  },
};

const agentsSchema: Json = {
  type: 'object',
  description: 'Agent and MCP discovery manifest.',
  required: ['name', 'url', 'documentation', 'mcp'],
  properties: {
    schemaVersion: { type: 'string' },
    name: { type: 'string' },
    description: { type: 'string' },
    url: { type: 'string', format: 'uri' },
    documentation: { type: 'object', additionalProperties: { type: 'string', format: 'uri' } },
    mcp: {
      type: 'object',
      required: ['servers'],
      properties: {
        servers: {
          type: 'array',
          items: {
            type: 'object',
            required: ['name', 'url', 'transport', 'auth', 'tools'],
            properties: {
              name: { type: 'string' },
              url: { type: 'string', format: 'uri' },
              transport: { type: 'string' },
              auth: { type: 'object', required: ['type'], properties: { type: { type: 'string', enum: ['none', 'bearer'] } } },
              tools: { type: 'array', items: { type: 'object', required: ['name', 'description'], properties: { name: { type: 'string' }, description: { type: 'string' } } } },
            },
          },
        },
      },
    },
    auth: { type: 'object', additionalProperties: true },
  },
};

const sessionStatus: Json = {
  type: 'object',
  required: ['authenticated'],
  additionalProperties: true,
  properties: { authenticated: { type: 'boolean' } },
};

const standardErrors: Record<string, { status: number; description: string }> = {
  BadRequest: { status: 400, description: 'The request is malformed or a field is invalid; `message` names the field.' },
  Unauthorized: { status: 401, description: 'A valid identity-provider ID token is required.' },
  Forbidden: { status: 403, description: 'Signed in, but not allowed (for example not a member of the channel).' },
  NotFound: { status: 404, description: 'Nothing by that name or path.' },
  MethodNotAllowed: { status: 405, description: 'Wrong HTTP method; the Allow header lists the right ones.' },
  PayloadTooLarge: { status: 413, description: 'The body is too large.' },
  UnsupportedMediaType: { status: 415, description: 'The body must be JSON (Content-Type: application/json).' },
  RateLimited: { status: 429, description: 'Too many requests; wait for the Retry-After header.' },
  Internal: { status: 500, description: 'A failure on our side; quote the X-Request-Id.' },
  Unavailable: { status: 503, description: 'Temporarily unavailable; retry after the Retry-After header.' },
};

function errors(...names: (keyof typeof standardErrors)[]): Record<string, Json> {
  return Object.fromEntries(names.map((n) => [String(standardErrors[n]!.status), errorRef(n)]));
}

const noCache = { 'Cache-Control': { schema: { type: 'string' }, description: 'Discovery documents may be cached for a few minutes.' } };
const varyHeader = { Vary: { schema: { type: 'string', enum: ['Accept, Accept-Encoding'] }, description: 'HTML and markdown are cached apart.' } };

function discoveryOp(summary: string, description: string, contentType: string, schema: Json): Json {
  return {
    get: {
      tags: ['discovery'],
      summary,
      description,
      operationId: `get_${summary.replace(/[^A-Za-z0-9]+/g, '_').replace(/^_|_$/g, '').toLowerCase()}`,
      responses: { '200': { description: summary, headers: noCache, content: { [contentType]: { schema } } } },
    },
  };
}

/** The whole OpenAPI document for the site host. */
export function buildOpenApi(config: Config): Json {
  const site = config.siteUrl;
  return {
    openapi: OPENAPI_VERSION,
    info: {
      title: 'carecircle site API',
      version: SITE_API_VERSION,
      description: [
        'The public site of carecircle: discovery documents, the read-only directory MCP endpoint, markdown renderings of directory pages, newsletter sign-up, session helpers and community threads.',
        `Errors use one ApiError body with an upper-case code. The workspace MCP endpoint (${config.appUrl}/api/mcp), the sandbox endpoint (${config.appUrl}/api/mcp/public) and the partner ingest (${config.pipeUrl}/pipe/v1/events) live on other hosts: see ${site}/.well-known/api-catalog.`,
      ].join(' '),
    },
    servers: [{ url: site, description: 'The site host' }],
    externalDocs: { description: 'llms.txt: the index of this site for language models', url: `${site}/llms.txt` },
    tags: [
      { name: 'discovery', description: 'Machine-readable descriptions of every surface.' },
      { name: 'mcp', description: 'The public directory MCP endpoint (JSON-RPC 2.0 over Streamable HTTP, stateless).' },
      { name: 'markdown', description: 'Directory pages as markdown for agents.' },
      { name: 'newsletter', description: 'Newsletter sign-up.' },
      { name: 'session', description: 'Session helpers for the website (cookie cc_session).' },
      { name: 'community', description: 'Community threads per channel.' },
    ],
    paths: {
      '/openapi.json': discoveryOp('OpenAPI description', 'This document.', 'application/json', { type: 'object', required: ['openapi', 'info', 'paths'], additionalProperties: true }),
      '/agents.json': discoveryOp('Agent manifest', 'Agent and MCP discovery manifest: every MCP endpoint with its tools and authentication.', 'application/json', ref('AgentsManifest')),
      '/llms.txt': discoveryOp('llms.txt', 'Markdown index of the canonical pages, APIs and MCP endpoints.', 'text/markdown', { type: 'string' }),
      '/llms-full.txt': discoveryOp('llms-full.txt', 'Expanded index: every resource, channel, glossary term, API operation and MCP tool schema.', 'text/markdown', { type: 'string' }),
      '/.well-known/api-catalog': discoveryOp('API catalog', 'RFC 9727 API catalog: a linkset of every API with its description, documentation and metadata.', 'application/linkset+json', ref('Linkset')),
      '/.well-known/mcp/server.json': discoveryOp('MCP server metadata', "MCP registry server.json with a remote for each MCP endpoint.", 'application/json', ref('ServerJson')),
      '/.well-known/mcp.json': discoveryOp('MCP server metadata mirror', 'The same document as /.well-known/mcp/server.json.', 'application/json', ref('ServerJson')),
      '/.well-known/oauth-authorization-server': discoveryOp(
        'OAuth authorization server metadata',
        `RFC 8414 metadata of the authorization server; the issuer is ${config.authUrl}. The site host issues no tokens.`,
        'application/json',
        ref('OAuthAuthorizationServerMetadata'),
      ),
      '/api/mcp': {
        get: {
          tags: ['mcp'],
          summary: 'Describe the directory MCP endpoint',
          operationId: 'describe_directory_mcp',
          responses: { '200': { description: 'Endpoint description and tool list.', content: jsonContent(ref('McpDescriptor')) }, '405': { description: 'Only an event stream was acceptable; this endpoint does not stream.', content: jsonContent(ref('JsonRpcResponse')) } },
        },
        post: {
          tags: ['mcp'],
          summary: 'Send a JSON-RPC message',
          description: 'Methods: initialize, ping, tools/list, tools/call, notifications/initialized. No authentication.',
          operationId: 'call_directory_mcp',
          parameters: [{ name: 'MCP-Protocol-Version', in: 'header', required: false, schema: { type: 'string', enum: [...SUPPORTED_PROTOCOL_VERSIONS] } }],
          requestBody: { required: true, content: jsonContent({ oneOf: [ref('JsonRpcRequest'), { type: 'array', items: ref('JsonRpcRequest') }] }) },
          responses: {
            '200': { description: 'A JSON-RPC response (success or error), or an array for a batch.', content: jsonContent({ oneOf: [ref('JsonRpcResponse'), { type: 'array', items: ref('JsonRpcResponse') }] }) },
            '204': { description: 'The message was a notification (notifications/initialized).' },
            '400': { description: 'Not JSON (-32700) or not a JSON-RPC envelope (-32600).', content: jsonContent(ref('JsonRpcResponse')) },
            '403': { description: 'A browser Origin this endpoint does not serve.', content: jsonContent(ref('JsonRpcResponse')) },
            '413': { description: 'Body over 256 KB.', content: jsonContent(ref('JsonRpcResponse')) },
            '415': { description: 'Content-Type is not application/json.', content: jsonContent(ref('JsonRpcResponse')) },
            '429': { description: `More than ${config.rateDirectoryMcpPerMin} requests a minute from one address (-32029, Retry-After).`, content: jsonContent(ref('JsonRpcResponse')) },
            '503': { description: 'No worker answered in time (-32030, Retry-After).', content: jsonContent(ref('JsonRpcResponse')) },
          },
        },
      },
      '/api/md': {
        get: {
          tags: ['markdown'],
          summary: 'A directory page as markdown',
          description: 'Renders the page at `path` (with its query) from the same data as the HTML page. Pages also answer markdown directly when asked with `Accept: text/markdown`.',
          operationId: 'get_markdown',
          parameters: [
            { name: 'path', in: 'query', required: false, schema: { type: 'string', maxLength: 2048, example: '/resources/eldercare-locator' }, description: 'Site path to render, with its query. Default: the x-md-original-path header, else /.' },
            { name: 'x-md-original-path', in: 'header', required: false, schema: { type: 'string' }, description: 'The original path, when a proxy rewrote the request to /api/md.' },
            { name: 'Accept', in: 'header', required: false, schema: { type: 'string', example: 'text/markdown' } },
          ],
          responses: {
            '200': { description: 'The page as markdown.', headers: varyHeader, content: { 'text/markdown': { schema: { type: 'string' } } } },
            ...errors('BadRequest', 'NotFound', 'Internal'),
          },
        },
      },
      '/api/newsletter': {
        post: {
          tags: ['newsletter'],
          summary: 'Subscribe to the newsletter',
          description: `Idempotent per address: subscribing again answers 200 and says so. With mail configured, sign-up is double opt-in (a confirmation mail). ${config.rateNewsletterPerHour} sign-ups an hour per client address.`,
          operationId: 'subscribe_newsletter',
          requestBody: { required: true, content: jsonContent(ref('NewsletterRequest')) },
          responses: {
            '200': { description: 'Subscribed, confirmation sent, or already subscribed.', content: jsonContent(ref('NewsletterResponse')) },
            ...errors('BadRequest', 'MethodNotAllowed', 'PayloadTooLarge', 'UnsupportedMediaType', 'RateLimited', 'Internal', 'Unavailable'),
          },
        },
      },
      '/api/auth/me': {
        get: {
          tags: ['session'],
          summary: 'Who is signed in',
          description: 'Reads the session cookie. Without a valid session the answer is still 200, with `authenticated: false`.',
          operationId: 'get_session',
          security: [{}, { sessionCookie: [] }],
          responses: { '200': { description: 'The session state.', content: jsonContent(ref('SessionStatus')) } },
        },
      },
      '/api/auth/session': {
        post: {
          tags: ['session'],
          summary: 'Start a session from an ID token',
          description: 'Exchanges an identity-provider ID token for a session cookie (cc_session), or says that a token refresh is required.',
          operationId: 'create_session',
          requestBody: { required: true, content: jsonContent(ref('SessionRequest')) },
          responses: { '200': { description: 'A session cookie was set, or a refresh is required.', content: jsonContent({ type: 'object', additionalProperties: true }) }, ...errors('BadRequest', 'Unauthorized', 'RateLimited', 'Internal') },
        },
      },
      '/api/auth/signout': {
        post: {
          tags: ['session'],
          summary: 'Sign out',
          operationId: 'sign_out',
          responses: { '200': { description: 'The session cookie is cleared.', content: jsonContent({ type: 'object', additionalProperties: true }) } },
        },
      },
      '/api/community': {
        get: {
          tags: ['community'],
          summary: "List a channel's threads, or one thread with its comments",
          operationId: 'list_community',
          parameters: [
            { name: 'channel', in: 'query', required: true, schema: { type: 'string', example: 'dementia-and-alzheimers' }, description: 'Channel slug (see /channels).' },
            { name: 'threadId', in: 'query', required: false, schema: { type: 'string' }, description: 'Answer this thread with its comments instead of the list.' },
            { name: 'limit', in: 'query', required: false, schema: { type: 'integer', minimum: 1, maximum: PAGE_LIMIT_MAX, default: PAGE_LIMIT_DEFAULT } },
            { name: 'cursor', in: 'query', required: false, schema: { type: 'string' }, description: 'nextCursor of the previous page.' },
          ],
          responses: {
            '200': { description: 'Threads, most recently active first (or a thread and its comments, oldest first).', content: jsonContent({ oneOf: [ref('ThreadList'), ref('ThreadWithComments')] }) },
            ...errors('BadRequest', 'NotFound', 'Internal'),
          },
        },
        post: {
          tags: ['community'],
          summary: 'Join, leave, start a thread or comment',
          description: `join and leave are idempotent; thread and comment need membership. Bodies are plain text, stored as written and rendered escaped. ${config.rateCommunityWritesPerMin} writes a minute per user.`,
          operationId: 'community_action',
          security: [{ idToken: [] }],
          requestBody: { required: true, content: jsonContent(ref('CommunityAction')) },
          responses: {
            '200': { description: 'What the action did.', content: jsonContent(ref('CommunityActionResult')) },
            ...errors('BadRequest', 'Unauthorized', 'Forbidden', 'NotFound', 'PayloadTooLarge', 'UnsupportedMediaType', 'RateLimited', 'Internal'),
          },
        },
      },
    },
    components: {
      schemas: {
        ApiError: apiErrorSchema,
        JsonRpcRequest: jsonRpcRequest,
        JsonRpcResponse: jsonRpcResponse,
        McpTool: toolSchema,
        McpDescriptor: mcpDescriptor,
        NewsletterRequest: schemaOf(newsletterRequest, 'input'),
        NewsletterResponse: schemaOf(newsletterResponse),
        SessionRequest: { type: 'object', required: ['idToken'], properties: { idToken: { type: 'string', description: 'An identity-provider ID token of a signed-in user.' } } },
        SessionStatus: sessionStatus,
        CommunityAction: schemaOf(communityAction, 'input'),
        CommunityActionResult: schemaOf(communityActionResult),
        ThreadList: schemaOf(threadList),
        ThreadWithComments: schemaOf(threadWithComments),
        AgentsManifest: agentsSchema,
        Linkset: linksetSchema,
        LinkTarget: linkTarget,
        ServerJson: serverJsonSchema,
        OAuthAuthorizationServerMetadata: oauthMetadataSchema,
      },
      responses: Object.fromEntries(
        Object.entries(standardErrors).map(([name, e]) => [
          name,
          { description: e.description, content: jsonContent(ref('ApiError')), ...(e.status === 429 || e.status === 503 ? { headers: { 'Retry-After': { schema: { type: 'integer' } } } } : {}) },
        ]),
      ),
      securitySchemes: {
        idToken: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'An identity-provider ID token (Authorization: Bearer <ID token>).' },
        sessionCookie: { type: 'apiKey', in: 'cookie', name: 'cc_session', description: 'The session cookie set by POST /api/auth/session.' },
      },
    },
  };
}
