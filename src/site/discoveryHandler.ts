// The worker handler behind the discovery documents. Each is rendered once per worker from
// configuration and code, then served with an ETag and a short public cache lifetime.
import type { HttpRequestEnvelope } from '../bus/envelopes.js';
import type { Config } from '../config.js';
import { createDirectoryServer } from '../directory/handler.js';
import type { DirectoryDeps } from '../directory/tools.js';
import { handlers, type RouteHandlers, type SliceManifest } from '../slice/contract.js';
import { oauthAuthorizationServerMetadata } from './catalog.js';
import { agentsJson, apiCatalog, LINKSET_TYPE, llmsFullTxt, llmsTxt, serverJson, type DiscoveryInput } from './discovery.js';
import { buildOpenApi } from './openapi.js';
import { SITE_ROUTES } from './routes.js';
import { cacheable, MARKDOWN_TYPE } from './pagesHandler.js';

const JSON_TYPE = 'application/json; charset=utf-8';
const CACHE = { 'cache-control': 'public, max-age=300', 'x-content-type-options': 'nosniff' };

export interface DiscoveryDocument {
  path: string;
  contentType: string;
  body: string;
}

/** Every discovery document as served, by path. */
export function discoveryDocuments(config: Config, directory: DirectoryDeps, slices: readonly SliceManifest[]): DiscoveryDocument[] {
  const directoryTools = createDirectoryServer(directory).publicTools;
  const openapi = buildOpenApi(config, slices);
  const input: DiscoveryInput = { config, slices, directory, directoryTools, openapi };
  const json = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;
  const server = json(serverJson(input));
  return [
    { path: '/openapi.json', contentType: JSON_TYPE, body: json(openapi) },
    { path: '/agents.json', contentType: JSON_TYPE, body: json(agentsJson(input)) },
    { path: '/llms.txt', contentType: MARKDOWN_TYPE, body: llmsTxt(input) },
    { path: '/llms-full.txt', contentType: MARKDOWN_TYPE, body: llmsFullTxt(input) },
    { path: '/.well-known/api-catalog', contentType: LINKSET_TYPE, body: json(apiCatalog(input)) },
    { path: '/.well-known/mcp/server.json', contentType: JSON_TYPE, body: server },
    { path: '/.well-known/mcp.json', contentType: JSON_TYPE, body: server },
    { path: '/.well-known/oauth-authorization-server', contentType: JSON_TYPE, body: json(oauthAuthorizationServerMetadata(config)) },
  ];
}

/** One handler per document route of SITE_ROUTES, found by the document's path. */
export function discoveryHandlers(config: Config, directory: DirectoryDeps, slices: readonly SliceManifest[]): RouteHandlers {
  const catalogLink = `<${config.siteUrl}/.well-known/api-catalog>; rel="api-catalog"`;
  const docs = new Map(discoveryDocuments(config, directory, slices).map((d) => [d.path, d]));
  const routes = handlers(SITE_ROUTES);
  for (const [name, spec] of Object.entries(SITE_ROUTES)) {
    const doc = typeof spec.path === 'string' ? docs.get(spec.path) : undefined;
    if (doc) routes.on(name as keyof typeof SITE_ROUTES, 'GET', async (req: HttpRequestEnvelope) => cacheable(req, 200, doc.body, doc.contentType, { ...CACHE, link: catalogLink }));
  }
  return routes.done();
}
