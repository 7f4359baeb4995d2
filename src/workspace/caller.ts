// Who is calling the workspace MCP endpoint, re-derived from the credentials on every request.
import type { Credentials } from '../auth/credentials.js';
import type { Db } from 'mongodb';
import { SCOPES, type Scope } from '../auth/scopes.js';
import type { Config } from '../config.js';
import { accessOf, API_KEY_FORMAT, type KeyStore } from '../keys/keys.js';
import { AccessTokenError, accessTokenVerifier, looksLikeJwt } from '../oauth/accessTokens.js';
import { RPC } from '../rpc/codes.js';
import { RpcError } from '../rpc/errors.js';
import { CredentialCache } from '../auth/credentials.js';
import { sessionCaller } from '../auth/sessions.js';
import type { AuthMethod } from './audit.js';
import type { Tenant } from '../tenants.js';
import { type WorkspaceStore } from '../family/records.js';

export interface WorkspaceCaller {
  uid: string;
  email: string;
  tenant: Tenant;
  via: AuthMethod;
  /** Scopes an OAuth caller approved, or a key's: every read scope, and care_circle:write when minted read-and-write.
   *  A session (the person in the app) holds them all. */
  scopes: readonly Scope[] | 'all';
  keyId?: string;
  /** The connected app, for an OAuth caller. */
  clientId?: string;
}

/** An account's email and tenant, kept a minute per process: a tenant never changes and accounts
 *  are never deleted, so only a changed email can show late, on `ping`, for at most that minute.
 *  It saves a store read on every API-key and OAuth call. */
const ACCOUNT_TTL_MS = 60_000;
const accounts = new WeakMap<WorkspaceStore, CredentialCache<'account'>>();

function accountOf(users: WorkspaceStore, uid: string): Promise<{ _id: string; email: string; tenant: Tenant } | null> {
  const kept = accounts.get(users) ?? accounts.set(users, new CredentialCache<'account'>(ACCOUNT_TTL_MS)).get(users)!;
  return kept.lookup('account', uid, async () => {
    const user = await users.user(uid);
    return user ? { _id: user._id, email: user.email, tenant: user.tenant } : null;
  });
}

/** A refusal before any method routing: HTTP status, JSON-RPC -32001, and WWW-Authenticate. */
export class AuthRefusal extends RpcError {
  constructor(
    httpStatus: 401 | 403,
    message: string,
    hint: string,
    readonly wwwAuthenticate: string,
  ) {
    super(RPC.UNAUTHORIZED, message, { hint }, httpStatus);
  }
}

/** An OAuth access token's caller: only the scopes the caregiver approved for that app. */
async function oauthCaller(
  db: Db,
  credentials: Credentials,
  config: Config,
  token: string,
  users: WorkspaceStore,
  challenge: (error?: string) => string,
): Promise<WorkspaceCaller> {
  let verified;
  try {
    verified = await accessTokenVerifier(db, credentials, config).verify(token);
  } catch (err) {
    if (!(err instanceof AccessTokenError)) throw err;
    const hint =
      err.problem === 'invalid' ? `Get a token for ${config.appUrl}/api/mcp from ${config.authUrl}.` : 'Refresh the token, or connect the app again.';
    throw new AuthRefusal(401, err.message, hint, `${challenge('invalid_token')}, error_description="${err.message.replace(/["\\]/g, '')}"`);
  }
  const user = await accountOf(users, verified.uid);
  if (!user) throw new AuthRefusal(401, 'Unknown account', 'Connect the app again.', challenge('invalid_token'));
  const granted = new Set(verified.scopes);
  return {
    uid: user._id,
    email: user.email,
    tenant: user.tenant,
    via: 'oauth',
    scopes: SCOPES.filter((s) => granted.has(s)),
    ...(verified.clientId ? { clientId: verified.clientId } : {}),
  };
}

/** A key reads everything; only a key minted read-and-write holds care_circle:write. */
const READ_SCOPES = SCOPES.filter((s) => s !== 'care_circle:write');
const keyScopes = (access: 'read' | 'read-write'): readonly Scope[] => (access === 'read-write' ? SCOPES : READ_SCOPES);

export function resourceMetadataUrl(config: Config): string {
  return `${config.appUrl}/.well-known/oauth-protected-resource`;
}

export async function authenticate(
  db: Db,
  credentials: Credentials,
  config: Config,
  headers: Record<string, string>,
  keys: KeyStore,
  users: WorkspaceStore,
): Promise<WorkspaceCaller> {
  const challenge = (error?: string) => `Bearer resource_metadata="${resourceMetadataUrl(config)}"${error ? `, error="${error}"` : ''}`;
  const settings = `${config.appUrl}/settings`;
  const auth = headers.authorization;
  if (auth !== undefined) {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(auth);
    if (!match) throw new AuthRefusal(401, 'Malformed Authorization header', 'Send "Authorization: Bearer <API key>".', challenge('invalid_request'));
    const token = match[1]!;
    if (!token.startsWith('sk-svc-')) {
      if (looksLikeJwt(token)) return oauthCaller(db, credentials, config, token, users, challenge);
      throw new AuthRefusal(
        401,
        'Unknown credential',
        `Use an MCP API key (sk-svc-…) from ${settings}, or an OAuth access token from ${config.authUrl}.`,
        challenge('invalid_token'),
      );
    }
    if (!API_KEY_FORMAT.test(token))
      throw new AuthRefusal(
        401,
        'Malformed API key',
        'An API key is "sk-svc-" followed by 64 lowercase hex characters; copy it again from where you saved it.',
        challenge('invalid_token'),
      );
    const key = await keys.findByPlaintext(token);
    if (!key) throw new AuthRefusal(401, 'Unknown API key', `Mint a key at ${settings}.`, challenge('invalid_token'));
    if (key.status === 'revoked')
      throw new AuthRefusal(403, 'API key revoked', `This key was revoked; mint a new one at ${settings}.`, challenge('invalid_token'));
    const user = await accountOf(users, key.uid);
    if (!user) throw new AuthRefusal(401, 'Unknown API key', `Mint a key at ${settings}.`, challenge('invalid_token'));
    keys.touch(key);
    return { uid: user._id, email: user.email, tenant: user.tenant, via: 'api-key', scopes: keyScopes(accessOf(key)), keyId: key._id };
  }
  const session = await sessionCaller(db, credentials, headers);
  if (session) return { uid: session.uid, email: session.email, tenant: session.tenant, via: 'session', scopes: 'all' };
  throw new AuthRefusal(401, 'Authentication required', `Send "Authorization: Bearer <API key>" (mint one at ${settings}) or connect with OAuth.`, challenge());
}
