// The worker handler behind the discovery documents. Each is rendered once per worker from
// configuration and code, then served with an ETag and a short public cache lifetime.
import type { HttpRequestEnvelope } from '../bus/envelopes.js';
import type { Config } from '../config.js';
import { createDirectoryServer } from '../directory/handler.js';
import type { DirectoryDeps } from '../directory/tools.js';
import { handlers, pathsOf, type RouteHandlers, type SliceManifest } from '../slice/contract.js';
import { oauthAuthorizationServerMetadata } from './catalog.js';
import { agentsJson, apiCatalog, LINKSET_TYPE, llmsFullTxt, llmsTxt, serverJson, type DiscoveryInput } from './discovery.js';
import { buildOpenApi } from './openapi.js';
import { SITE_ROUTES } from './routes.js';
import { cacheable, MARKDOWN_TYPE } from './pagesHandler.js';

const JSON_TYPE = 'application/json; charset=utf-8';
const CACHE = { 'cache-control': 'public, max-age=300', 'x-content-type-options': 'nosniff' };

export interface DiscoveryDocument {
  contentType: string;
  body: string;
}

type DocumentRoute = 'openapiJson' | 'agentsJson' | 'llmsTxt' | 'llmsFullTxt' | 'apiCatalog' | 'serverJson' | 'mcpJson' | 'oauthMetadata';

/** Every discovery document as served, by the name of its route in SITE_ROUTES. */
export function discoveryDocuments(config: Config, directory: DirectoryDeps, slices: readonly SliceManifest[]): Record<DocumentRoute, DiscoveryDocument> {
  const directoryTools = createDirectoryServer(directory, config.maxReplyBytes).publicTools;
  const openapi = buildOpenApi(config, slices);
  const input: DiscoveryInput = { config, slices, directory, directoryTools, openapi };
  const json = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;
  const server = json(serverJson(input));
  return {
    openapiJson: { contentType: JSON_TYPE, body: json(openapi) },
    agentsJson: { contentType: JSON_TYPE, body: json(agentsJson(input)) },
    llmsTxt: { contentType: MARKDOWN_TYPE, body: llmsTxt(input) },
    llmsFullTxt: { contentType: MARKDOWN_TYPE, body: llmsFullTxt(input) },
    apiCatalog: { contentType: LINKSET_TYPE, body: json(apiCatalog(input)) },
    serverJson: { contentType: JSON_TYPE, body: server },
    mcpJson: { contentType: JSON_TYPE, body: server },
    oauthMetadata: { contentType: JSON_TYPE, body: json(oauthAuthorizationServerMetadata(config)) },
  };
}

/** One handler per document route. */
export function discoveryHandlers(config: Config, directory: DirectoryDeps, slices: readonly SliceManifest[]): RouteHandlers {
  const catalogLink = `<${config.siteUrl}${pathsOf(SITE_ROUTES.apiCatalog)[0]}>; rel="api-catalog"`;
  const routes = handlers(SITE_ROUTES);
  for (const [name, doc] of Object.entries(discoveryDocuments(config, directory, slices)) as [DocumentRoute, DiscoveryDocument][])
    routes.on(name, 'GET', async (req: HttpRequestEnvelope) => cacheable(req, 200, doc.body, doc.contentType, { ...CACHE, link: catalogLink }));
  return routes.done();
}
