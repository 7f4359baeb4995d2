// The public site's routes: discovery documents, pages and their markdown, declared once with the
// OpenAPI operations the site's description is built from.
import { errors, ref, type Json } from '../http/openapi.js';
import type { Config } from '../config.js';
import { defineRoutes, type RouteSpec } from '../slice/contract.js';
import { perMinute } from '../limits/limiter.js';

const noCache = { 'Cache-Control': { schema: { type: 'string' }, description: 'Discovery documents may be cached for a few minutes.' } };
const varyHeader = { Vary: { schema: { type: 'string', enum: ['Accept, Accept-Encoding'] }, description: 'HTML and markdown are cached apart.' } };

/**
 * What /api/md renders: a path on this site (from /), or an absolute URL of it. A URL parser reads
 * `//host` and `/\host` as another origin and drops tabs and line breaks (so `/\t/host` is `//host`),
 * hence no second slash or backslash after the first and no control characters at all. The pattern is
 * both the OpenAPI document's rule and the server's check (with the `u` flag, as JSON Schema reads it).
 */
export const onSitePattern = (siteUrl: string): string => `^(?=[^\\x00-\\x1f\\x7f]*$)(/(?![/\\\\])|${siteUrl.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(/|$))`;

/** A discovery document: readable from any origin, revalidated by ETag. */

function discoveryDoc(path: string, summary: string, description: string | ((config: Config) => string), contentType: string, schema: Json): RouteSpec {
  return {
    hosts: ['site'],
    path,
    methods: ['GET'],
    cors: 'public-read',
    forwardHeaders: ['if-none-match'],
    openapi: ({ config }) => ({
      get: {
        tags: ['discovery'],
        summary,
        description: typeof description === 'string' ? description : description(config),
        operationId: `get_${summary
          .replace(/[^A-Za-z0-9]+/g, '_')
          .replace(/^_|_$/g, '')
          .toLowerCase()}`,
        responses: { '200': { description: summary, headers: noCache, content: { [contentType]: { schema } } } },
      },
    }),
  };
}

/** Server-rendered pages: HTML, or markdown when asked for it. */
const page = (path: string | readonly string[]): RouteSpec => ({ hosts: ['site'], path, methods: ['GET'], forwardHeaders: ['accept', 'if-none-match'] });

export const SITE_ROUTES = defineRoutes({
  openapiJson: discoveryDoc('/openapi.json', 'OpenAPI description', 'This document.', 'application/json', {
    type: 'object',
    required: ['openapi', 'info', 'paths'],
    additionalProperties: true,
  }),
  agentsJson: discoveryDoc(
    '/agents.json',
    'Agent manifest',
    'Agent and MCP discovery manifest: every MCP endpoint with its tools and authentication.',
    'application/json',
    ref('AgentsManifest'),
  ),
  llmsTxt: discoveryDoc('/llms.txt', 'llms.txt', 'Markdown index of the canonical pages, APIs and MCP endpoints.', 'text/markdown', { type: 'string' }),
  llmsFullTxt: discoveryDoc(
    '/llms-full.txt',
    'llms-full.txt',
    'Expanded index: every resource, channel, glossary term, API operation and MCP tool schema.',
    'text/markdown',
    { type: 'string' },
  ),
  apiCatalog: discoveryDoc(
    '/.well-known/api-catalog',
    'API catalog',
    'RFC 9727 API catalog: a linkset of every API with its description, documentation and metadata.',
    'application/linkset+json',
    ref('Linkset'),
  ),
  serverJson: discoveryDoc(
    '/.well-known/mcp/server.json',
    'MCP server metadata',
    'MCP registry server.json with a remote for each MCP endpoint.',
    'application/json',
    ref('ServerJson'),
  ),
  mcpJson: discoveryDoc(
    '/.well-known/mcp.json',
    'MCP server metadata mirror',
    'The same document as /.well-known/mcp/server.json.',
    'application/json',
    ref('ServerJson'),
  ),
  oauthMetadata: discoveryDoc(
    '/.well-known/oauth-authorization-server',
    'OAuth authorization server metadata',
    (config) => `RFC 8414 metadata of the authorization server; the issuer is ${config.authUrl}. The site host issues no tokens.`,
    'application/json',
    ref('OAuthAuthorizationServerMetadata'),
  ),
  markdown: {
    hosts: ['site'],
    path: '/api/md',
    methods: ['GET'],
    cors: 'public-read',
    forwardHeaders: ['accept', 'x-md-original-path', 'if-none-match'],
    openapi: ({ config }) => ({
      get: {
        tags: ['markdown'],
        summary: 'A directory page as markdown',
        description:
          'Renders the page at `path` (with its query) from the same data as the HTML page. Pages also answer markdown directly when asked with `Accept: text/markdown`.',
        operationId: 'get_markdown',
        parameters: [
          {
            name: 'path',
            in: 'query',
            required: false,
            schema: { type: 'string', maxLength: 2048, pattern: onSitePattern(config.siteUrl), example: '/resources/eldercare-locator' },
            description: 'Site path to render, with its query: starting with / (or with SITE_URL). Default: the x-md-original-path header, else /.',
          },
          {
            name: 'x-md-original-path',
            in: 'header',
            required: false,
            // The gateway drops an empty header, so an empty value reads as no header at all.
            schema: { type: 'string', maxLength: 2048, pattern: `^$|${onSitePattern(config.siteUrl)}` },
            description: 'The original path, when a proxy rewrote the request to /api/md; the same rule as `path`. An empty value counts as absent.',
          },
          { name: 'Accept', in: 'header', required: false, schema: { type: 'string', example: 'text/markdown' } },
        ],
        responses: {
          '200': { description: 'The page as markdown.', headers: varyHeader, content: { 'text/markdown': { schema: { type: 'string' } } } },
          ...errors('BadRequest', 'NotFound', 'Internal'),
        },
      },
    }),
  },
  styles: page('/styles.css'),
  favicon: page('/favicon.svg'),
  pages: page(['/', '/resources', '/resources/:id', '/calculator', '/glossary']),
  /** Channel pages show the signed-in reader what they can do there, so they read the session cookie. */
  communityPages: {
    hosts: ['site'],
    path: ['/channels', '/channels/:slug', '/channels/:slug/threads/:threadId'],
    methods: ['GET'],
    forwardHeaders: ['accept', 'if-none-match', 'cookie'],
  },
  /** The channel pages' forms (join, leave, thread, reply) as the person signed in. */
  communityForms: {
    hosts: ['site'],
    path: '/channels/:slug/actions',
    methods: ['POST'],
    bodyLimit: 32 * 1024,
    rate: { bucket: 'community-forms', by: 'ip', policy: (config) => perMinute(Math.max(60, config.rateCommunityWritesPerMin * 2)) },
    // Cookie-authenticated changes come only from the site's own pages (CSRF defence).
    sameOrigin: { from: ['site'], hint: (origins) => `Forms are accepted only from pages on ${origins}.` },
    forwardHeaders: ['cookie', 'origin'],
  },
});
