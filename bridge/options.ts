// The bridge's configuration from its arguments and environment, checked once at start. Every
// problem is a BridgeConfigError whose message says what to change; secrets never appear in one.
import { readFileSync, statSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { LOG_LEVELS, type LogLevel } from './log.js';
import { configDir } from './tokenStore.js';
import { COMMAND } from './command.js';

export class BridgeConfigError extends Error {
  override name = 'BridgeConfigError';
}

export const DEFAULT_URL = 'http://localhost:8081/api/mcp';
export const DEFAULT_TIMEOUT_MS = 30_000;
/** The longest the bridge waits on a 429 before its single retry; a longer Retry-After is answered at once. */
export const MAX_RETRY_WAIT_MS = 30_000;
/** The format of an MCP API key (pinned against the service's own in bridge/options.test.ts). */
export const API_KEY_FORMAT = /^sk-svc-[0-9a-f]{64}$/;

/** Headers the bridge sets itself; a --header may not replace them. */
const MANAGED_HEADERS = new Set([
  'accept',
  'connection',
  'content-length',
  'content-type',
  'host',
  'mcp-protocol-version',
  'mcp-session-id',
  'transfer-encoding',
]);
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

export type Mode = 'serve' | 'check' | 'login' | 'logout' | 'help' | 'version';

export interface BridgeOptions {
  mode: Mode;
  /** The MCP endpoint every message is POSTed to. */
  endpoint: string;
  /** The app's base URL (APP_URL), from the endpoint. */
  appUrl: string;
  /** Where a caregiver mints and revokes keys. */
  settingsUrl: string;
  apiKey?: string;
  /** Where the credential came from, for messages (never the credential itself); 'none' when no key or header is configured. */
  credentialSource: string;
  /** Where browser sign-ins (--login) are kept: tokens.json in this directory. */
  configDir: string;
  /** --login opens the system browser (false with CARECIRCLE_NO_BROWSER=1: it only prints the URL). */
  openBrowser: boolean;
  /** Plain http:// to another machine allowed (--allow-http). */
  allowHttp: boolean;
  /** Extra request headers from --header, names in lower case. */
  headers: Record<string, string>;
  timeoutMs: number;
  maxRetryWaitMs: number;
  logLevel: LogLevel;
}

export type KeyFileReader = (path: string) => string;

export function parseOptions(argv: string[], env: NodeJS.ProcessEnv, readKeyFile: KeyFileReader = readApiKeyFile): BridgeOptions {
  if (argv.some((a) => a === '--api-key' || a.startsWith('--api-key=')))
    throw new BridgeConfigError(
      '--api-key is not accepted: other users can read command lines. Put the key in CARECIRCLE_API_KEY, or in a file passed with --api-key-file PATH.',
    );
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        help: { type: 'boolean', short: 'h' },
        version: { type: 'boolean' },
        check: { type: 'boolean' },
        login: { type: 'boolean' },
        logout: { type: 'boolean' },
        'api-key-file': { type: 'string' },
        header: { type: 'string', multiple: true },
        'timeout-ms': { type: 'string' },
        'log-level': { type: 'string' },
        'allow-http': { type: 'boolean' },
      },
    });
  } catch (err) {
    throw new BridgeConfigError(`${(err as Error).message} (see ${COMMAND} --help)`);
  }
  const { values, positionals } = parsed;
  const actions = (['check', 'login', 'logout'] as const).filter((a) => values[a]);
  const mode: Mode = values.help ? 'help' : values.version ? 'version' : (actions[0] ?? 'serve');
  const logLevel = (values['log-level'] ?? 'info') as LogLevel;
  if (!(LOG_LEVELS as readonly string[]).includes(logLevel)) throw new BridgeConfigError(`--log-level must be one of ${LOG_LEVELS.join(', ')}`);
  if (positionals.length > 1) throw new BridgeConfigError(`expected at most one URL argument, got ${positionals.length} (see ${COMMAND} --help)`);

  const allowHttp = values['allow-http'] === true;
  const openBrowser = !['1', 'true', 'yes'].includes((env.CARECIRCLE_NO_BROWSER ?? '').trim().toLowerCase());
  const defaults = {
    credentialSource: 'none',
    headers: {},
    timeoutMs: DEFAULT_TIMEOUT_MS,
    maxRetryWaitMs: MAX_RETRY_WAIT_MS,
    logLevel,
    configDir: configDir(env),
    openBrowser,
    allowHttp,
  };
  // --help and --version work whatever else is wrong.
  if (mode === 'help' || mode === 'version') {
    const fallback = resolveEndpoint(DEFAULT_URL);
    return { mode, endpoint: fallback.endpoint, appUrl: fallback.appBase, settingsUrl: `${fallback.appBase}/settings`, ...defaults };
  }

  if (actions.length > 1) throw new BridgeConfigError(`${actions.map((a) => `--${a}`).join(' and ')} do different things; pass one`);
  const urlSource = positionals[0] ? 'the URL argument' : 'CARECIRCLE_URL';
  const { endpoint, appBase } = resolveEndpoint(positionals[0] ?? (env.CARECIRCLE_URL?.trim() || DEFAULT_URL), urlSource);
  const settingsUrl = `${appBase}/settings`;
  if (!allowHttp) refuseCleartext(endpoint, urlSource);

  const headers: Record<string, string> = {};
  for (const raw of values.header ?? []) {
    const [name, value] = parseHeader(raw, env);
    headers[name.toLowerCase()] = value;
  }

  let apiKey: string | undefined;
  let credentialSource = 'none';
  const keyFile = values['api-key-file'];
  if (keyFile !== undefined) {
    apiKey = readKeyFile(keyFile);
    credentialSource = `--api-key-file ${keyFile}`;
  } else if (env.CARECIRCLE_API_KEY?.trim()) {
    apiKey = env.CARECIRCLE_API_KEY.trim();
    credentialSource = 'CARECIRCLE_API_KEY';
  }
  if (apiKey !== undefined && !API_KEY_FORMAT.test(apiKey))
    throw new BridgeConfigError(
      `The key in ${credentialSource} is not an MCP API key ("sk-svc-" and 64 lower-case hex characters). Copy it again, or mint a new one at ${settingsUrl}.`,
    );
  if (apiKey !== undefined && headers.authorization !== undefined)
    throw new BridgeConfigError(`Both ${credentialSource} and --header "Authorization: …" are set; keep one.`);
  if (headers.authorization !== undefined) credentialSource = '--header Authorization';
  // A configured key always wins: signing in with the browser would store tokens nothing uses.
  if (mode === 'login' && credentialSource !== 'none')
    throw new BridgeConfigError(
      `--login signs in with your browser instead of a key, but ${credentialSource} is set and a configured key always wins. Remove it from this command's environment to sign in.`,
    );
  // With no key or header, the bridge uses the sign-in stored by --login (bridge/credentials.ts), or says how to get one.

  const timeoutMs = values['timeout-ms'] === undefined ? DEFAULT_TIMEOUT_MS : Number(values['timeout-ms']);
  if (!Number.isInteger(timeoutMs) || timeoutMs < 100 || timeoutMs > 600_000)
    throw new BridgeConfigError('--timeout-ms must be a whole number of milliseconds from 100 to 600000');

  return { mode, endpoint, appUrl: appBase, settingsUrl, ...defaults, ...(apiKey === undefined ? {} : { apiKey }), credentialSource, headers, timeoutMs };
}

/** The command that signs in for this endpoint (the URL only when it is not the default). */
export function loginCommand(o: Pick<BridgeOptions, 'endpoint' | 'appUrl'>): string {
  return o.endpoint === resolveEndpoint(DEFAULT_URL).endpoint ? `${COMMAND} --login` : `${COMMAND} --login ${o.appUrl}`;
}

/** The MCP endpoint for a URL that names either the app (`http://host:8081`) or the endpoint itself. */
export function resolveEndpoint(raw: string, source = 'CARECIRCLE_URL'): { endpoint: string; appBase: string } {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new BridgeConfigError(`${source} "${raw}" is not a URL; use the app URL, for example http://localhost:8081`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new BridgeConfigError(`${source} must start with https:// or http://, not ${url.protocol}//`);
  if (url.username || url.password) throw new BridgeConfigError(`${source} must not hold a user name or password; the key goes in CARECIRCLE_API_KEY`);
  url.hash = '';
  const path = url.pathname.replace(/\/+$/, '');
  // The sandbox endpoint is kept as given, so --check can say what it is and name the app URL.
  if (path.endsWith('/api/mcp/public')) {
    url.pathname = path;
    return { endpoint: url.href, appBase: `${url.origin}${path.slice(0, -'/api/mcp/public'.length)}` };
  }
  const basePath = path.endsWith('/api/mcp') ? path.slice(0, -'/api/mcp'.length) : path;
  url.pathname = `${basePath}/api/mcp`;
  return { endpoint: url.href, appBase: `${url.origin}${basePath}` };
}

export function isLoopback(hostname: string): boolean {
  const h = hostname.toLowerCase();
  return h === 'localhost' || h.endsWith('.localhost') || /^127\.\d+\.\d+\.\d+$/.test(h) || h === '[::1]';
}

/** A key sent over plain HTTP to another machine can be read on the way. */
function refuseCleartext(endpoint: string, source: string): void {
  const url = new URL(endpoint);
  if (url.protocol === 'http:' && !isLoopback(url.hostname))
    throw new BridgeConfigError(
      `${source} uses plain http:// to ${url.host}, which would send your key or tokens unencrypted. Use https://, or pass --allow-http if the network is private.`,
    );
}

/** "Name: value" with ${VAR} replaced from the environment (so a value with spaces need not sit in args). */
export function parseHeader(raw: string, env: NodeJS.ProcessEnv): [string, string] {
  const colon = raw.indexOf(':');
  const name = colon > 0 ? raw.slice(0, colon).trim() : '';
  if (!HEADER_NAME.test(name)) throw new BridgeConfigError(`--header needs "Name: value"; got one without a valid name before ":"`);
  if (MANAGED_HEADERS.has(name.toLowerCase())) throw new BridgeConfigError(`--header ${name}: the bridge sets this header itself`);
  const value = raw
    .slice(colon + 1)
    .trim()
    .replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_, variable: string) => {
      const v = env[variable];
      if (v === undefined) throw new BridgeConfigError(`--header ${name}: environment variable ${variable} is not set`);
      return v;
    });
  if (/[\r\n\0]/.test(value)) throw new BridgeConfigError(`--header ${name}: the value holds a line break`);
  return [name, value];
}

/** The key in a file only its owner can read (like ssh with private keys); refused otherwise. */
export function readApiKeyFile(path: string): string {
  let stat;
  try {
    stat = statSync(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new BridgeConfigError(code === 'ENOENT' ? `--api-key-file ${path}: no such file` : `--api-key-file ${path}: cannot read it (${code ?? String(err)})`);
  }
  if (!stat.isFile()) throw new BridgeConfigError(`--api-key-file ${path}: not a regular file`);
  // Windows has no POSIX modes; there the file's ACL is the user's business.
  if (process.platform !== 'win32' && (stat.mode & 0o077) !== 0) {
    const mode = (stat.mode & 0o777).toString(8).padStart(4, '0');
    throw new BridgeConfigError(`--api-key-file ${path} is open to other users (mode ${mode}); make it yours alone: chmod 600 ${path}`);
  }
  let text: string;
  try {
    text = readFileSync(path, 'utf8').trim();
  } catch (err) {
    throw new BridgeConfigError(`--api-key-file ${path}: cannot read it (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
  }
  if (!text) throw new BridgeConfigError(`--api-key-file ${path} is empty; paste the key (sk-svc-…) into it`);
  return text;
}

/** "sk-svc-…1a2b": enough to match the key in Settings, never the key. */
export const describeKey = (key: string): string => `sk-svc-…${key.slice(-4)}`;
