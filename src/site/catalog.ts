// What the site tells the world it serves: the MCP endpoints the slices declare, the OAuth
// metadata and the canonical pages. Every discovery document is built from this and from the
// slice manifests, never from hand-kept copies.
import type { Config } from '../config.js';
import { SCOPES } from '../auth/scopes.js';
import { CURRENT_PROTOCOL_VERSION, DEFAULT_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS } from '../rpc/mcp.js';
import { SANDBOX_ENDPOINT } from '../sandbox/endpoint.js';
import type { McpEndpointSpec, SliceManifest } from '../slice/contract.js';
import { WORKSPACE_ENDPOINT } from '../workspace/endpoint.js';

/** Tools of the MCP endpoints on the app host, from their declarations (the tests compare them with tools/list). */
export const APP_MCP_TOOLS = { workspace: WORKSPACE_ENDPOINT.tools, sandbox: SANDBOX_ENDPOINT.tools } as const;

export type McpEndpointId = McpEndpointSpec['id'];

export interface McpEndpointInfo {
  id: McpEndpointId;
  name: string;
  title: string;
  url: string;
  description: string;
  auth: 'none' | 'bearer';
  authDescription: string;
  transport: 'streamable-http';
  /** The current revision (2026-07-28: stateless, per-request `_meta`). */
  protocolVersion: string;
  /** Newest first: the current revision, then the 2025 revisions negotiated through `initialize`. */
  supportedProtocolVersions: readonly string[];
  /** What a request naming no version is taken to speak (SPEC). */
  defaultProtocolVersion: string;
  tools: { name: string; description: string }[];
  /** Prompts and resource templates, as the endpoint declares them (none on most). */
  prompts: { name: string; title: string; description: string }[];
  resourceTemplates: { uriTemplate: string; title: string; description: string }[];
}

/** Every MCP endpoint the slices declare, with URLs from configuration. */
export function mcpEndpoints(config: Config, slices: readonly SliceManifest[]): McpEndpointInfo[] {
  return slices.flatMap((slice) =>
    (slice.mcp ?? []).map((e) => ({
      id: e.id,
      name: e.name,
      title: e.title,
      url: e.url(config),
      description: e.summary,
      auth: e.auth,
      authDescription: e.authDescription(config),
      transport: 'streamable-http' as const,
      protocolVersion: CURRENT_PROTOCOL_VERSION,
      supportedProtocolVersions: [...SUPPORTED_PROTOCOL_VERSIONS].reverse(),
      defaultProtocolVersion: DEFAULT_PROTOCOL_VERSION,
      tools: e.tools.map((t) => ({ name: t.name, description: t.description })),
      prompts: (e.prompts ?? []).map((p) => ({ name: p.name, title: p.title, description: p.description })),
      resourceTemplates: (e.resourceTemplates ?? []).map((r) => ({ uriTemplate: r.uriTemplate, title: r.title, description: r.description })),
    })),
  );
}

/** The OAuth scopes: the workspace endpoint's own list, so the two cannot drift. */
export const OAUTH_SCOPES = SCOPES;

/** RFC 8414 metadata of the authorization server at AUTH_URL (the site host issues no tokens). */
export function oauthAuthorizationServerMetadata(config: Config) {
  const issuer = config.authUrl;
  return {
    issuer,
    authorization_endpoint: `${issuer}/oauth/authorize`,
    token_endpoint: `${issuer}/oauth/token`,
    registration_endpoint: `${issuer}/oauth/register`,
    revocation_endpoint: `${issuer}/oauth/revoke`,
    jwks_uri: `${issuer}/.well-known/jwks.json`,
    scopes_supported: [...OAUTH_SCOPES],
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    authorization_response_iss_parameter_supported: true,
    grant_types_supported: ['authorization_code', 'refresh_token'],
    code_challenge_methods_supported: ['S256'],
    token_endpoint_auth_methods_supported: ['none'],
    revocation_endpoint_auth_methods_supported: ['none'],
    client_id_metadata_document_supported: true,
    service_documentation: `${config.siteUrl}/llms.txt`,
  };
}

/** The canonical pages an agent should know about, for llms.txt. */
export const CANONICAL_PAGES: readonly { path: string; title: string; about: string }[] = [
  { path: '/', title: 'Home', about: 'what carecircle offers and where to start' },
  { path: '/resources', title: 'Care resources', about: 'search national US resources for family caregivers (q, category, state)' },
  { path: '/channels', title: 'Community channels', about: 'peer channels by situation, each with its threads' },
  { path: '/calculator', title: 'Long-term-care cost calculator', about: 'monthly, annual and multi-year cost from survey medians' },
  { path: '/glossary', title: 'Care-planning glossary', about: 'plain-language definitions of Medicare, Medicaid, legal and care terms' },
];
