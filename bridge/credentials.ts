// What the bridge authenticates with: a configured key (or an Authorization --header), which is
// sent as it is and never renewed, or a browser sign-in stored by --login, whose access token is
// refreshed shortly before it expires or when the server refuses it. A configured key always
// wins and never touches the token file. Secrets never appear in a message.
import { RPC } from '../src/rpc/codes.js';
import type { Log } from './log.js';
import type { RpcErrorObject } from './messages.js';
import { OAuthError, tokenRequest, type HttpSettings } from './oauth.js';
import { BridgeConfigError, describeKey, loginCommand, type BridgeOptions } from './options.js';
import { TokenFileError, TokenStore, type StoredSignIn } from './tokenStore.js';
import { COMMAND } from './command.js';

export type Authorization = { ok: true; header?: string } | { ok: false; error: RpcErrorObject };

export interface Credential {
  readonly kind: 'key' | 'header' | 'oauth';
  /** What is sent and where it comes from, for logs (never the secret). */
  describe(): string;
  /** The Authorization header for the next request, or the error to answer it with instead. */
  authorization(): Promise<Authorization>;
  /** The server answered 401 to `refused`: true when a new credential is worth one retry. */
  renew(refused: string | undefined): Promise<boolean>;
  /** The hint added to a 401/403 the client sees. */
  refusalHint(status: number, server: RpcErrorObject | undefined): string;
}

const serverHintOf = (server: RpcErrorObject | undefined): string | undefined => (typeof server?.data?.hint === 'string' ? server.data.hint : undefined);

/** A key from CARECIRCLE_API_KEY or --api-key-file, or an Authorization header from --header. */
export class StaticCredential implements Credential {
  readonly kind: 'key' | 'header';
  constructor(
    private readonly apiKey: string | undefined,
    private readonly source: string,
    private readonly settingsUrl: string,
  ) {
    this.kind = apiKey ? 'key' : 'header';
  }
  describe(): string {
    return this.apiKey ? `key ${describeKey(this.apiKey)} from ${this.source}` : `Authorization from ${this.source}`;
  }
  async authorization(): Promise<Authorization> {
    // An Authorization --header travels with the other headers.
    return this.apiKey ? { ok: true, header: `Bearer ${this.apiKey}` } : { ok: true };
  }
  async renew(): Promise<boolean> {
    return false;
  }
  refusalHint(_status: number, server: RpcErrorObject | undefined): string {
    return `${serverHintOf(server) ?? `Check the key, or mint a new one at ${this.settingsUrl}.`} The bridge sends the key from ${this.source}; update it there.`;
  }
}

/** Refresh this long before the access token expires, so no request carries one that dies on the way. */
export const REFRESH_BEFORE_MS = 60_000;
/** Token endpoint answers that mean the sign-in is over (revoked, reused, expired, client deleted). */
const SIGN_IN_OVER = new Set(['invalid_grant', 'invalid_client', 'unauthorized_client']);

const expiresIn = (entry: StoredSignIn): number => {
  const at = entry.expiresAt ? Date.parse(entry.expiresAt) : NaN;
  return Number.isNaN(at) ? -1 : at - Date.now();
};

type Refresh = { kind: 'ok' } | { kind: 'ended' } | { kind: 'failed'; message: string };

export interface OAuthCredentialOptions {
  settingsUrl: string;
  loginCommand: string;
  /** For the token requests (their timeout bounds how long the lock is held). */
  http: HttpSettings;
  log: Log;
}

/** A sign-in stored by --login. Re-reads the token file when it changes, so a new --login (or --logout) applies at once. */
export class OAuthCredential implements Credential {
  readonly kind = 'oauth';
  private entry: StoredSignIn;
  private seen: string | undefined;
  /** Why the sign-in is over, once it is. */
  private ended: string | undefined;
  /** The refresh token the server refused: a file still holding it is no way back. */
  private refused: string | undefined;
  private refreshing: Promise<Refresh> | undefined;

  constructor(
    private readonly store: TokenStore,
    entry: StoredSignIn,
    version: string | undefined,
    private readonly o: OAuthCredentialOptions,
  ) {
    this.entry = entry;
    this.seen = version;
    if (!entry.refreshToken && !entry.accessToken)
      this.ended = 'no tokens are stored for this server (the last --login did not finish, or carecircle refused to renew them)';
  }

  get scope(): string {
    return this.entry.scope ?? '';
  }

  get file(): string {
    return this.store.file;
  }

  get signedIn(): boolean {
    return this.ended === undefined;
  }

  describe(): string {
    return `OAuth sign-in from ${this.store.file}, scopes: ${this.scope || 'none'}`;
  }

  async authorization(): Promise<Authorization> {
    await this.reloadIfChanged();
    if (this.ended) return { ok: false, error: this.endedError() };
    if (!this.entry.accessToken || expiresIn(this.entry) < REFRESH_BEFORE_MS) {
      const outcome = await this.refresh(this.entry.accessToken);
      if (outcome.kind === 'ended') return { ok: false, error: this.endedError() };
      // A token with a little life left still serves while the authorization server is out of reach.
      if (outcome.kind === 'failed' && (!this.entry.accessToken || expiresIn(this.entry) <= 0))
        return {
          ok: false,
          error: {
            code: RPC.INTERNAL_ERROR,
            message: `Cannot renew the carecircle sign-in: ${outcome.message}`,
            data: { hint: 'Check your network and that carecircle is running; the bridge tries again on the next request.' },
          },
        };
    }
    return { ok: true, header: `Bearer ${this.entry.accessToken}` };
  }

  async renew(refused: string | undefined): Promise<boolean> {
    if (this.ended || !refused) return false;
    return (await this.refresh(refused.replace(/^Bearer /, ''))).kind === 'ok';
  }

  refusalHint(status: number, server: RpcErrorObject | undefined): string {
    if (this.ended) return this.loginHint();
    const scope = server?.data?.scope;
    if (status === 403 && typeof scope === 'string')
      return `This sign-in was granted ${this.scope || 'no scopes'}, not ${scope}. Run ${this.o.loginCommand} again in a terminal and tick it on the consent page.`;
    return `${serverHintOf(server) ?? ''} The bridge could not renew its sign-in; if this persists, run ${this.o.loginCommand} in a terminal.`.trim();
  }

  private loginHint(): string {
    return `Sign in again: run ${this.o.loginCommand} in a terminal, then retry (no restart needed). Or use an MCP API key from ${this.o.settingsUrl}.`;
  }

  private endedError(): RpcErrorObject {
    return { code: RPC.UNAUTHORIZED, message: `Your carecircle sign-in has ended: ${this.ended}`, data: { hint: this.loginHint() } };
  }

  private end(why: string, refusedToken?: string): void {
    if (!this.ended) this.o.log.warn(`the sign-in for ${this.entry.server} has ended: ${why}; run ${this.o.loginCommand}`);
    this.ended = why;
    if (refusedToken) this.refused = refusedToken;
  }

  /** Picks up what another bridge, --login or --logout wrote since the last look. */
  private async reloadIfChanged(): Promise<void> {
    let version: string | undefined;
    let fresh: StoredSignIn | undefined;
    try {
      version = await this.store.version();
      if (version === this.seen) return;
      fresh = await this.store.get(this.entry.server);
    } catch (err) {
      this.o.log.warn(`cannot read the token file: ${(err as Error).message}`);
      return;
    }
    this.seen = version;
    if (!fresh) return this.end(`you signed out (${COMMAND} --logout)`);
    if (fresh.refreshToken && fresh.refreshToken !== this.refused) {
      if (this.ended) this.o.log.info(`signed in again (scopes: ${fresh.scope || 'none'})`);
      this.entry = fresh;
      this.ended = undefined;
    }
  }

  /** One refresh at a time in this process; across processes the token file's lock decides. */
  private refresh(stale: string | undefined): Promise<Refresh> {
    this.refreshing ??= this.refreshUnderLock(stale).finally(() => {
      this.refreshing = undefined;
    });
    return this.refreshing;
  }

  private async refreshUnderLock(stale: string | undefined): Promise<Refresh> {
    try {
      return await this.store.transaction<Refresh>(this.entry.server, async (current) => {
        if (!current) {
          this.end(`you signed out (${COMMAND} --logout)`);
          return { result: { kind: 'ended' } };
        }
        // Another bridge (or a new --login) renewed it already: spending the old refresh token now would be a reuse.
        if (current.accessToken && current.accessToken !== stale && expiresIn(current) >= REFRESH_BEFORE_MS) {
          this.entry = current;
          return { result: { kind: 'ok' } };
        }
        if (!current.refreshToken) {
          this.end('the stored sign-in holds no refresh token');
          return { result: { kind: 'ended' } };
        }
        try {
          const tokens = await tokenRequest(
            current.tokenEndpoint,
            { grant_type: 'refresh_token', refresh_token: current.refreshToken, client_id: current.clientId, resource: current.resource ?? current.server },
            this.o.http,
          );
          const next: StoredSignIn = {
            ...current,
            accessToken: tokens.accessToken,
            refreshToken: tokens.refreshToken ?? current.refreshToken,
            expiresAt: new Date(tokens.expiresAt).toISOString(),
            scope: tokens.scope ?? current.scope,
            updatedAt: new Date().toISOString(),
          };
          this.entry = next;
          this.o.log.info(`renewed the access token (scopes: ${next.scope || 'none'})`);
          return { result: { kind: 'ok' }, entry: next };
        } catch (err) {
          if (!(err instanceof OAuthError)) throw err;
          if (!err.transient && err.code !== undefined && SIGN_IN_OVER.has(err.code)) {
            this.end(
              `carecircle refused to renew it (${err.code}: revoked in Settings → Connected apps, signed out, or unused for too long)`,
              current.refreshToken,
            );
            // Keep the client for the next --login; the dead tokens go.
            const { accessToken: _a, refreshToken: _r, expiresAt: _e, ...kept } = current;
            return { result: { kind: 'ended' }, entry: { ...kept, updatedAt: new Date().toISOString() } };
          }
          this.o.log.warn(`could not renew the access token: ${err.message}`);
          return { result: { kind: 'failed', message: err.message } };
        }
      });
    } catch (err) {
      if (!(err instanceof TokenFileError)) throw err;
      this.o.log.warn(err.message);
      return { kind: 'failed', message: err.message };
    }
  }
}

/**
 * The credential for serving or --check: the configured key or header when there is one (the
 * token file is not even read), else the sign-in stored for this server, else a configuration
 * error saying how to get either.
 */
export async function resolveCredential(options: BridgeOptions, log: Log, http: HttpSettings): Promise<Credential> {
  if (options.apiKey) return new StaticCredential(options.apiKey, options.credentialSource, options.settingsUrl);
  if (options.headers.authorization !== undefined) return new StaticCredential(undefined, options.credentialSource, options.settingsUrl);
  const store = new TokenStore(options.configDir, undefined, (m) => log.warn(m));
  let entry: StoredSignIn | undefined;
  let version: string | undefined;
  try {
    version = await store.version();
    entry = await store.get(options.endpoint);
  } catch (err) {
    if (err instanceof TokenFileError) throw new BridgeConfigError(err.message);
    throw err;
  }
  if (!entry)
    throw new BridgeConfigError(
      `No API key, and no browser sign-in stored for ${options.endpoint}. Mint a key at ${options.settingsUrl} (Settings → MCP API keys), then set CARECIRCLE_API_KEY in your assistant's configuration or pass --api-key-file PATH; or sign in with your browser once, from a terminal: ${loginCommand(options)}`,
    );
  return new OAuthCredential(store, entry, version, { settingsUrl: options.settingsUrl, loginCommand: loginCommand(options), http, log });
}
