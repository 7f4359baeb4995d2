// OAuth 2.1 as a native app (RFC 8252) with plain fetch: discovery from the workspace endpoint's
// protected-resource metadata (RFC 9728) and the authorization server's metadata (RFC 8414),
// dynamic registration of a public client (RFC 7591), PKCE S256, the token requests, and
// revocation (RFC 7009). No state here: the callers keep it in the token file.
import { createHash, randomBytes } from 'node:crypto';
import { describeCause } from './netError.js';
import { isLoopback } from './options.js';

export class OAuthError extends Error {
  override name = 'OAuthError';
  constructor(
    message: string,
    /** The server's `error` code (invalid_grant, …), when it sent one. */
    readonly code?: string,
    /** True when the server never answered (network, timeout): worth trying again later. */
    readonly transient = false,
  ) {
    super(message);
  }
}

export interface AuthorizationServer {
  issuer: string;
  authorizationEndpoint: string;
  tokenEndpoint: string;
  registrationEndpoint?: string;
  revocationEndpoint?: string;
  /** RFC 9207: the callback carries `iss`, which must then be checked. */
  issParameter: boolean;
}

export interface Discovery {
  /** The resource indicator: the protected resource the tokens are for. */
  resource: string;
  scopes: string[];
  as: AuthorizationServer;
}

export interface TokenSet {
  accessToken: string;
  refreshToken?: string;
  /** Milliseconds since the epoch. */
  expiresAt: number;
  scope?: string;
}

export interface HttpSettings {
  userAgent: string;
  timeoutMs: number;
  /** Plain http:// to a host other than this machine is refused unless allowed. */
  allowHttp: boolean;
}

async function request(url: string, init: RequestInit, http: HttpSettings): Promise<Response> {
  try {
    return await fetch(url, {
      ...init,
      redirect: 'manual',
      headers: { 'user-agent': http.userAgent, accept: 'application/json', ...(init.headers as Record<string, string>) },
      signal: AbortSignal.timeout(http.timeoutMs),
    });
  } catch (err) {
    const why = (err as Error).name === 'TimeoutError' ? `no answer within ${http.timeoutMs} ms` : describeCause(err).text;
    throw new OAuthError(`cannot reach ${new URL(url).host}: ${why}`, undefined, true);
  }
}

async function jsonOf(res: Response): Promise<Record<string, unknown> | undefined> {
  const text = await res.text();
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

function checkTransport(url: string, what: string, http: HttpSettings): string {
  const parsed = URL.parse(url);
  if (!parsed || (parsed.protocol !== 'https:' && parsed.protocol !== 'http:')) throw new OAuthError(`${what} is not an http(s) URL: ${url}`);
  if (parsed.protocol === 'http:' && !http.allowHttp && !isLoopback(parsed.hostname))
    throw new OAuthError(
      `${what} ${url} uses plain http:// to another machine, which would send your tokens unencrypted; pass --allow-http if the network is private`,
    );
  return url;
}

/** `https://host/.well-known/<name>/path` for an identifier with a path, `https://host/.well-known/<name>` without. */
function wellKnown(identifier: string, name: string): string {
  const url = new URL(identifier);
  const path = url.pathname.replace(/\/+$/, '');
  return `${url.origin}/.well-known/${name}${path}`;
}

/** The `resource_metadata` parameter of a `WWW-Authenticate: Bearer …` challenge. */
export function resourceMetadataFrom(header: string | null): string | undefined {
  return header ? /resource_metadata="([^"]+)"/i.exec(header)?.[1] : undefined;
}

/**
 * From the MCP endpoint to its authorization server, as MCP clients do it: the 401 names the
 * protected-resource metadata (else its well-known URLs are tried), which names the issuer, whose
 * metadata names the endpoints. A server without them does not offer browser sign-in.
 */
export async function discover(endpoint: string, http: HttpSettings): Promise<Discovery> {
  const probe = await request(
    endpoint,
    {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: '{"jsonrpc":"2.0","id":0,"method":"ping"}',
    },
    http,
  );
  await probe.body?.cancel();
  const candidates = [
    resourceMetadataFrom(probe.headers.get('www-authenticate')),
    wellKnown(endpoint, 'oauth-protected-resource'),
    `${new URL(endpoint).origin}/.well-known/oauth-protected-resource`,
  ];
  let prm: Record<string, unknown> | undefined;
  for (const url of [...new Set(candidates.filter((c): c is string => c !== undefined))]) {
    const res = await request(url, { method: 'GET' }, http);
    if (res.status === 200) {
      prm = await jsonOf(res);
      if (prm) break;
    } else await res.body?.cancel();
  }
  const servers = Array.isArray(prm?.authorization_servers) ? prm.authorization_servers.filter((s): s is string => typeof s === 'string') : [];
  if (!prm || !str(prm.resource) || servers.length === 0)
    throw new OAuthError(
      `${new URL(endpoint).host} does not offer signing in with the browser (no OAuth protected-resource metadata for ${endpoint}); use an MCP API key instead`,
    );
  // The resource must be the endpoint, or a prefix of it on the same origin (as the MCP SDK requires).
  const resource = str(prm.resource)!;
  const sameOrigin = URL.parse(resource)?.origin === new URL(endpoint).origin;
  if (!sameOrigin || !endpoint.replace(/\/+$/, '').startsWith(resource.replace(/\/+$/, '')))
    throw new OAuthError(`the protected-resource metadata names ${resource}, not ${endpoint}; check CARECIRCLE_URL`);
  const scopes = Array.isArray(prm.scopes_supported) ? prm.scopes_supported.filter((s): s is string => typeof s === 'string') : [];
  return { resource, scopes, as: await authorizationServer(checkTransport(servers[0]!, 'the authorization server', http), http) };
}

async function authorizationServer(issuer: string, http: HttpSettings): Promise<AuthorizationServer> {
  const urls = [wellKnown(issuer, 'oauth-authorization-server'), `${issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`];
  let meta: Record<string, unknown> | undefined;
  for (const url of urls) {
    const res = await request(url, { method: 'GET' }, http);
    if (res.status === 200) {
      meta = await jsonOf(res);
      if (meta) break;
    } else await res.body?.cancel();
  }
  if (!meta) throw new OAuthError(`the authorization server ${issuer} publishes no metadata (${urls[0]})`);
  if (meta.issuer !== issuer) throw new OAuthError(`the authorization server's metadata names issuer ${String(meta.issuer)}, not ${issuer}`);
  const methods = Array.isArray(meta.code_challenge_methods_supported) ? meta.code_challenge_methods_supported : [];
  if (!methods.includes('S256')) throw new OAuthError(`the authorization server ${issuer} does not support PKCE with S256; the bridge needs it`);
  const authorizationEndpoint = str(meta.authorization_endpoint);
  const tokenEndpoint = str(meta.token_endpoint);
  if (!authorizationEndpoint || !tokenEndpoint) throw new OAuthError(`the authorization server ${issuer} names no authorization or token endpoint`);
  const registrationEndpoint = str(meta.registration_endpoint);
  const revocationEndpoint = str(meta.revocation_endpoint);
  return {
    issuer,
    authorizationEndpoint: checkTransport(authorizationEndpoint, 'the authorization endpoint', http),
    tokenEndpoint: checkTransport(tokenEndpoint, 'the token endpoint', http),
    ...(registrationEndpoint ? { registrationEndpoint: checkTransport(registrationEndpoint, 'the registration endpoint', http) } : {}),
    ...(revocationEndpoint ? { revocationEndpoint: checkTransport(revocationEndpoint, 'the revocation endpoint', http) } : {}),
    issParameter: meta.authorization_response_iss_parameter_supported === true,
  };
}

/** Registers this bridge as a public client with a loopback redirect URI; returns its client_id. */
export async function registerClient(
  as: AuthorizationServer,
  metadata: { clientName: string; redirectUri: string; scope: string; softwareVersion: string },
  http: HttpSettings,
): Promise<string> {
  if (!as.registrationEndpoint)
    throw new OAuthError(`the authorization server ${as.issuer} does not register clients (no registration_endpoint); use an MCP API key instead`);
  const res = await request(
    as.registrationEndpoint,
    {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        client_name: metadata.clientName,
        redirect_uris: [metadata.redirectUri],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: 'none',
        ...(metadata.scope ? { scope: metadata.scope } : {}),
        software_id: 'carecircle-mcp',
        software_version: metadata.softwareVersion,
      }),
    },
    http,
  );
  const body = await jsonOf(res);
  if (res.status === 429)
    throw new OAuthError(
      `the authorization server refused to register another client from this address for now; try again in ${res.headers.get('retry-after') ?? 'a few'} seconds`,
      'temporarily_unavailable',
    );
  const clientId = str(body?.client_id);
  if ((res.status !== 201 && res.status !== 200) || !clientId) throw errorFrom('registering the bridge', res.status, body);
  return clientId;
}

/**
 * Whether `clientId` is still registered: a refresh with a made-up token is `invalid_grant` for a
 * known client and `invalid_client` for one the server has deleted (unused registrations expire).
 */
export async function clientExists(as: AuthorizationServer, clientId: string, http: HttpSettings): Promise<boolean> {
  try {
    await tokenRequest(
      as.tokenEndpoint,
      { grant_type: 'refresh_token', refresh_token: `carecircle-mcp-probe-${randomBytes(8).toString('hex')}`, client_id: clientId },
      http,
    );
    return true;
  } catch (err) {
    if (err instanceof OAuthError && (err.code === 'invalid_client' || err.code === 'unauthorized_client')) return false;
    if (err instanceof OAuthError && err.code !== undefined) return true;
    throw err;
  }
}

export interface Pkce {
  verifier: string;
  challenge: string;
}

export function pkce(): Pkce {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

export function authorizationUrl(
  as: AuthorizationServer,
  p: { clientId: string; redirectUri: string; scope: string; state: string; challenge: string; resource: string },
): URL {
  const url = new URL(as.authorizationEndpoint);
  // No scope named (a server that lists none) means the server's default, not an empty request.
  for (const [k, v] of Object.entries({
    response_type: 'code',
    client_id: p.clientId,
    redirect_uri: p.redirectUri,
    scope: p.scope,
    state: p.state,
    code_challenge: p.challenge,
    code_challenge_method: 'S256',
    resource: p.resource,
  }))
    if (v) url.searchParams.set(k, v);
  return url;
}

/** POST to the token endpoint (form-encoded, public client); the tokens, or an OAuthError with the server's code. */
export async function tokenRequest(tokenEndpoint: string, params: Record<string, string>, http: HttpSettings): Promise<TokenSet> {
  const res = await request(
    tokenEndpoint,
    { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(params).toString() },
    http,
  );
  const body = await jsonOf(res);
  if (res.status !== 200) throw errorFrom(params.grant_type === 'refresh_token' ? 'refreshing the sign-in' : 'exchanging the code', res.status, body);
  const accessToken = str(body?.access_token);
  if (!accessToken || String(body?.token_type).toLowerCase() !== 'bearer') throw new OAuthError(`the token endpoint answered without a bearer access token`);
  const expiresIn = typeof body?.expires_in === 'number' && body.expires_in > 0 ? body.expires_in : 3600;
  const refreshToken = str(body?.refresh_token);
  const scope = typeof body?.scope === 'string' ? body.scope : undefined;
  return { accessToken, expiresAt: Date.now() + expiresIn * 1000, ...(refreshToken ? { refreshToken } : {}), ...(scope !== undefined ? { scope } : {}) };
}

/** RFC 7009: revoke a refresh token (and, on carecircle, the grant behind it). */
export async function revokeToken(revocationEndpoint: string, p: { token: string; clientId: string }, http: HttpSettings): Promise<void> {
  const res = await request(
    revocationEndpoint,
    {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: p.token, token_type_hint: 'refresh_token', client_id: p.clientId }).toString(),
    },
    http,
  );
  const body = await jsonOf(res);
  if (res.status !== 200) throw errorFrom('revoking the sign-in', res.status, body);
}

function errorFrom(doing: string, status: number, body: Record<string, unknown> | undefined): OAuthError {
  const code = str(body?.error);
  const description = str(body?.error_description);
  return new OAuthError(`${doing} failed: ${code ?? `HTTP ${status}`}${description ? ` (${description})` : ''}`, code);
}
