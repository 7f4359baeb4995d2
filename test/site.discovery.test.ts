// Discovery documents end to end: each validated against its format, cross-checked with what the
// service actually serves, and reachable by an agent that knows only SITE_URL.
import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { APP_MCP_TOOLS } from '../src/site/catalog.js';
import { postJson, rpc, startTestService, type TestService } from './harness/service.js';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

/**
 * The MCP registry's server.json rules (schema 2025-09-29), written out as a JSON Schema: a
 * reverse-DNS name with one slash, a description of 1-100 characters, a specific version, and
 * remotes that are streamable-http or sse transports with a URL and optional header inputs.
 */
const SERVER_JSON_SCHEMA = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  type: 'object',
  required: ['name', 'description', 'version'],
  properties: {
    $schema: { type: 'string', format: 'uri' },
    name: { type: 'string', pattern: '^[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+$', minLength: 3, maxLength: 200 },
    title: { type: 'string', minLength: 1, maxLength: 100 },
    description: { type: 'string', minLength: 1, maxLength: 100 },
    version: { type: 'string', maxLength: 255, not: { pattern: '^[\\^~<>=]|[xX*]$|latest' } },
    websiteUrl: { type: 'string', format: 'uri' },
    remotes: {
      type: 'array',
      items: {
        type: 'object',
        required: ['type', 'url'],
        properties: {
          type: { enum: ['streamable-http', 'sse'] },
          url: { type: 'string', format: 'uri' },
          headers: {
            type: 'array',
            items: {
              type: 'object',
              required: ['name'],
              properties: {
                name: { type: 'string' },
                description: { type: 'string' },
                isRequired: { type: 'boolean' },
                isSecret: { type: 'boolean' },
                value: { type: 'string' },
                variables: {
                  type: 'object',
                  additionalProperties: {
                    type: 'object',
                    properties: { description: { type: 'string' }, isRequired: { type: 'boolean' }, isSecret: { type: 'boolean' } },
                  },
                },
              },
            },
          },
        },
      },
    },
    _meta: { type: 'object' },
  },
};

/** RFC 9264 §4.2: a JSON linkset is an array of link contexts, each with an anchor and arrays of target objects. */
const LINKSET_SCHEMA = {
  type: 'object',
  required: ['linkset'],
  additionalProperties: false,
  properties: {
    linkset: {
      type: 'array',
      minItems: 1,
      items: {
        type: 'object',
        required: ['anchor'],
        properties: { anchor: { type: 'string', format: 'uri' } },
        additionalProperties: {
          type: 'array',
          minItems: 1,
          items: {
            type: 'object',
            required: ['href'],
            properties: { href: { type: 'string', format: 'uri' }, type: { type: 'string' }, title: { type: 'string' }, hreflang: { type: 'array' } },
          },
        },
      },
    },
  },
};

const ajv = addFormats(new Ajv({ allErrors: true, strict: false }));

async function get(url: string, headers: Record<string, string> = {}) {
  const res = await fetch(url, { headers, redirect: 'manual' });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

describe('site discovery documents', () => {
  let svc: TestService;
  let site: string;
  beforeAll(async () => {
    svc = await startTestService({ env: { RECAPTCHA_SECRET: '' } });
    site = svc.urls.site!;
  });
  afterAll(async () => svc?.stop());

  const directoryToolNames = async () => {
    const res = await postJson(`${site}/api/mcp`, rpc('tools/list'));
    return (res.json.result.tools as { name: string }[]).map((t) => t.name);
  };

  it('when fetched, then every document answers 200 with its media type, a cache lifetime, an ETag and CORS for any origin', async () => {
    const expected: Record<string, RegExp> = {
      '/openapi.json': /^application\/json/,
      '/agents.json': /^application\/json/,
      '/llms.txt': /^text\/markdown/,
      '/llms-full.txt': /^text\/markdown/,
      '/.well-known/api-catalog': /^application\/linkset\+json; profile="https:\/\/www\.rfc-editor\.org\/info\/rfc9727"/,
      '/.well-known/mcp/server.json': /^application\/json/,
      '/.well-known/mcp.json': /^application\/json/,
      '/.well-known/oauth-authorization-server': /^application\/json/,
    };
    for (const [path, type] of Object.entries(expected)) {
      const res = await get(`${site}${path}`, { origin: 'https://agent.example' });
      expect(res.status, path).toBe(200);
      expect(res.headers.get('content-type'), path).toMatch(type);
      expect(res.headers.get('cache-control'), path).toMatch(/public, max-age=\d+/);
      expect(res.headers.get('access-control-allow-origin'), path).toBe('*');
      expect(res.headers.get('link'), path).toContain('rel="api-catalog"');
      const etag = res.headers.get('etag')!;
      expect(etag, path).toMatch(/^".+"$/);
      const again = await fetch(`${site}${path}`, { headers: { 'if-none-match': etag } });
      expect(again.status, path).toBe(304);
    }
  });

  it('when a browser preflights a discovery document, then CORS allows GET from any origin', async () => {
    const res = await fetch(`${site}/agents.json`, { method: 'OPTIONS', headers: { origin: 'https://agent.example', 'access-control-request-method': 'GET' } });
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(res.headers.get('access-control-allow-methods')).toContain('GET');
  });

  it('when openapi.json is validated, then it is a valid OpenAPI 3.0.3 document, version 1.0.0, served from SITE_URL, with ApiError', async () => {
    const doc = JSON.parse((await get(`${site}/openapi.json`)).text);
    const result = await new Validator().validate(doc);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(doc.openapi).toBe('3.0.3');
    expect(doc.info.version).toBe('1.0.0');
    expect(doc.servers).toEqual([{ url: svc.config.siteUrl, description: expect.any(String) }]);
    expect(doc.components.schemas.ApiError.required).toEqual(['error', 'code', 'message', 'hint']);
    // Every SPEC §A row is described, with a response for each status the SPEC lists.
    const ops = Object.entries(doc.paths as Record<string, Record<string, any>>).flatMap(([p, m]) => Object.keys(m).map((k) => `${k.toUpperCase()} ${p}`));
    expect(ops.sort()).toEqual(
      [
        'GET /openapi.json',
        'GET /agents.json',
        'GET /llms.txt',
        'GET /llms-full.txt',
        'GET /.well-known/api-catalog',
        'GET /.well-known/mcp/server.json',
        'GET /.well-known/mcp.json',
        'GET /.well-known/oauth-authorization-server',
        'GET /api/mcp',
        'POST /api/mcp',
        'GET /api/md',
        'POST /api/newsletter',
        'GET /api/auth/me',
        'POST /api/auth/session',
        'POST /api/auth/signout',
        'GET /api/community',
        'POST /api/community',
      ].sort(),
    );
    for (const [op, statuses] of [
      ['post /api/newsletter', ['200', '400', '405', '429', '500']],
      ['post /api/auth/session', ['200', '400', '401', '500']],
      ['get /api/community', ['200', '400', '404', '500']],
      ['post /api/community', ['200', '400', '401', '403', '404', '500']],
    ] as const) {
      const [method, path] = op.split(' ') as [string, string];
      expect(Object.keys(doc.paths[path][method].responses), op).toEqual(expect.arrayContaining([...statuses]));
    }
  });

  it('when server.json and its mirror are checked, then they are equal, match the registry schema and list the three endpoints as remotes', async () => {
    const a = JSON.parse((await get(`${site}/.well-known/mcp/server.json`)).text);
    const b = JSON.parse((await get(`${site}/.well-known/mcp.json`)).text);
    expect(b).toEqual(a);
    const validate = ajv.compile(SERVER_JSON_SCHEMA);
    expect(validate(a), JSON.stringify(validate.errors)).toBe(true);
    expect(a.remotes.map((r: any) => r.url)).toEqual([`${svc.config.siteUrl}/api/mcp`, `${svc.config.appUrl}/api/mcp`, `${svc.config.appUrl}/api/mcp/public`]);
    expect(a.remotes[1].headers[0]).toMatchObject({ name: 'Authorization', isRequired: true, isSecret: true });
  });

  it('when the API catalog is checked, then it is an RFC 9727 linkset listing the site API, the three MCP endpoints, the ingest and the issuer', async () => {
    const doc = JSON.parse((await get(`${site}/.well-known/api-catalog`)).text);
    const validate = ajv.compile(LINKSET_SCHEMA);
    expect(validate(doc), JSON.stringify(validate.errors)).toBe(true);
    const [catalog, ...apis] = doc.linkset;
    expect(catalog.anchor).toBe(`${svc.config.siteUrl}/.well-known/api-catalog`);
    expect(catalog.item.map((i: any) => i.href)).toEqual(apis.map((a: any) => a.anchor));
    expect(catalog.item.map((i: any) => i.href)).toEqual(
      expect.arrayContaining([
        `${svc.config.siteUrl}/api/mcp`,
        `${svc.config.appUrl}/api/mcp`,
        `${svc.config.appUrl}/api/mcp/public`,
        `${svc.config.pipeUrl}/pipe/v1/events`,
        svc.config.authUrl,
      ]),
    );
    const siteApi = apis.find((a: any) => a.anchor === `${svc.config.siteUrl}/`);
    expect(siteApi['service-desc'][0].href).toBe(`${svc.config.siteUrl}/openapi.json`);
    // Every link into the site host answers.
    const siteLinks = doc.linkset
      .flatMap((ctx: any) =>
        Object.entries(ctx)
          .filter(([k]) => k !== 'anchor')
          .flatMap(([, v]) => (v as any[]).map((t) => t.href)),
      )
      .filter((h: string) => h.startsWith(svc.config.siteUrl));
    for (const href of new Set<string>(siteLinks)) expect((await fetch(href.replace(svc.config.siteUrl, site))).status, href).toBe(200);
  });

  it('when the OAuth metadata is read, then it names AUTH_URL as issuer with S256 PKCE and the OAuth endpoints', async () => {
    const meta = JSON.parse((await get(`${site}/.well-known/oauth-authorization-server`)).text);
    const auth = svc.config.authUrl;
    expect(meta).toMatchObject({
      issuer: auth,
      authorization_endpoint: `${auth}/oauth/authorize`,
      token_endpoint: `${auth}/oauth/token`,
      registration_endpoint: `${auth}/oauth/register`,
      revocation_endpoint: `${auth}/oauth/revoke`,
      jwks_uri: `${auth}/.well-known/jwks.json`,
      response_types_supported: ['code'],
      code_challenge_methods_supported: ['S256'],
      client_id_metadata_document_supported: true,
    });
  });

  it('when the documents name MCP versions, then 2026-07-28 is the current one and every supported version is listed newest first', async () => {
    const versions = ['2026-07-28', '2025-11-25', '2025-06-18', '2025-03-26'];
    const agents = JSON.parse((await get(`${site}/agents.json`)).text);
    const server = JSON.parse((await get(`${site}/.well-known/mcp/server.json`)).text);
    const llms = (await get(`${site}/llms.txt`)).text;
    for (const s of agents.mcp.servers)
      expect(s, s.url).toMatchObject({ protocolVersion: '2026-07-28', supportedProtocolVersions: versions, defaultProtocolVersion: '2025-03-26' });
    for (const e of server._meta['io.modelcontextprotocol.registry/publisher-provided'].endpoints)
      expect(e, e.url).toMatchObject({ protocolVersion: '2026-07-28', supportedProtocolVersions: versions });
    const endpointLines = llms.split('\n').filter((l) => l.startsWith('Endpoint: '));
    expect(endpointLines).toHaveLength(3);
    for (const l of endpointLines)
      expect(l).toContain('MCP 2026-07-28, the current revision, without initialize; also 2025-11-25, 2025-06-18, 2025-03-26 through initialize');
    // The workspace's prompt and resource template are declared once and named in both documents.
    const workspace = agents.mcp.servers.find((s: any) => s.url === `${svc.config.appUrl}/api/mcp`);
    expect(workspace.prompts.map((p: any) => p.name)).toEqual(['weekly_care_summary']);
    expect(workspace.resourceTemplates.map((r: any) => r.uriTemplate)).toEqual(['carecircle://loved-ones/{lovedOneId}/timeline']);
    expect(llms).toContain('Prompt `weekly_care_summary` (Weekly care summary for a loved one)');
    expect(llms).toContain('Resource `carecircle://loved-ones/{lovedOneId}/timeline`');
    // The endpoints' own descriptors keep SPEC's default and name the current revision beside it.
    const descriptor = JSON.parse((await get(`${site}/api/mcp`, { accept: 'application/json' })).text);
    expect(descriptor).toMatchObject({ protocolVersion: '2025-03-26', currentProtocolVersion: '2026-07-28' });
  });

  it('when tools are listed in agents.json, server.json and llms.txt, then each matches the endpoints that serve them', async () => {
    const live = await directoryToolNames();
    const agents = JSON.parse((await get(`${site}/agents.json`)).text);
    const server = JSON.parse((await get(`${site}/.well-known/mcp/server.json`)).text);
    const llms = (await get(`${site}/llms.txt`)).text;
    const workspace = APP_MCP_TOOLS.workspace.map((t) => t.name);
    const sandbox = APP_MCP_TOOLS.sandbox.map((t) => t.name);

    const byUrl = (servers: any[]) => Object.fromEntries(servers.map((s) => [s.url, s.tools.map((t: any) => (typeof t === 'string' ? t : t.name))]));
    const expected = { [`${svc.config.siteUrl}/api/mcp`]: live, [`${svc.config.appUrl}/api/mcp`]: workspace, [`${svc.config.appUrl}/api/mcp/public`]: sandbox };
    expect(byUrl(agents.mcp.servers)).toEqual(expected);
    expect(byUrl(server._meta['io.modelcontextprotocol.registry/publisher-provided'].endpoints)).toEqual(expected);

    // llms.txt: one "### title" section per endpoint, its URL on the "Endpoint:" line, tools as "- `name`" items.
    const sections = llms.split('\n### ').slice(1);
    const fromLlms = Object.fromEntries(
      sections.map((s) => [/Endpoint: (\S+)/.exec(s)![1], [...s.split('\n## ')[0]!.matchAll(/^- `([a-z_]+)`/gm)].map((m) => m[1])]),
    );
    expect(fromLlms).toEqual(expected);
    expect(live).toEqual(['search_care_resources', 'get_channel', 'calculate_long_term_care_cost']);
  });

  it('when an agent knows only SITE_URL, then llms.txt links reach every surface and every page answers', async () => {
    const llms = (await get(`${site}/llms.txt`)).text;
    expect(llms.startsWith('# carecircle\n\n> ')).toBe(true);
    const links = [...llms.matchAll(/\]\((https?:\/\/[^)\s]+)\)/g)].map((m) => m[1]!);
    for (const needed of [
      '/openapi.json',
      '/agents.json',
      '/.well-known/api-catalog',
      '/.well-known/mcp/server.json',
      '/.well-known/oauth-authorization-server',
      '/llms-full.txt',
      '/resources',
      '/channels',
      '/calculator',
      '/glossary',
    ])
      expect(links, needed).toContain(`${svc.config.siteUrl}${needed}`);
    for (const host of [
      `${svc.config.siteUrl}/api/mcp`,
      `${svc.config.appUrl}/api/mcp`,
      `${svc.config.appUrl}/api/mcp/public`,
      `${svc.config.pipeUrl}/pipe/v1/events`,
    ])
      expect(llms).toContain(host);
    for (const link of links.filter((l) => l.startsWith(svc.config.siteUrl)))
      expect((await fetch(link.replace(svc.config.siteUrl, site))).status, link).toBe(200);
  });

  it('when llms-full.txt is read, then it holds every resource, channel and glossary term and each directory tool schema', async () => {
    const full = (await get(`${site}/llms-full.txt`)).text;
    expect(full).toContain(`${svc.config.siteUrl}/resources/eldercare-locator`);
    expect(full).toContain(`${svc.config.siteUrl}/channels/cuidadores-en-espanol`);
    expect(full).toContain(`${svc.config.siteUrl}/glossary#medicaid`);
    expect(full).toContain('### calculate_long_term_care_cost');
    expect(full).toContain('"careType"');
    expect(full).toContain('`POST /api/community`');
    expect(full.split('\n').filter((l) => l.startsWith(`- [`) && l.includes('/resources/')).length).toBe(81);
  });

  it('when a discovery document is sent a POST, then 405 ApiError naming GET', async () => {
    const res = await fetch(`${site}/agents.json`, { method: 'POST' });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toContain('GET');
    const body = (await res.json()) as any;
    expect(body).toMatchObject({ code: 'METHOD_NOT_ALLOWED', error: { code: 'METHOD_NOT_ALLOWED' } });
  });
});

describe('apex host', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService({ env: { SITE_URL: 'https://carecircle.example' } });
  });
  afterAll(async () => svc?.stop());

  it('when any path but a health probe is requested on the apex, then a permanent redirect to the same path and query on SITE_URL', async () => {
    for (const target of ['/', '/resources?q=respite%20care&state=OH', '/channels/hospice-and-grief', '/llms.txt', '/no/such/page?x=1&x=2', '/healthz/x']) {
      const res = await fetch(`${svc.urls.apex}${target}`, { redirect: 'manual' });
      expect(res.status, target).toBe(308);
      expect(res.headers.get('location'), target).toBe(`https://carecircle.example${target}`);
    }
  });

  it('when a POST reaches the apex, then it is redirected with 308 so the method is kept', async () => {
    const res = await fetch(`${svc.urls.apex}/api/newsletter`, {
      method: 'POST',
      body: '{}',
      headers: { 'content-type': 'application/json' },
      redirect: 'manual',
    });
    expect(res.status).toBe(308);
    expect(res.headers.get('location')).toBe('https://carecircle.example/api/newsletter');
  });
});
