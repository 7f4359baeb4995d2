// Every listener answers only for its own public host or the address it was reached on, so a
// page on another site that rebinds its DNS name to carecircle's address gets nothing (421).
import type { IncomingMessage } from 'node:http';
import type { Context, Next } from 'koa';
import type { Config } from '../config.js';
import { sendApiError } from '../http/apiError.js';

export type PublicSurface = 'site' | 'app' | 'auth' | 'pipe' | 'apex';

/** The public URL a listener is known by, from configuration. */
export function publicUrlOf(config: Pick<Config, 'siteUrl' | 'appUrl' | 'authUrl' | 'pipeUrl' | 'apexUrl'>, surface: PublicSurface): string {
  return { site: config.siteUrl, app: config.appUrl, auth: config.authUrl, pipe: config.pipeUrl, apex: config.apexUrl }[surface];
}

interface HostName {
  hostname: string;
  /** The port the name carries, or undefined when it carries none. */
  port: string | undefined;
}

/** `host[:port]` as a Host header carries it; undefined when it is anything more (userinfo, a path). */
function parseHost(value: string): HostName | undefined {
  if (!value || value.length > 300 || /[\s/\\?#@]/.test(value)) return undefined;
  const url = URL.parse(`http://${value}`);
  if (!url) return undefined;
  // URL drops a port equal to the scheme default; keep what the client wrote.
  const written = /:(\d+)$/.exec(value)?.[1];
  return { hostname: url.hostname, port: written === undefined ? undefined : String(Number(written)) };
}

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);
/** A socket address as a URL hostname: IPv4-mapped IPv6 unwrapped, IPv6 in brackets. */
const asHostname = (address: string | undefined): string => {
  const plain = (address ?? '').replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/, '');
  return plain.includes(':') ? `[${plain}]` : plain;
};

/**
 * Refuses a request whose Host (and, behind a trusted proxy, X-Forwarded-Host) is neither the
 * listener's public host nor the address and port the connection arrived on (an IP literal or a
 * loopback name, which DNS rebinding cannot produce). Absolute-form request targets are held to
 * the same rule, since they override Host.
 */
export function refuse_foreign_host(publicUrl: string, trustProxy: boolean) {
  const rule = hostRule(publicUrl, trustProxy);
  return async (ctx: Context, next: Next): Promise<void> => {
    const foreign = rule.foreignHost(ctx.req);
    if (foreign === undefined) return next();
    sendApiError(ctx, 421, 'MISDIRECTED_REQUEST', `This server does not answer for host ${JSON.stringify(foreign.slice(0, 100))}`, `Use ${rule.origin}.`);
  };
}

/** The Host rule of refuse_foreign_host on the bare request: the first name it does not serve, or undefined. */
export function hostRule(publicUrl: string, trustProxy: boolean) {
  const pub = new URL(publicUrl);
  const pubPort = pub.port || (pub.protocol === 'https:' ? '443' : '80');
  const isPublic = (h: HostName) => h.hostname === pub.hostname && (h.port === undefined ? !pub.port : h.port === pubPort);
  const isLocal = (h: HostName, req: IncomingMessage) =>
    (LOOPBACK.has(h.hostname) || h.hostname === asHostname(req.socket.localAddress)) && (h.port ?? '80') === String(req.socket.localPort);
  // Clients send the same few Host values over and over: each is parsed once (the memo is bounded,
  // since the values are the client's to choose).
  const parsed = new Map<string, HostName | undefined>();
  const parsedHost = (value: string): HostName | undefined => {
    if (parsed.has(value)) return parsed.get(value);
    const h = parseHost(value.trim().toLowerCase());
    if (parsed.size >= 64) parsed.clear();
    parsed.set(value, h);
    return h;
  };
  const served = (value: string, req: IncomingMessage) => {
    const h = parsedHost(value);
    return !!h && (isPublic(h) || isLocal(h, req));
  };
  const foreignHost = (req: IncomingMessage): string | undefined => {
    // As Koa's ctx.get reads them: an absent header is ''.
    const named = [req.headers.host || ''];
    const forwarded = req.headers['x-forwarded-host'];
    if (trustProxy && forwarded) named.push((Array.isArray(forwarded) ? forwarded.join(', ') : forwarded).split(',')[0]!);
    const target = req.url ?? '/';
    if (!target.startsWith('/') && target !== '*') named.push(URL.parse(target)?.host ?? '');
    return named.find((h) => !served(h, req));
  };
  return { origin: pub.origin, foreignHost };
}
