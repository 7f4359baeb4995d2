// The worker handler behind the discovery documents. Each is rendered once per worker from
// configuration and code, then served with an ETag and a short public cache lifetime.
import type { HttpRequestEnvelope } from '../bus/envelopes.js';
import { subjects } from '../bus/subjects.js';
import type { Config } from '../config.js';
import { createDirectoryServer } from '../directory/handler.js';
import type { DirectoryDeps } from '../directory/tools.js';
import { Routes } from '../worker/http.js';
import type { HttpHandler } from '../worker/runtime.js';
import { oauthAuthorizationServerMetadata } from './catalog.js';
import { agentsJson, apiCatalog, LINKSET_TYPE, llmsFullTxt, llmsTxt, serverJson, type DiscoveryInput } from './discovery.js';
import { buildOpenApi } from './openapi.js';
import { cacheable, MARKDOWN_TYPE } from './pagesHandler.js';

const JSON_TYPE = 'application/json; charset=utf-8';
const CACHE = { 'cache-control': 'public, max-age=300', 'x-content-type-options': 'nosniff' };

export interface DiscoveryDocument {
  path: string;
  contentType: string;
  body: string;
}

/** Every discovery document as served, by path. */
export function discoveryDocuments(config: Config, directory: DirectoryDeps): DiscoveryDocument[] {
  const directoryTools = createDirectoryServer(directory).publicTools;
  const openapi = buildOpenApi(config);
  const input: DiscoveryInput = { config, directory, directoryTools, openapi };
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

export function discoveryHandler(config: Config, directory: DirectoryDeps): HttpHandler {
  const routes = new Routes();
  const catalogLink = `<${config.siteUrl}/.well-known/api-catalog>; rel="api-catalog"`;
  for (const doc of discoveryDocuments(config, directory)) {
    routes.add('GET', doc.path, async (req: HttpRequestEnvelope) => cacheable(req, 200, doc.body, doc.contentType, { ...CACHE, link: catalogLink }));
  }
  return routes.handler(subjects(config.busNamespace).siteDiscovery);
}
