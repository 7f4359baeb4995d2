// Helpers for the OAuth tests: client registration with a plain fetch (RFC 7591), the metadata
// through oauth4webapi, and an authorization driven over plain HTTP as a browser would (cookies,
// redirects, the development sign-in form, the consent form) for the tests that need no clicks.
import * as oauth from 'oauth4webapi';
import type { TestService } from './harness/service.js';

export const insecure = { [oauth.allowInsecureRequests]: true } as const;

export interface Registered {
  client: oauth.Client;
  redirectUri: string;
  raw: Record<string, unknown>;
}

/** POST /oauth/register as an MCP client does: public, loopback redirect, both grant types. */
export async function register(
  svc: TestService,
  overrides: Record<string, unknown> = {},
  redirectUri = 'http://127.0.0.1:47891/callback',
): Promise<{ status: number; body: Record<string, unknown>; registered?: Registered }> {
  const res = await fetch(`${svc.config.authUrl}/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      client_name: 'Test Assistant',
      redirect_uris: [redirectUri],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      scope: 'profile:read care_circle:read',
      ...overrides,
    }),
  });
  const body = (await res.json()) as Record<string, unknown>;
  if (res.status !== 201) return { status: res.status, body };
  return {
    status: res.status,
    body,
    registered: {
      client: { client_id: String(body.client_id), token_endpoint_auth_method: 'none' },
      redirectUri: (body.redirect_uris as string[])[0]!,
      raw: body,
    },
  };
}

/** The authorization server found the way an MCP client finds it: from the protected-resource metadata. */
export async function discover(svc: TestService): Promise<{ as: oauth.AuthorizationServer; resource: oauth.ResourceServer }> {
  const resourceId = new URL(`${svc.config.appUrl}/api/mcp`);
  const resource = await oauth.processResourceDiscoveryResponse(resourceId, await oauth.resourceDiscoveryRequest(resourceId, insecure));
  const issuer = new URL(resource.authorization_servers![0]!);
  const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...insecure }));
  return { as, resource };
}

export interface AuthorizationRequest {
  url: URL;
  state: string;
  verifier: string;
}

export async function authorizationRequest(as: oauth.AuthorizationServer, reg: Registered, params: Record<string, string> = {}): Promise<AuthorizationRequest> {
  const verifier = oauth.generateRandomCodeVerifier();
  const state = oauth.generateRandomState();
  const url = new URL(as.authorization_endpoint!);
  url.search = new URLSearchParams({
    client_id: reg.client.client_id,
    redirect_uri: reg.redirectUri,
    response_type: 'code',
    scope: 'profile:read care_circle:read',
    state,
    code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    ...params,
  }).toString();
  return { url, state, verifier };
}

/** A browser's cookie jar reduced to what one host needs: the newest value of each name. */
export class Jar {
  private readonly cookies = new Map<string, string>();
  take(res: Response) {
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const eq = pair!.indexOf('=');
      const name = pair!.slice(0, eq).trim();
      const value = pair!.slice(eq + 1).trim();
      if (/expires=Thu, 01 Jan 1970/i.test(line) || value === '') this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }
  header(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }
}

/** Approve some scopes, deny, or leave the consent page unanswered (the step stays pending). */
export type Decision = { approve: string[] } | 'deny' | 'leave';

/**
 * Follows an authorization request as a browser would until it leaves the authorization server:
 * signs in at the development provider as `email`, then answers the consent page. Returns the
 * URL the app is sent back to, or the page where the server stopped (an error page).
 */
export async function authorizeOverHttp(
  svc: TestService,
  start: URL,
  email: string,
  decision: Decision,
  jar = new Jar(),
  /** Sign in as a browser without script does: the provider posts the ID token back by a form (form_post). */
  formPost = false,
): Promise<{ redirect?: URL; status: number; page?: string; consentPages: number; lastConsent?: string }> {
  const authOrigin = new URL(svc.config.authUrl).origin;
  let url = start;
  let method = 'GET';
  let body: URLSearchParams | undefined;
  let consentPages = 0;
  let lastConsent: string | undefined;
  for (let hop = 0; hop < 20; hop++) {
    if (url.origin !== authOrigin) return { redirect: url, status: 303, consentPages, ...(lastConsent ? { lastConsent } : {}) };
    const res = await fetch(url, {
      method,
      redirect: 'manual',
      headers: { cookie: jar.header(), ...(body ? { 'content-type': 'application/x-www-form-urlencoded', origin: authOrigin } : {}) },
      ...(body ? { body } : {}),
    });
    jar.take(res);
    method = 'GET';
    body = undefined;
    if (res.status >= 300 && res.status < 400) {
      url = new URL(res.headers.get('location')!, url);
      if (url.pathname === '/dev/login') {
        // The development identity provider's form, then the page that posts the ID token on.
        const signedIn = await fetch(new URL('/dev/login', url), {
          method: 'POST',
          redirect: 'manual',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({ email, return_to: url.searchParams.get('return_to')!, ...(formPost ? { response_mode: 'form_post' } : {}) }),
        });
        if (formPost) {
          const page = await signedIn.text();
          url = new URL(/<form method="post" action="([^"]+)" id="form-post">/.exec(page)![1]!.replace(/&amp;/g, '&'));
          method = 'POST';
          body = new URLSearchParams({ id_token: /name="id_token" value="([^"]+)"/.exec(page)![1]! });
          continue;
        }
        const back = new URL(signedIn.headers.get('location')!);
        const idToken = new URLSearchParams(back.hash.slice(1)).get('id_token')!;
        url = new URL(back.pathname.replace(/\/signed-in$/, '/login'), back);
        method = 'POST';
        body = new URLSearchParams({ id_token: idToken });
      }
      continue;
    }
    const page = await res.text();
    if (res.status === 200 && /\/consent"/.test(page)) {
      consentPages++;
      lastConsent = page;
      if (decision === 'leave') return { status: res.status, page, consentPages, lastConsent };
      const action = /action="([^"]+\/consent)"/.exec(page)![1]!;
      url = new URL(action, url);
      method = 'POST';
      const fields: [string, string][] =
        decision === 'deny' ? [['decision', 'deny']] : [['decision', 'allow'], ...decision.approve.map((s): [string, string] => ['scope', s])];
      body = new URLSearchParams(fields);
      continue;
    }
    return { status: res.status, page, consentPages, ...(lastConsent ? { lastConsent } : {}) };
  }
  throw new Error('too many redirects');
}

export interface Tokens {
  access_token: string;
  refresh_token?: string;
  scope?: string;
  token_type: string;
  expires_in?: number;
}

/** Register, authorize over HTTP approving `approve`, and exchange the code: a connected app in one call. */
export async function connectedApp(svc: TestService, email: string, approve: string[] = ['profile:read', 'care_circle:read']) {
  const { as } = await discover(svc);
  const reg = (await register(svc)).registered!;
  const req = await authorizationRequest(as, reg, { resource: `${svc.config.appUrl}/api/mcp` });
  const done = await authorizeOverHttp(svc, req.url, email, { approve });
  const params = oauth.validateAuthResponse(as, reg.client, done.redirect!, req.state);
  const tokens = (await oauth.processAuthorizationCodeResponse(
    as,
    reg.client,
    await oauth.authorizationCodeGrantRequest(as, reg.client, oauth.None(), params, reg.redirectUri, req.verifier, {
      additionalParameters: { resource: `${svc.config.appUrl}/api/mcp` },
      ...insecure,
    }),
  )) as Tokens;
  return { as, reg, tokens };
}

/** One JSON-RPC tools/call on the workspace endpoint with a bearer token. */
export async function callTool(svc: TestService, token: string, name: string, args: Record<string, unknown> = {}) {
  const res = await fetch(`${svc.config.appUrl}/api/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${token}` },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }),
  });
  const text = await res.text();
  return { status: res.status, wwwAuthenticate: res.headers.get('www-authenticate'), json: text ? (JSON.parse(text) as any) : undefined };
}
