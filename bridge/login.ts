// `carecircle-mcp --login` and `--logout`: the OAuth flow of a native app (RFC 8252) run once
// from a terminal. Discovery, a registered public client (remembered per server), PKCE S256, a
// loopback callback on 127.0.0.1, the system browser (or the URL printed), a bounded wait, and the
// tokens stored 0600. Everything is said on stderr: stdout stays free for the protocol.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import {
  authorizationUrl,
  clientExists,
  discover,
  OAuthError,
  pkce,
  registerClient,
  revokeToken,
  tokenRequest,
  type AuthorizationServer,
  type HttpSettings,
} from './oauth.js';
import { loginCommand, type BridgeOptions } from './options.js';
import { TokenFileError, TokenStore, type StoredSignIn } from './tokenStore.js';

/** How long --login waits for the browser to come back. */
export const LOGIN_WAIT_MS = 5 * 60_000;
export const CALLBACK_PATH = '/callback';

export interface LoginContext {
  options: BridgeOptions;
  http: HttpSettings;
  version: string;
  /** One line to stderr. */
  say: (line: string) => void;
  waitMs?: number;
}

/**
 * Listens on 127.0.0.1: on `preferred` (the port registered before) when it is free, else on a
 * port the system picks. A busy port is never an error.
 */
export async function listenLoopback(handler: (req: IncomingMessage, res: ServerResponse) => void, preferred?: number): Promise<Server> {
  const listen = async (port: number): Promise<Server> => {
    const server = createServer(handler);
    server.listen(port, '127.0.0.1');
    await once(server, 'listening');
    return server;
  };
  if (preferred) {
    try {
      return await listen(preferred);
    } catch (err) {
      if (!['EADDRINUSE', 'EACCES'].includes((err as NodeJS.ErrnoException).code ?? '')) throw err;
    }
  }
  return listen(0);
}

/** Opens `url` in the system browser; false when that is off or impossible (the URL is printed either way). */
export function openBrowser(url: string, say: (line: string) => void): Promise<boolean> {
  // rundll32 is what `start` does, without cmd.exe reading & and % in the URL.
  const [command, args] =
    process.platform === 'darwin' ? ['open', [url]] : process.platform === 'win32' ? ['rundll32', ['url.dll,FileProtocolHandler', url]] : ['xdg-open', [url]];
  return new Promise((resolve) => {
    let child;
    try {
      child = spawn(command, args as string[], { stdio: 'ignore', detached: true });
    } catch {
      return resolve(false);
    }
    child.once('error', (err: NodeJS.ErrnoException) => {
      say(`could not start ${command} (${err.code ?? err.message}); open the URL above yourself`);
      resolve(false);
    });
    child.once('spawn', () => resolve(true));
    child.once('exit', (code) => {
      if (code) say(`${command} could not open a browser (exit ${code}); open the URL above yourself`);
    });
    child.unref();
  });
}

const page = (title: string, text: string): string =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title></head><body><h1>${title}</h1><p>${text}</p></body></html>`;
const escape = (s: string): string => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

type Callback = { code: string } | { error: string };

/** Runs --login; resolves to the exit status. */
export async function runLogin(ctx: LoginContext): Promise<number> {
  const { options, http, say } = ctx;
  const store = new TokenStore(options.configDir, undefined, say);
  const server = options.endpoint;
  say(`signing in to ${server}`);
  let discovery;
  let remembered: StoredSignIn | undefined;
  try {
    [discovery, remembered] = await Promise.all([discover(server, http), store.get(server)]);
  } catch (err) {
    return failed(say, err);
  }
  const { as, resource } = discovery;
  const scope = discovery.scopes.join(' ');

  // The callback first: registration needs its address.
  let settle!: (outcome: Callback) => void;
  const outcome = new Promise<Callback>((resolve) => (settle = resolve));
  const state = randomBytes(16).toString('base64url');
  const verifier = pkce();
  const onRequest = (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const reply = (status: number, title: string, text: string) =>
      res
        .writeHead(status, {
          'content-type': 'text/html; charset=utf-8',
          'cache-control': 'no-store',
          'content-security-policy': "default-src 'none'",
          'referrer-policy': 'no-referrer',
        })
        .end(page(title, text));
    if (req.method !== 'GET' || url.pathname !== CALLBACK_PATH) return reply(404, 'Not found', 'This address only receives the carecircle sign-in.');
    // Someone else's request (a stale tab, another site): refuse it, keep waiting for ours.
    if (url.searchParams.get('state') !== state)
      return reply(400, 'Sign-in not recognised', 'This answer does not belong to the sign-in carecircle-mcp is waiting for. Start again from the terminal.');
    const iss = url.searchParams.get('iss');
    if ((iss !== null || as.issParameter) && iss !== as.issuer)
      return reply(400, 'Sign-in not recognised', 'The answer came from another authorization server.');
    const error = url.searchParams.get('error');
    if (error) {
      const description = url.searchParams.get('error_description');
      reply(
        200,
        'Sign-in not completed',
        `carecircle answered ${escape(error)}${description ? `: ${escape(description)}` : ''}. You can close this tab; the terminal says what to do next.`,
      );
      return settle({
        error: error === 'access_denied' ? 'you chose Deny on the consent page (access_denied)' : `${error}${description ? ` (${description})` : ''}`,
      });
    }
    const code = url.searchParams.get('code');
    if (!code) return reply(400, 'Sign-in not recognised', 'The answer carries no authorization code.');
    reply(200, 'carecircle-mcp is signed in', 'You can close this tab and go back to your assistant.');
    settle({ code });
  };
  const preferredPort = remembered?.issuer === as.issuer ? Number(URL.parse(remembered.redirectUri)?.port) || undefined : undefined;
  const callback = await listenLoopback(onRequest, preferredPort);
  const redirectUri = `http://127.0.0.1:${(callback.address() as AddressInfo).port}${CALLBACK_PATH}`;
  const stop = () => new Promise<void>((resolve) => callback.close(() => resolve()).closeAllConnections());
  const interrupted = () => {
    say('cancelled');
    void stop().then(() => process.exit(130));
  };
  process.once('SIGINT', interrupted);

  try {
    // The client registered before on this server, if the server still knows it; else a new one.
    let clientId = remembered?.issuer === as.issuer ? remembered.clientId : undefined;
    let registeredUri = remembered?.redirectUri ?? redirectUri;
    if (clientId && !(await clientExists(as, clientId, http))) {
      say(`the client registered before (${clientId}) is gone from ${as.issuer}; registering again`);
      clientId = undefined;
    }
    if (!clientId) {
      clientId = await registerClient(
        as,
        { clientName: `carecircle-mcp on ${os.hostname()}`.slice(0, 120), redirectUri, scope, softwareVersion: ctx.version },
        http,
      );
      registeredUri = redirectUri;
      // Remembered at once, so an abandoned sign-in does not register another client next time.
      // Tokens of a client the server no longer knows are dead: they are not carried over.
      const client: StoredSignIn = { ...endpointsOf(server, resource, as), clientId, redirectUri, updatedAt: new Date().toISOString() };
      await store.transaction(server, async () => ({ result: undefined, entry: client }));
      say(`registered this bridge with ${as.issuer} as "carecircle-mcp on ${os.hostname()}"`);
    }

    const url = authorizationUrl(as, { clientId, redirectUri, scope, state, challenge: verifier.challenge, resource });
    say(`waiting up to ${Math.round((ctx.waitMs ?? LOGIN_WAIT_MS) / 60_000)} minutes for the sign-in to come back to ${redirectUri} (Ctrl-C cancels)`);
    say(
      options.openBrowser
        ? 'opening your browser to sign in and choose what the assistant may read; if it does not open, visit:'
        : 'open this address in a browser to sign in and choose what the assistant may read (CARECIRCLE_NO_BROWSER is set):',
    );
    say(`  ${url.href}`);
    if (options.openBrowser) await openBrowser(url.href, say);

    let timer: NodeJS.Timeout | undefined;
    const answer = await Promise.race([
      outcome,
      new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), ctx.waitMs ?? LOGIN_WAIT_MS))),
    ]);
    clearTimeout(timer);
    if (answer === 'timeout') {
      say(
        `no answer from the browser within ${Math.round((ctx.waitMs ?? LOGIN_WAIT_MS) / 1000)} s; nothing was stored. Run ${loginCommand(options)} again when you are ready.`,
      );
      return 1;
    }
    if ('error' in answer) {
      say(`not signed in: ${answer.error}. Nothing was stored; run ${loginCommand(options)} again to retry.`);
      return 1;
    }

    const tokens = await tokenRequest(
      as.tokenEndpoint,
      { grant_type: 'authorization_code', code: answer.code, redirect_uri: redirectUri, client_id: clientId, code_verifier: verifier.verifier, resource },
      http,
    );
    const entry: StoredSignIn = {
      ...endpointsOf(server, resource, as),
      clientId,
      redirectUri: registeredUri,
      accessToken: tokens.accessToken,
      ...(tokens.refreshToken ? { refreshToken: tokens.refreshToken } : {}),
      expiresAt: new Date(tokens.expiresAt).toISOString(),
      scope: tokens.scope ?? scope,
      updatedAt: new Date().toISOString(),
    };
    const previous = await store.transaction(server, async (current) => ({ result: current, entry }));
    // A sign-in this one replaces under another grant is revoked, so it does not linger in Settings →
    // Connected apps. Never under the same grant: revoking a token revokes its whole grant.
    const before = grantOf(previous?.accessToken);
    if (
      previous?.refreshToken &&
      previous.revocationEndpoint &&
      previous.clientId === clientId &&
      before &&
      grantOf(entry.accessToken) &&
      before !== grantOf(entry.accessToken)
    )
      await revokeToken(previous.revocationEndpoint, { token: previous.refreshToken, clientId }, http).catch(() => {});

    const granted = (entry.scope ?? '').split(' ').filter(Boolean);
    const declined = discovery.scopes.filter((s) => !granted.includes(s));
    say(
      `signed in. Granted: ${granted.join(', ') || 'none'}.${declined.length ? ` Not granted: ${declined.join(', ')} (tools that need it answer -32001; run ${loginCommand(options)} again to add it).` : ''}`,
    );
    if (!entry.refreshToken) say('the server issued no refresh token: the sign-in lasts until the access token expires');
    say(`tokens stored in ${store.file}; your assistant's carecircle-mcp uses them when no API key is configured.`);
    return 0;
  } catch (err) {
    return failed(say, err);
  } finally {
    process.off('SIGINT', interrupted);
    await stop();
  }
}

/** Runs --logout: revokes the stored refresh token at the server and deletes the entry. */
export async function runLogout(ctx: LoginContext): Promise<number> {
  const { options, http, say } = ctx;
  const store = new TokenStore(options.configDir, undefined, say);
  try {
    if (!(await store.get(options.endpoint))) {
      say(`not signed in to ${options.endpoint}; nothing to do`);
      return 0;
    }
    return await store.transaction<number>(options.endpoint, async (entry) => {
      if (!entry) {
        say(`not signed in to ${options.endpoint}; nothing to do`);
        return { result: 0 };
      }
      let revoked = false;
      let problem: string | undefined;
      if (entry.refreshToken && entry.revocationEndpoint) {
        try {
          await revokeToken(entry.revocationEndpoint, { token: entry.refreshToken, clientId: entry.clientId }, http);
          revoked = true;
        } catch (err) {
          problem = (err as Error).message;
        }
      }
      say(`signed out of ${options.endpoint}; removed its tokens from ${store.file}`);
      if (revoked) say('the sign-in was revoked at carecircle: its tokens no longer work anywhere');
      else if (problem)
        say(`could not revoke it at carecircle (${problem}); to be sure, revoke "carecircle-mcp" in Settings → Connected apps: ${options.settingsUrl}`);
      return { result: problem ? 1 : 0, entry: null };
    });
  } catch (err) {
    return failed(say, err);
  }
}

function endpointsOf(
  server: string,
  resource: string,
  as: AuthorizationServer,
): Pick<StoredSignIn, 'server' | 'resource' | 'issuer' | 'tokenEndpoint' | 'revocationEndpoint'> {
  return {
    server,
    ...(resource !== server ? { resource } : {}),
    issuer: as.issuer,
    tokenEndpoint: as.tokenEndpoint,
    ...(as.revocationEndpoint ? { revocationEndpoint: as.revocationEndpoint } : {}),
  };
}

/** The `grant_id` claim of a JWT access token (read, not verified: it only decides whether to revoke our own old token). */
function grantOf(accessToken: string | undefined): string | undefined {
  try {
    const payload = JSON.parse(Buffer.from(accessToken?.split('.')[1] ?? '', 'base64url').toString('utf8')) as { grant_id?: unknown };
    return typeof payload.grant_id === 'string' ? payload.grant_id : undefined;
  } catch {
    return undefined;
  }
}

function failed(say: (line: string) => void, err: unknown): number {
  if (err instanceof OAuthError || err instanceof TokenFileError) {
    say(err.message);
    return 1;
  }
  throw err;
}
