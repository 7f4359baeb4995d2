// What the site tells the world it serves, in one place: routes, MCP endpoints and their tools,
// and the authorization-server metadata. Every discovery document is built from this and from the
// code's own tool definitions, never from hand-kept copies.
import type { Config } from '../config.js';
import { SCOPES } from '../auth/scopes.js';
import { DEFAULT_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS, type PublicTool } from '../rpc/mcp.js';

/**
 * Tools of the MCP endpoints on the app host, as the site advertises them.
 *
 * The workspace slice (`{APP_URL}/api/mcp`) and the sandbox slice (`{APP_URL}/api/mcp/public`)
 * must keep their `tools/list` names equal to these, in this order: a change there is a change
 * here. (The directory endpoint needs no such list: its tools come from `directoryTools()`.)
 */
export const APP_MCP_TOOLS = {
  workspace: [
    { name: 'ping', description: 'Liveness check that names the verified caller: uid, tenant and how it authenticated. No side effects.' },
    { name: 'get_user_profile', description: "The caller's uid, email and tenant type; for family users also the workspace name and family-member count. Scope profile:read." },
    { name: 'list_loved_ones', description: "Loved ones (ids and names) on the caller's family workspace. Scope care_circle:read; family tenant only." },
    {
      name: 'list_care_events',
      description: 'Recent care events (visits, notes, medications, vitals, inbox mail) for one loved one (lovedOneId) or across the workspace; limit 1-50 per loved one, default 20. Scope care_circle:read.',
    },
  ],
  sandbox: [
    {
      name: 'start_family_care_workspace',
      description:
        'Create a sandbox family workspace without signing in: a loved-one record, a live family inbox address and invite drafts (never emailed). sandbox must be true; a person claims it later by signing in with primaryCaregiverEmail.',
    },
  ],
} as const;

export type McpEndpointId = 'directory' | 'workspace' | 'sandbox';

export interface McpEndpointInfo {
  id: McpEndpointId;
  name: string;
  title: string;
  url: string;
  description: string;
  auth: 'none' | 'bearer';
  authDescription: string;
  transport: 'streamable-http';
  protocolVersion: string;
  supportedProtocolVersions: readonly string[];
  tools: { name: string; description: string }[];
}

/** The three MCP endpoints, their URLs from configuration and their tools from code. */
export function mcpEndpoints(config: Config, directoryTools: readonly PublicTool[]): McpEndpointInfo[] {
  const common = { transport: 'streamable-http', protocolVersion: DEFAULT_PROTOCOL_VERSION, supportedProtocolVersions: SUPPORTED_PROTOCOL_VERSIONS } as const;
  return [
    {
      id: 'directory',
      name: 'carecircle-directory',
      title: 'Care-resource directory',
      url: `${config.siteUrl}/api/mcp`,
      description: 'Public, read-only: search national US caregiver resources, read community channels, estimate long-term-care costs.',
      auth: 'none',
      authDescription: 'None.',
      ...common,
      tools: directoryTools.map((t) => ({ name: t.name, description: t.description })),
    },
    {
      id: 'workspace',
      name: 'carecircle-workspace',
      title: 'Family care workspace',
      url: `${config.appUrl}/api/mcp`,
      description: "Authenticated, stateless, read-only access to the caregiver's own family workspace.",
      auth: 'bearer',
      authDescription: `Authorization: Bearer <API key sk-svc-…> (minted in Settings → MCP API keys at ${config.appUrl}) or an OAuth access token from ${config.authUrl}.`,
      ...common,
      tools: APP_MCP_TOOLS.workspace.map((t) => ({ ...t })),
    },
    {
      id: 'sandbox',
      name: 'carecircle-sandbox',
      title: 'Sandbox workspace starter',
      url: `${config.appUrl}/api/mcp/public`,
      description: 'Unauthenticated: an evaluator agent creates a sandbox family workspace that a person claims later by signing in.',
      auth: 'none',
      authDescription: 'None; rate-limited per client address.',
      ...common,
      tools: APP_MCP_TOOLS.sandbox.map((t) => ({ ...t })),
    },
  ];
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
    service_documentation: `${config.siteUrl}/llms.txt`,
  };
}

/** Discovery documents served by the site, by path. */
export const DISCOVERY_PATHS = [
  '/openapi.json',
  '/agents.json',
  '/llms.txt',
  '/llms-full.txt',
  '/.well-known/api-catalog',
  '/.well-known/mcp/server.json',
  '/.well-known/mcp.json',
  '/.well-known/oauth-authorization-server',
] as const;

/** Server-rendered pages (and their assets), as gateway route patterns. */
export const PAGE_ROUTES = [
  '/',
  '/resources',
  '/resources/:id',
  '/channels',
  '/channels/:slug',
  '/channels/:slug/threads/:threadId',
  '/calculator',
  '/glossary',
  '/styles.css',
  '/favicon.svg',
] as const;

/** Pages behind the links in newsletter mail (served by the newsletter slice). */
export const NEWSLETTER_PAGE_ROUTES = ['/newsletter/confirm', '/newsletter/unsubscribe'] as const;

/** The canonical pages an agent should know about, for llms.txt. */
export const CANONICAL_PAGES: readonly { path: string; title: string; about: string }[] = [
  { path: '/', title: 'Home', about: 'what carecircle offers and where to start' },
  { path: '/resources', title: 'Care resources', about: 'search national US resources for family caregivers (q, category, state)' },
  { path: '/channels', title: 'Community channels', about: 'peer channels by situation, each with its threads' },
  { path: '/calculator', title: 'Long-term-care cost calculator', about: 'monthly, annual and multi-year cost from survey medians' },
  { path: '/glossary', title: 'Care-planning glossary', about: 'plain-language definitions of Medicare, Medicaid, legal and care terms' },
];
