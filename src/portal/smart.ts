// SMART App Launch at a health system's portal: discovery from the FHIR base URL, the standalone
// patient launch with PKCE, and the token calls (code, refresh, revocation), over openid-client, as a
// public client, with a client secret, or with a signed client assertion (private_key_jwt).
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import * as oidc from 'openid-client';
import type { PortalSigningKey } from '../config.js';
import { specialUseAddress } from '../oauth/clientMetadata.js';
import { PORTAL_RESOURCES } from './resources.js';

/** A portal as configured or entered: its name for the family, FHIR base URL and our client there. */
export interface PortalIssuer {
  name: string;
  url: string;
  clientId: string;
  clientSecret?: string;
  /** Then carecircle authenticates with private_key_jwt (RFC 7523), signed with this key. */
  signingKey?: PortalSigningKey;
}

/** What discovery found, kept with a connection so later calls need no second discovery. */
export interface SmartMetadata {
  issuer: string;
  authorization_endpoint: string;
  token_endpoint: string;
  revocation_endpoint?: string;
  jwks_uri?: string;
  /** token_endpoint_auth_methods_supported as discovered (absent in connections made before it was kept). */
  authMethods?: string[];
  /** SMART v2 scopes (`patient/Observation.rs`) or only v1 (`patient/Observation.read`). */
  scopeVersion: 'v2' | 'v1';
}

export interface PortalTokens {
  access: string;
  refresh?: string;
  /** Epoch ms. */
  expiresAt: number;
}

export type PortalErrorCode = 'NOT_FHIR' | 'NO_SMART' | 'UNREACHABLE' | 'SIGN_IN_REFUSED' | 'SIGN_IN_AGAIN' | 'PORTAL_REFUSED' | 'PORTAL_BUSY' | 'BAD_BUNDLE';

/** A portal problem in words a family can act on; `transient` ones are worth trying again later. */
export class PortalError extends Error {
  override name = 'PortalError';
  constructor(
    readonly code: PortalErrorCode,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
  get transient(): boolean {
    return this.code === 'UNREACHABLE' || this.code === 'PORTAL_BUSY';
  }
}

export function scopesFor(version: SmartMetadata['scopeVersion']): string {
  const reads = PORTAL_RESOURCES.map((r) => `patient/${r}.${version === 'v2' ? 'rs' : 'read'}`);
  return ['openid', 'fhirUser', 'launch/patient', 'offline_access', ...reads].join(' ');
}

const TIMEOUT_MS = 15_000;
const isLoopback = (u: URL) => u.hostname === 'localhost' || u.hostname === '[::1]' || /^127(\.\d{1,3}){3}$/.test(u.hostname);

/** Plain http only for this machine's own names (a local test server); everywhere else https. */
export function checkBaseUrl(raw: string): string {
  const u = URL.parse(raw.trim());
  if (!u || !/^https?:$/.test(u.protocol) || u.username || u.password || u.search || u.hash)
    throw new PortalError('NOT_FHIR', 'url: enter the FHIR base URL the health system publishes, such as https://fhir.example.org/api/FHIR/R4');
  if (u.protocol === 'http:' && !isLoopback(u)) throw new PortalError('NOT_FHIR', 'url: a portal must be reached over https');
  return u.href.replace(/\/+$/, '');
}

/** A base URL a family entered must name a public host: the service never probes its own network
 *  for someone (loopback, private and link-local addresses are refused unless `allowPrivate`, for
 *  development and tests). Checked at discovery; the token only ever goes to the same origin. */
export async function checkPublicHost(base: string, allowPrivate: boolean): Promise<void> {
  if (allowPrivate) return;
  const host = new URL(base).hostname.replace(/^\[|\]$/g, '');
  let addresses: string[];
  try {
    addresses = isIP(host) ? [host] : (await lookup(host, { all: true })).map((a) => a.address);
  } catch (err) {
    throw new PortalError('NOT_FHIR', `url: ${host} could not be found; check the address the health system publishes`, { cause: err });
  }
  if (addresses.some(specialUseAddress)) throw new PortalError('NOT_FHIR', `url: ${host} is not a public address; enter the portal's public FHIR base URL`);
}

async function getJson(url: string): Promise<{ status: number; body: unknown }> {
  let res: Response;
  try {
    res = await fetch(url, { headers: { accept: 'application/json, application/fhir+json' }, redirect: 'error', signal: AbortSignal.timeout(TIMEOUT_MS) });
  } catch (err) {
    // A name that does not resolve is a mistyped address, not an outage.
    if ((err as { cause?: { code?: string } }).cause?.code === 'ENOTFOUND')
      throw new PortalError('NOT_FHIR', `url: ${new URL(url).hostname} could not be found; check the address the health system publishes`, { cause: err });
    throw new PortalError('UNREACHABLE', `${new URL(url).host} could not be reached; try again later`, { cause: err });
  }
  const text = await res.text();
  try {
    return { status: res.status, body: JSON.parse(text) as unknown };
  } catch {
    return { status: res.status, body: undefined };
  }
}

const str = (v: unknown): string | undefined => (typeof v === 'string' && v ? v : undefined);

/** `{base}/.well-known/smart-configuration`; when it is missing, `{base}/metadata` tells a FHIR
 *  server without SMART sign-in from something that is not FHIR at all. */
export async function discover(base: string): Promise<SmartMetadata> {
  const { status, body } = await getJson(`${base}/.well-known/smart-configuration`);
  const doc = (status === 200 && body && typeof body === 'object' ? body : {}) as Record<string, unknown>;
  const authorization = str(doc.authorization_endpoint);
  const token = str(doc.token_endpoint);
  if (!authorization || !token) {
    const meta = await getJson(`${base}/metadata`);
    const isFhir = meta.status === 200 && (meta.body as { resourceType?: unknown } | undefined)?.resourceType === 'CapabilityStatement';
    if (isFhir)
      throw new PortalError(
        'NO_SMART',
        `${base} is a FHIR server, but it offers no SMART sign-in (no .well-known/smart-configuration), so carecircle cannot connect to it`,
      );
    throw new PortalError('NOT_FHIR', `${base} does not answer as a FHIR server: check the address the health system publishes for patient access`);
  }
  const scopes = Array.isArray(doc.scopes_supported) ? doc.scopes_supported.filter((s): s is string => typeof s === 'string') : [];
  const authMethods = Array.isArray(doc.token_endpoint_auth_methods_supported)
    ? doc.token_endpoint_auth_methods_supported.filter((m): m is string => typeof m === 'string').slice(0, 20)
    : [];
  const capabilities = Array.isArray(doc.capabilities) ? doc.capabilities : [];
  const v2 = capabilities.includes('permission-v2') || scopes.some((s) => /^patient\/\w+\.[cruds]+$/.test(s));
  const v1Only = !v2 && (capabilities.includes('permission-v1') || scopes.some((s) => /\.(read|\*)$/.test(s)));
  return {
    issuer: str(doc.issuer) ?? new URL(authorization).origin,
    authorization_endpoint: authorization,
    token_endpoint: token,
    ...(str(doc.revocation_endpoint) ? { revocation_endpoint: str(doc.revocation_endpoint)! } : {}),
    ...(str(doc.jwks_uri) ? { jwks_uri: str(doc.jwks_uri)! } : {}),
    authMethods,
    scopeVersion: v1Only ? 'v1' : 'v2',
  };
}

/** openid-client's view of the portal's authorization server and our client there. */
export function clientOf(meta: SmartMetadata, issuer: PortalIssuer): oidc.Configuration {
  const { scopeVersion: _v, authMethods: _m, ...server } = meta;
  const config = new oidc.Configuration(server, issuer.clientId, {}, clientAuthentication(meta, issuer));
  if (new URL(meta.token_endpoint).protocol === 'http:' && isLoopback(new URL(meta.token_endpoint))) oidc.allowInsecureRequests(config);
  config.timeout = TIMEOUT_MS / 1000;
  return config;
}

/** How carecircle proves itself at the token endpoint: a signed assertion where a key is configured
 *  (only at a server that says it takes one), else the client secret, else nothing (a public client). */
function clientAuthentication(meta: SmartMetadata, issuer: PortalIssuer): oidc.ClientAuth {
  const key = issuer.signingKey;
  if (!key) return issuer.clientSecret ? oidc.ClientSecretBasic(issuer.clientSecret) : oidc.None();
  if (meta.authMethods && !meta.authMethods.includes('private_key_jwt'))
    throw new PortalError(
      'NO_SMART',
      `${issuer.name}'s portal does not take private_key_jwt client authentication (its smart-configuration lists ${meta.authMethods.join(', ') || 'no token_endpoint_auth_methods_supported'}), yet carecircle is configured with a key for it: whoever runs this carecircle must remove "privateKeyFile" for it from FHIR_ISSUERS or use the client registration the health system offers`,
    );
  return oidc.PrivateKeyJwt(
    { key: key.key, kid: key.kid },
    // SMART App Launch: the assertion's audience is the token endpoint (openid-client would name the issuer).
    { [oidc.modifyAssertion]: (_header, payload) => void (payload.aud = meta.token_endpoint) },
  );
}

/** A fresh PKCE verifier and state for one launch. */
export const launchSecrets = () => ({ verifier: oidc.randomPKCECodeVerifier(), state: oidc.randomState() });

/** Where the family's browser goes to sign in at the portal. */
export async function authorizationUrl(meta: SmartMetadata, issuer: PortalIssuer, redirectUri: string, state: string, verifier: string): Promise<string> {
  return oidc
    .buildAuthorizationUrl(clientOf(meta, issuer), {
      redirect_uri: redirectUri,
      scope: scopesFor(meta.scopeVersion),
      state,
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      // SMART: the FHIR server the token is for.
      aud: issuer.url,
    })
    .toString();
}

const tokensOf = (r: oidc.TokenEndpointResponse, previousRefresh?: string): PortalTokens => ({
  access: r.access_token,
  // Rotation: a new refresh token replaces the old one; a server that does not rotate keeps the old.
  ...(r.refresh_token ? { refresh: r.refresh_token } : previousRefresh ? { refresh: previousRefresh } : {}),
  expiresAt: Date.now() + (typeof r.expires_in === 'number' ? r.expires_in : 300) * 1000,
});

/** The portal's answer to a sign-in: tokens, and the patient the family may read. */
export async function exchangeCode(
  meta: SmartMetadata,
  issuer: PortalIssuer,
  callbackUrl: URL,
  checks: { verifier: string; state: string },
): Promise<{ tokens: PortalTokens; patient: string }> {
  let r: oidc.TokenEndpointResponse & oidc.TokenEndpointResponseHelpers;
  try {
    r = await oidc.authorizationCodeGrant(clientOf(meta, issuer), callbackUrl, { pkceCodeVerifier: checks.verifier, expectedState: checks.state });
  } catch (err) {
    throw refusal(err, `${issuer.name} did not accept the sign-in; connect again from the start`, issuer);
  }
  const patient = typeof r.patient === 'string' && /^[A-Za-z0-9\-.]{1,64}$/.test(r.patient) ? r.patient : undefined;
  if (!patient)
    throw new PortalError('SIGN_IN_REFUSED', `${issuer.name} did not say which patient the sign-in is for; pick the patient when you sign in at the portal`);
  return { tokens: tokensOf(r), patient };
}

/** A refreshed pair; a refused refresh is SIGN_IN_AGAIN (the family signs in at the portal again). */
export async function refreshTokens(meta: SmartMetadata, issuer: PortalIssuer, refresh: string): Promise<PortalTokens> {
  try {
    return tokensOf(await oidc.refreshTokenGrant(clientOf(meta, issuer), refresh), refresh);
  } catch (err) {
    if (err instanceof PortalError) throw err;
    // A refused client is the operator's to fix: signing in again would not help.
    if (err instanceof oidc.ResponseBodyError && err.error === 'invalid_client') throw clientRefused(issuer, err);
    if (err instanceof oidc.ResponseBodyError && err.status >= 400 && err.status < 500)
      throw new PortalError('SIGN_IN_AGAIN', `${issuer.name}'s portal no longer accepts carecircle's sign-in; sign in again`, { cause: err });
    throw refusal(err, `${issuer.name}'s portal could not be reached to renew the sign-in; try again later`);
  }
}

/** Revoke at the portal where it offers revocation; whether it was asked. */
export async function revokeToken(meta: SmartMetadata, issuer: PortalIssuer, token: string, hint: 'refresh_token' | 'access_token'): Promise<boolean> {
  if (!meta.revocation_endpoint) return false;
  await oidc.tokenRevocation(clientOf(meta, issuer), token, { token_type_hint: hint });
  return true;
}

/** The portal did not accept carecircle's own credentials (RFC 6749 invalid_client), said so the operator knows what to fix. */
function clientRefused(issuer: PortalIssuer, err: unknown): PortalError {
  const what = issuer.signingKey
    ? `the key carecircle signs with (key id ${issuer.signingKey.kid}) is not the one registered there for client ${issuer.clientId}; whoever runs this carecircle must register its key set (docs/portal.md)`
    : issuer.clientSecret
      ? `the client secret configured for client ${issuer.clientId} is not the one registered there`
      : `client ${issuer.clientId} is not registered there as a public client`;
  return new PortalError('PORTAL_REFUSED', `${issuer.name} refused carecircle's client credentials: ${what}`, { cause: err });
}

function refusal(err: unknown, words: string, issuer?: PortalIssuer): PortalError {
  if (err instanceof PortalError) return err;
  if (issuer && err instanceof oidc.ResponseBodyError && err.error === 'invalid_client') return clientRefused(issuer, err);
  const transient =
    !(err instanceof oidc.ResponseBodyError) &&
    !(err instanceof oidc.AuthorizationResponseError) &&
    !(err instanceof Error && 'code' in err && String(err.code).startsWith('OAUTH_'));
  return new PortalError(transient ? 'UNREACHABLE' : 'SIGN_IN_REFUSED', words, { cause: err });
}
