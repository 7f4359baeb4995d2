// The 2026-07-28 revision's HTTP routing headers for one stdin message: a message carrying the
// per-request `_meta` envelope is sent with the version, method and name it states, so an
// assistant speaking either era reaches the server as it would over HTTP.

const VERSION_META = 'io.modelcontextprotocol/protocolVersion';
/** Methods whose `Mcp-Name` header mirrors a body field. */
const NAME_SOURCE: Record<string, 'name' | 'uri'> = { 'tools/call': 'name', 'prompts/get': 'name', 'resources/read': 'uri' };

/** A header value as the revision carries it: as is when plain visible ASCII, else `=?base64?…?=`. */
export function headerValue(value: string): string {
  return /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/.test(value) ? value : `=?base64?${Buffer.from(value, 'utf8').toString('base64')}?=`;
}

/** The version a message states in `params._meta`, if it carries the 2026-07-28 envelope. */
export function statedVersion(value: Record<string, unknown>): string | undefined {
  const params = value.params;
  const meta = params && typeof params === 'object' ? (params as Record<string, unknown>)._meta : undefined;
  const version = meta && typeof meta === 'object' ? (meta as Record<string, unknown>)[VERSION_META] : undefined;
  return typeof version === 'string' ? version : undefined;
}

/** Routing headers for a 2026-07-28 message; none for a 2025-era one (its version comes from initialize). */
export function routingHeaders(value: Record<string, unknown>, method: string): Record<string, string> | undefined {
  const version = statedVersion(value);
  if (version === undefined) return undefined;
  const headers: Record<string, string> = { 'mcp-protocol-version': headerValue(version), 'mcp-method': headerValue(method) };
  const source = NAME_SOURCE[method];
  const name = source ? (value.params as Record<string, unknown>)[source] : undefined;
  if (typeof name === 'string' && name !== '') headers['mcp-name'] = headerValue(name);
  return headers;
}
