// The discovery documents (agents.json, llms.txt, llms-full.txt, the RFC 9727 API catalog and the
// MCP registry's server.json), built once per worker from configuration, the catalog and the
// directory's own tool definitions.
import type { Config } from '../config.js';
import type { PublicTool } from '../rpc/mcp.js';
import type { DirectoryDeps } from '../directory/tools.js';
import { INGEST_ROUTES } from '../ingest/routes.js';
import { pathsOf, type RouteSpec, type SliceManifest } from '../slice/contract.js';
import { VERSION } from '../version.js';
import { CANONICAL_PAGES, mcpEndpoints, OAUTH_SCOPES, type McpEndpointInfo } from './catalog.js';
import { escapeMarkdown } from './doc.js';
import { SITE_ROUTES } from './routes.js';
import { CATEGORY_LABELS } from './pages/resources.js';

export const SERVER_JSON_SCHEMA_URL = 'https://static.modelcontextprotocol.io/schemas/2025-09-29/server.schema.json';
export const API_CATALOG_PROFILE = 'https://www.rfc-editor.org/info/rfc9727';
export const LINKSET_TYPE = `application/linkset+json; profile="${API_CATALOG_PROFILE}"`;

export interface DiscoveryInput {
  config: Config;
  slices: readonly SliceManifest[];
  directory: DirectoryDeps;
  directoryTools: readonly PublicTool[];
  openapi: Record<string, unknown>;
}

type Json = Record<string, unknown>;

/** The URL of a declared route (its first path) on a host. */
const at = (base: string, route: RouteSpec) => `${base}${pathsOf(route)[0]}`;

/** Every URL the documents name, from the route declarations. */
function urls(config: Config) {
  const s = config.siteUrl;
  const r = SITE_ROUTES;
  return {
    openapi: at(s, r.openapiJson),
    agents: at(s, r.agentsJson),
    llms: at(s, r.llmsTxt),
    llmsFull: at(s, r.llmsFullTxt),
    apiCatalog: at(s, r.apiCatalog),
    serverJson: at(s, r.serverJson),
    mcpJson: at(s, r.mcpJson),
    oauthMetadata: at(s, r.oauthMetadata),
    markdown: at(s, r.markdown),
    ingest: at(config.pipeUrl, INGEST_ROUTES.pipeV1Events),
  };
}

const INGEST_SUMMARY =
  'Partner ingest: agencies POST HMAC-SHA256-signed care events (visit_started, visit_ended, note_added, med_administered, vital_recorded) with X-Pipe-Institution, X-Pipe-Signature (sha256=<hex>) and X-Pipe-Timestamp; 202 with event_id. Push only; partners are onboarded with a signed agreement.';

/** `io.github.user/server`-style name: the site's host reversed, then the product. */
export function registryName(siteUrl: string): string {
  const host = new URL(siteUrl).hostname.replace(/[^a-zA-Z0-9.-]/g, '');
  return `${host.split('.').reverse().join('.')}/carecircle`;
}

function endpointAuth(e: McpEndpointInfo, config: Config): Json {
  if (e.auth === 'none') return { type: 'none', description: e.authDescription };
  return {
    type: 'bearer',
    description: e.authDescription,
    apiKey: { header: 'Authorization', format: 'Bearer sk-svc-<64 hex characters>', obtain: `${config.appUrl}/settings` },
    oauth: { issuer: config.authUrl, metadata: `${config.siteUrl}/.well-known/oauth-authorization-server`, scopes: [...OAUTH_SCOPES], pkce: 'S256' },
  };
}

export function agentsJson(input: DiscoveryInput): Json {
  const { config } = input;
  const u = urls(config);
  return {
    schemaVersion: '1.0',
    name: 'carecircle',
    description:
      'Family care coordination for people who look after an older relative, with a public care-resource directory, community channels and a long-term-care cost calculator.',
    url: config.siteUrl,
    documentation: {
      llms: u.llms,
      llmsFull: u.llmsFull,
      openapi: u.openapi,
      apiCatalog: u.apiCatalog,
      mcpServerJson: u.serverJson,
      markdown: `${u.markdown}?path=/`,
    },
    api: { openapi: u.openapi, baseUrl: config.siteUrl, errors: 'ApiError: {error: {code, message, hint}, code, message, hint} with an upper-case code' },
    mcp: {
      servers: mcpEndpoints(config, input.slices).map((e) => ({
        name: e.name,
        title: e.title,
        description: e.description,
        url: e.url,
        transport: e.transport,
        protocolVersion: e.protocolVersion,
        supportedProtocolVersions: e.supportedProtocolVersions,
        defaultProtocolVersion: e.defaultProtocolVersion,
        auth: endpointAuth(e, config),
        tools: e.tools,
        ...(e.prompts.length ? { prompts: e.prompts } : {}),
        ...(e.resourceTemplates.length ? { resourceTemplates: e.resourceTemplates } : {}),
      })),
    },
    auth: {
      oauth: {
        issuer: config.authUrl,
        metadata: u.oauthMetadata,
        scopes: [...OAUTH_SCOPES],
        grant: 'authorization_code with PKCE (S256); dynamic client registration',
      },
      apiKey: { format: 'sk-svc-<64 hex characters>', header: 'Authorization: Bearer <API key>', mint: `${config.appUrl}/settings` },
      community: 'POST /api/community takes Authorization: Bearer <identity-provider ID token>.',
    },
    partnerIngest: { url: u.ingest, description: INGEST_SUMMARY },
  };
}

function toolLines(e: McpEndpointInfo): string[] {
  return [
    ...e.tools.map((t) => `- \`${t.name}\`: ${escapeMarkdown(t.description)}`),
    ...e.prompts.map((p) => `\nPrompt \`${p.name}\` (${escapeMarkdown(p.title)}): ${escapeMarkdown(p.description)}`),
    ...e.resourceTemplates.map((r) => `\nResource \`${r.uriTemplate}\` (${escapeMarkdown(r.title)}): ${escapeMarkdown(r.description)}`),
  ];
}

function endpointSection(e: McpEndpointInfo): string[] {
  return [
    `### ${e.title}`,
    '',
    `Endpoint: ${e.url} (MCP ${e.protocolVersion}, the current revision, without initialize; also ${e.supportedProtocolVersions.slice(1).join(', ')} through initialize; Streamable HTTP, JSON responses). Authentication: ${escapeMarkdown(e.authDescription)}`,
    '',
    ...toolLines(e),
    '',
  ];
}

export function llmsTxt(input: DiscoveryInput): string {
  const { config } = input;
  const u = urls(config);
  const s = config.siteUrl;
  return [
    '# carecircle',
    '',
    '> Family care coordination for people who look after an older relative: a public care-resource directory with community channels and a long-term-care cost calculator, family workspaces that AI assistants can read over MCP, and a signed ingest for home-care agencies.',
    '',
    `Reading is public. Every page below is also markdown: request it with \`Accept: text/markdown\`, or as ${u.markdown}?path=<path>. Machine-readable descriptions: [API catalog](${u.apiCatalog}) (RFC 9727), [OpenAPI](${u.openapi}), [agents.json](${u.agents}).`,
    '',
    '## Directory pages',
    '',
    ...CANONICAL_PAGES.map((p) => `- [${p.title}](${s}${p.path === '/' ? '/' : p.path}): ${p.about}`),
    '',
    '## MCP endpoints',
    '',
    ...mcpEndpoints(config, input.slices).flatMap(endpointSection),
    '## APIs',
    '',
    `- [OpenAPI description](${u.openapi}): the site API (markdown, newsletter, session helpers, community threads); errors are ApiError bodies with an upper-case code`,
    `- [API catalog](${u.apiCatalog}): every API of carecircle with its description and documentation`,
    `- [Agent manifest](${u.agents}): MCP endpoints, tools and authentication in one JSON document`,
    `- [MCP server metadata](${u.serverJson}): the MCP registry's server.json, one remote per endpoint`,
    `- [OAuth authorization server metadata](${u.oauthMetadata}): issuer ${config.authUrl}; authorization code with PKCE, dynamic client registration`,
    `- Partner ingest at ${u.ingest}: HMAC-signed care events from agencies`,
    '',
    '## Optional',
    '',
    `- [llms-full.txt](${u.llmsFull}): every resource, channel and glossary term, every API operation and every tool's argument schema`,
    '',
  ].join('\n');
}

export function llmsFullTxt(input: DiscoveryInput): string {
  const { config, directory } = input;
  const s = config.siteUrl;
  const u = urls(config);
  const lines: string[] = [llmsTxt(input).trimEnd(), '', '## Site API operations', ''];
  const paths = (input.openapi.paths ?? {}) as Record<string, Record<string, { summary?: string }>>;
  for (const [path, ops] of Object.entries(paths))
    for (const [method, op] of Object.entries(ops)) lines.push(`- \`${method.toUpperCase()} ${path}\`: ${escapeMarkdown(op.summary ?? '')}`);
  lines.push('', '## Tool argument schemas', '');
  for (const e of mcpEndpoints(config, input.slices).filter((x) => x.id === 'directory'))
    for (const t of input.directoryTools)
      lines.push(`### ${t.name} (${e.url})`, '', escapeMarkdown(t.description), '', '```json', JSON.stringify(t.inputSchema, null, 2), '```', '');
  lines.push(
    `The workspace and sandbox tools describe their arguments in \`tools/list\` on their endpoints.`,
    '',
    '## Partner ingest',
    '',
    `${INGEST_SUMMARY} Endpoint: ${u.ingest}.`,
    '',
    '## Care resources',
    '',
  );
  for (const r of directory.data.resources)
    lines.push(
      `- [${escapeMarkdown(r.name)}](${s}/resources/${r.id}) (${CATEGORY_LABELS[r.category]}${r.phone ? `; phone ${r.phone}` : ''}): ${escapeMarkdown(r.summary)}`,
    );
  lines.push('', '## Community channels', '');
  for (const c of directory.data.channels) lines.push(`- [${escapeMarkdown(c.name)}](${s}/channels/${c.slug}): ${escapeMarkdown(c.summary)}`);
  lines.push('', '## Glossary', '');
  for (const g of directory.data.glossary) lines.push(`- [${escapeMarkdown(g.term)}](${s}/glossary#${g.id}): ${escapeMarkdown(g.definition)}`);
  lines.push('');
  return lines.join('\n');
}

/** RFC 9727 API catalog as an RFC 9264 linkset: the catalog lists each API, and each API links its description, docs and metadata. */
export function apiCatalog(input: DiscoveryInput): Json {
  const { config } = input;
  const u = urls(config);
  const endpoints = mcpEndpoints(config, input.slices);
  const siteApi = `${config.siteUrl}/`;
  const apis: Json[] = [
    {
      anchor: siteApi,
      'service-desc': [{ href: u.openapi, type: 'application/vnd.oai.openapi+json;version=3.0', title: 'OpenAPI 3.0.3 description of the site API' }],
      'service-doc': [
        { href: u.llms, type: 'text/markdown', title: 'llms.txt' },
        { href: u.llmsFull, type: 'text/markdown', title: 'llms-full.txt' },
      ],
      'service-meta': [{ href: u.agents, type: 'application/json', title: 'Agent and MCP discovery manifest' }],
      status: [{ href: `${config.siteUrl}/readyz`, type: 'application/json' }],
    },
    ...endpoints.map((e) => ({
      anchor: e.url,
      'service-desc': [{ href: e.url, type: 'application/json', title: `${e.title}: MCP endpoint descriptor (GET)` }],
      'service-doc': [{ href: u.llms, type: 'text/markdown', title: 'llms.txt' }],
      'service-meta': [
        { href: u.serverJson, type: 'application/json', title: 'MCP registry server.json' },
        ...(e.auth === 'bearer' ? [{ href: u.oauthMetadata, type: 'application/json', title: 'OAuth authorization server metadata' }] : []),
      ],
    })),
    {
      anchor: u.ingest,
      'service-doc': [{ href: u.llmsFull, type: 'text/markdown', title: 'Partner ingest in llms-full.txt' }],
    },
    {
      anchor: config.authUrl,
      'service-meta': [{ href: u.oauthMetadata, type: 'application/json', title: 'OAuth 2.0 authorization server metadata (RFC 8414)' }],
    },
  ];
  return {
    linkset: [{ anchor: u.apiCatalog, item: apis.map((a) => ({ href: a.anchor as string })) }, ...apis],
  };
}

/** The MCP registry's server.json: one remote per MCP endpoint, tools in publisher-provided metadata. */
export function serverJson(input: DiscoveryInput): Json {
  const { config } = input;
  const endpoints = mcpEndpoints(config, input.slices);
  return {
    $schema: SERVER_JSON_SCHEMA_URL,
    name: registryName(config.siteUrl),
    title: 'carecircle',
    description: 'Care-resource directory, family care workspaces and sandbox onboarding for caregivers.',
    version: VERSION,
    websiteUrl: config.siteUrl,
    remotes: endpoints.map((e) =>
      e.auth === 'bearer'
        ? {
            type: 'streamable-http',
            url: e.url,
            headers: [
              {
                name: 'Authorization',
                description: 'Bearer <API key sk-svc-…> (Settings → MCP API keys) or an OAuth access token.',
                isRequired: true,
                isSecret: true,
                value: 'Bearer {api_key}',
                variables: { api_key: { description: 'An MCP API key (sk-svc-<64 hex>) or an OAuth access token.', isRequired: true, isSecret: true } },
              },
            ],
          }
        : { type: 'streamable-http', url: e.url },
    ),
    _meta: {
      'io.modelcontextprotocol.registry/publisher-provided': {
        endpoints: endpoints.map((e) => ({
          name: e.name,
          title: e.title,
          url: e.url,
          auth: e.auth,
          protocolVersion: e.protocolVersion,
          supportedProtocolVersions: e.supportedProtocolVersions,
          tools: e.tools.map((t) => t.name),
        })),
        oauthAuthorizationServer: config.authUrl,
        documentation: urls(config).llms,
      },
    },
  };
}
