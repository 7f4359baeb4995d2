// Client ID Metadata Documents (draft-ietf-oauth-client-id-metadata-document): the fetch that
// oidc-provider's clientIdMetadataDocument feature is configured with, and the rules it enforces
// before the provider sees a byte (addresses, redirects, time, size, content type, our client rules).
import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { request } from 'node:https';
import { BlockList, isIP } from 'node:net';
import { rootCertificates } from 'node:tls';

/** The draft's suggested ceiling, and oidc-provider's own limit for these documents. */
export const METADATA_MAX_BYTES = 5 * 1024;
/** How long a fetched document is trusted, whatever its Cache-Control says (seconds). */
export const METADATA_CACHE_SECONDS = { min: 60, max: 24 * 60 * 60 };

/** A document carecircle will not use; the message is shown to the developer as `error_description`. */
export class MetadataRefusal extends Error {
  override name = 'MetadataRefusal';
}

/** The refusal behind an oidc-provider error (it wraps what our fetch throws as its `cause`), if any. */
export function refusalIn(err: unknown): MetadataRefusal | undefined {
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 4; e = e.cause, depth++) if (e instanceof MetadataRefusal) return e;
  return undefined;
}

// Loopback, private, link-local, shared, multicast and reserved ranges: nothing a public client
// document lives on, everything a request forged through the authorization server could reach.
const SPECIAL_USE = new BlockList();
for (const [net, bits] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 3],
] as const)
  SPECIAL_USE.addSubnet(net, bits, 'ipv4');
for (const [net, bits] of [
  ['::', 128],
  ['::1', 128],
  ['64:ff9b::', 96],
  ['64:ff9b:1::', 48],
  ['100::', 64],
  ['2001::', 23],
  ['2001:db8::', 32],
  ['2002::', 16],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
] as const)
  SPECIAL_USE.addSubnet(net, bits, 'ipv6');

/** Whether an address is one a metadata document may not be fetched from (not a public unicast address). */
export function specialUseAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return SPECIAL_USE.check(address, 'ipv4');
  if (family !== 6) return true;
  // An IPv4-mapped address reaches the IPv4 host, in either spelling (the URL parser writes hex).
  const dotted = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1];
  const hex = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(address);
  const v4 = dotted ?? (hex ? [parseInt(hex[1]!, 16), parseInt(hex[2]!, 16)].flatMap((n) => [n >> 8, n & 255]).join('.') : undefined);
  return v4 ? SPECIAL_USE.check(v4, 'ipv4') : SPECIAL_USE.check(address, 'ipv6');
}

/**
 * Why a client_id shaped like a URL cannot be a metadata document URL (draft §3: https, a path, no
 * fragment, no credentials, no dot segments), or undefined when it can.
 */
export function clientIdUrlProblem(id: string): string | undefined {
  const url = URL.parse(id);
  if (!url) return `client_id ${id} is not a valid URL`;
  if (url.protocol !== 'https:') return `client_id ${id} is a URL but not https; a Client ID Metadata Document must be served over https`;
  if (id.includes('#')) return `client_id ${id} has a fragment; remove it`;
  if (url.username || url.password) return `client_id ${id} carries credentials; remove them`;
  const rawPath = id
    .slice('https://'.length)
    .replace(/^[^/?]*/, '')
    .split('?')[0]!;
  if (!rawPath || rawPath === '/') return `client_id ${id} has no path; serve the document at a path such as https://${url.host}/oauth/client.json`;
  if (rawPath.split('/').some((s) => /^(\.|%2e){1,2}$/i.test(s))) return `client_id ${id} has . or .. path segments; use the normalised URL`;
  return undefined;
}

export interface MetadataFetchPolicy {
  timeoutMs: number;
  /** Development only: fetch from loopback, private and link-local addresses. */
  allowPrivateAddresses: boolean;
  /** Development only: PEM certificates trusted besides the public roots. */
  extraCa: string[];
  /** Told of every document that passed, once per fetch (so at most once per cache period). */
  onAccepted?: (url: string, doc: object) => void;
}

const isJson = (type: string | undefined) => !!type && /^application\/([a-z0-9.+-]+\+)?json$/i.test(type.split(';')[0]!.trim());
const isLoopbackHttp = (uri: URL) =>
  uri.protocol === 'http:' && (uri.hostname === 'localhost' || uri.hostname === '[::1]' || /^127(\.\d{1,3}){3}$/.test(uri.hostname));

/** Our rules for a document's content, beyond the draft's: a named, public client with usable redirect URIs. */
export function documentProblem(url: string, doc: unknown): string | undefined {
  if (!doc || typeof doc !== 'object' || Array.isArray(doc)) return 'is not a JSON object';
  const d = doc as Record<string, unknown>;
  if (d.client_id !== url)
    return `has client_id ${JSON.stringify(d.client_id ?? null)}, which is not the URL it was fetched from (${url}); the two must be equal, character for character`;
  if (typeof d.client_name !== 'string' || !d.client_name.trim() || d.client_name.length > 200)
    return 'needs a client_name (a string of 1 to 200 characters): the caregiver is asked to approve the app by that name';
  if (d.token_endpoint_auth_method !== undefined && d.token_endpoint_auth_method !== 'none')
    return `has token_endpoint_auth_method ${JSON.stringify(d.token_endpoint_auth_method)}; only public clients are accepted here: set it to "none" or leave it out`;
  if ('client_secret' in d || 'client_secret_expires_at' in d) return 'contains client_secret; a metadata document is public, so it must not carry a secret';
  const uris = d.redirect_uris;
  if (!Array.isArray(uris) || !uris.length || !uris.every((u) => typeof u === 'string'))
    return 'needs redirect_uris: a non-empty array of the URLs the app receives its authorization code at';
  for (const uri of uris as string[]) {
    const parsed = URL.parse(uri);
    if (!parsed || parsed.hash) return `lists redirect URI ${uri}, which is not an absolute URL without a fragment`;
    if (parsed.protocol === 'http:' && !isLoopbackHttp(parsed))
      return `lists redirect URI ${uri}; use https, or http only on a loopback address (http://127.0.0.1:<port>/…)`;
  }
  return undefined;
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * The `fetch` oidc-provider uses for metadata documents. The host is resolved and every address
 * checked before a connection is opened (and that checked address is the one connected to);
 * redirects are answered, never followed; the body is cut at METADATA_MAX_BYTES; the whole exchange
 * has `timeoutMs`. A document that passes comes back as a plain 200 response for the provider to
 * parse and cache, so what the provider sees is exactly what was checked here.
 */
export function metadataFetch(policy: MetadataFetchPolicy): (input: string | URL | Request, init?: RequestInit) => Promise<Response> {
  const ca = policy.extraCa.length ? [...rootCertificates, ...policy.extraCa] : undefined;
  const checkAddress = (host: string, address: string) => {
    if (!policy.allowPrivateAddresses && specialUseAddress(address))
      throw new MetadataRefusal(
        `client_id metadata document host ${host} resolves to ${address}, a loopback, private or otherwise special-use address; serve the document from a public address`,
      );
  };
  const lookup = (host: string, options: LookupOptions, callback: LookupCallback) => {
    dnsLookup(host, { ...options, all: true }, (err, addresses) => {
      if (err)
        return callback(
          Object.assign(new MetadataRefusal(`client_id metadata document host ${host} could not be resolved (${err.code ?? err.message})`), { code: err.code }),
          [],
        );
      try {
        for (const a of addresses) checkAddress(host, a.address);
      } catch (refusal) {
        return callback(refusal as MetadataRefusal, []);
      }
      if (options.all) callback(null, addresses);
      else callback(null, addresses[0]!.address, addresses[0]!.family);
    });
  };

  return (input, init) =>
    new Promise<Response>((resolve, reject) => {
      const url = input instanceof Request ? input.url : String(input);
      const target = new URL(url);
      const problem = clientIdUrlProblem(url);
      if (problem) return reject(new MetadataRefusal(problem));
      const literal = target.hostname.replace(/^\[|\]$/g, '');
      try {
        if (isIP(literal)) checkAddress(target.hostname, literal);
      } catch (refusal) {
        return reject(refusal as Error);
      }
      const req = request(target, {
        method: 'GET',
        agent: false,
        lookup: lookup as never,
        ...(ca ? { ca } : {}),
        headers: { accept: 'application/json', 'user-agent': 'carecircle-authorization-server' },
      });
      const fail = (err: Error) => {
        req.destroy();
        reject(err);
      };
      const timer = setTimeout(
        () =>
          fail(new MetadataRefusal(`client_id metadata document ${url} did not arrive within ${policy.timeoutMs} ms; serve it faster (a small static file)`)),
        policy.timeoutMs,
      );
      init?.signal?.addEventListener('abort', () => fail(new MetadataRefusal(`client_id metadata document ${url} did not arrive in time`)), { once: true });
      req.on('error', (err) => {
        clearTimeout(timer);
        reject(err instanceof MetadataRefusal ? err : new MetadataRefusal(`client_id metadata document ${url} could not be fetched: ${err.message}`));
      });
      req.on('response', (res) => {
        const status = res.statusCode ?? 0;
        const type = res.headers['content-type'];
        const declared = Number(res.headers['content-length'] ?? 0);
        const refuse = (why: string) => {
          clearTimeout(timer);
          fail(new MetadataRefusal(`client_id metadata document ${url} ${why}`));
        };
        if (status >= 300 && status < 400)
          return refuse(
            `answered with a redirect (${status} to ${res.headers.location ?? 'nowhere'}); redirects are not followed: serve the document at the client_id URL itself`,
          );
        if (status !== 200) return refuse(`answered HTTP ${status}; it must answer 200 with the document`);
        if (!isJson(type)) return refuse(`has content type ${type ?? '(none)'}; serve it as application/json`);
        if (declared > METADATA_MAX_BYTES) return refuse(`is ${declared} bytes; at most ${METADATA_MAX_BYTES} bytes are read`);
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > METADATA_MAX_BYTES) return refuse(`is larger than ${METADATA_MAX_BYTES} bytes, the most that is read`);
          chunks.push(chunk);
        });
        res.on('end', () => {
          clearTimeout(timer);
          if (size > METADATA_MAX_BYTES) return;
          const body = Buffer.concat(chunks);
          let doc: unknown;
          try {
            doc = JSON.parse(body.toString('utf8'));
          } catch {
            return reject(new MetadataRefusal(`client_id metadata document ${url} is not valid JSON`));
          }
          const wrong = documentProblem(url, doc);
          if (wrong) return reject(new MetadataRefusal(`client_id metadata document ${url} ${wrong}`));
          policy.onAccepted?.(url, doc as object);
          const headers: Record<string, string> = { 'content-type': 'application/json' };
          for (const name of ['cache-control', 'expires'] as const) if (typeof res.headers[name] === 'string') headers[name] = res.headers[name];
          resolve(new Response(body, { status: 200, headers }));
        });
        res.on('error', (err) => refuse(`could not be read: ${err.message}`));
      });
      req.end();
    });
}
