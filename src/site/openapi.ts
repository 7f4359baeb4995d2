// The site API's OpenAPI 3.0.3 description, assembled from the operations every slice declares
// beside its site routes, so the document and the service cannot disagree.
import { maxHeaderSize } from 'node:http';
import type { Config } from '../config.js';
import { API_ERROR_CODES } from '../http/apiError.js';
import { PARTNER_PAYLOADS } from '../family/careEventTypes.js';
import { jsonContent, openApiKit, ref, schemaOf, STANDARD_ERRORS, type Json } from '../http/openapi.js';
import { SUPPORTED_PROTOCOL_VERSIONS } from '../rpc/mcp.js';
import { pathsOf, type SliceManifest } from '../slice/contract.js';

export const OPENAPI_VERSION = '3.0.3';
/** The version of the site API description (SPEC: Versioning). */
export const SITE_API_VERSION = '1.0.0';

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
  properties: {
    jsonrpc: { type: 'string', enum: ['2.0'] },
    id: rpcId,
    method: { type: 'string', minLength: 1 },
    params: { type: 'object', additionalProperties: true },
  },
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
  properties: {
    name: { type: 'string' },
    title: { type: 'string' },
    description: { type: 'string' },
    inputSchema: { type: 'object', additionalProperties: true },
  },
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
    currentProtocolVersion: { type: 'string', enum: [...SUPPORTED_PROTOCOL_VERSIONS] },
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

const linkTarget: Json = {
  type: 'object',
  required: ['href'],
  properties: { href: { type: 'string', format: 'uri' }, type: { type: 'string' }, title: { type: 'string' } },
};
const linksetSchema: Json = {
  type: 'object',
  description: 'RFC 9264 linkset (JSON), as profiled by RFC 9727 for API catalogs.',
  required: ['linkset'],
  properties: {
    linkset: {
      type: 'array',
      items: {
        type: 'object',
        required: ['anchor'],
        properties: { anchor: { type: 'string', format: 'uri' } },
        additionalProperties: { type: 'array', items: ref('LinkTarget') },
      },
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
              tools: {
                type: 'array',
                items: { type: 'object', required: ['name', 'description'], properties: { name: { type: 'string' }, description: { type: 'string' } } },
              },
            },
          },
        },
      },
    },
    auth: { type: 'object', additionalProperties: true },
  },
};

/** The payload of each care event a partner sends the ingest (on the pipe host), from the catalogue:
 *  `MedAdministeredPayload` for `med_administered`, and so on. */
function partnerPayloads(): Record<string, Json> {
  return Object.fromEntries(
    Object.entries(PARTNER_PAYLOADS).map(([type, schema]) => [
      `${type.replace(/(^|_)([a-z])/g, (_m, _s: string, c: string) => c.toUpperCase())}Payload`,
      { ...schemaOf(schema, 'input'), description: `The payload of a \`${type}\` event sent to the partner ingest (docs/partners.md). Other fields are kept.` },
    ]),
  );
}

/** The whole OpenAPI document for the site host. */
export function buildOpenApi(config: Config, slices: readonly SliceManifest[]): Json {
  const site = config.siteUrl;
  // Koa-router patterns (`/channels/:slug`) become OpenAPI templates (`/channels/{slug}`).
  const components: Record<string, Json> = {};
  const kit = openApiKit(config, components);
  const paths: Record<string, Json> = {};
  for (const slice of slices)
    for (const route of Object.values(slice.routes ?? {}))
      if (route.hosts.includes('site') && route.openapi)
        for (const path of pathsOf(route)) paths[path.replace(/:([A-Za-z_]+)/g, '{$1}')] = { ...paths[path], ...route.openapi(kit) };
  // Any request can be too long for the HTTP server, before any route reads it.
  for (const item of Object.values(paths))
    for (const operation of Object.values(item) as { responses?: Record<string, Json> }[])
      if (operation.responses) operation.responses['431'] ??= { $ref: '#/components/responses/HeaderFieldsTooLarge' };
  return {
    openapi: OPENAPI_VERSION,
    info: {
      title: 'carecircle site API',
      version: SITE_API_VERSION,
      description: [
        'The public site of carecircle: discovery documents, the read-only directory MCP endpoint, markdown renderings of directory pages, newsletter sign-up, session helpers and community threads.',
        `Errors use one ApiError body with an upper-case code. The workspace MCP endpoint (${config.appUrl}/api/mcp), the sandbox endpoint (${config.appUrl}/api/mcp/public) and the partner ingest (${config.pipeUrl}/pipe/v1/events) live on other hosts: see ${site}/.well-known/api-catalog. The payloads of the care events partners send the ingest are the components named *Payload.`,
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
    paths,
    components: {
      schemas: {
        ApiError: apiErrorSchema,
        JsonRpcRequest: jsonRpcRequest,
        JsonRpcResponse: jsonRpcResponse,
        McpTool: toolSchema,
        McpDescriptor: mcpDescriptor,
        ...components,
        AgentsManifest: agentsSchema,
        Linkset: linksetSchema,
        LinkTarget: linkTarget,
        ServerJson: serverJsonSchema,
        ...partnerPayloads(),
        OAuthAuthorizationServerMetadata: oauthMetadataSchema,
      },
      responses: {
        ...Object.fromEntries(
          Object.entries(STANDARD_ERRORS).map(([name, e]) => [
            name,
            {
              description: e.description,
              content: jsonContent(ref('ApiError')),
              ...(e.status === 429 || e.status === 503 ? { headers: { 'Retry-After': { schema: { type: 'integer' } } } } : {}),
            },
          ]),
        ),
        HeaderFieldsTooLarge: {
          description: `The request line and headers together exceed ${maxHeaderSize / 1024} KB (an over-long URL, say): refused by the HTTP server before any route, with no body and the connection closed.`,
        },
      },
      securitySchemes: {
        idToken: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'An identity-provider ID token (Authorization: Bearer <ID token>).' },
        sessionCookie: { type: 'apiKey', in: 'cookie', name: 'cc_session', description: 'The session cookie set by POST /api/auth/session.' },
      },
    },
  };
}
