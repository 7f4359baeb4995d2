// MCP protocol versions by era, and the checks a 2026-07-28 request passes before dispatch.
import { RPC } from './codes.js';
import { RpcError } from './errors.js';
import type { RpcRequest } from './envelope.js';

/** The request headers an MCP endpoint's worker reads (lower-case): content negotiation, the
 *  protocol version and the 2026-07-28 routing headers checked against the body. */
export const MCP_REQUEST_HEADERS = ['accept', 'mcp-protocol-version', 'mcp-method', 'mcp-name'] as const;

/** Versions negotiated through `initialize`, oldest first. */
export const LEGACY_PROTOCOL_VERSIONS = ['2025-03-26', '2025-06-18', '2025-11-25'] as const;
/** Versions carried on every request in `params._meta`, without a handshake. */
export const MODERN_PROTOCOL_VERSIONS = ['2026-07-28'] as const;
export const SUPPORTED_PROTOCOL_VERSIONS = [...LEGACY_PROTOCOL_VERSIONS, ...MODERN_PROTOCOL_VERSIONS] as const;
/** The current revision: what discovery documents name first. */
export const CURRENT_PROTOCOL_VERSION = MODERN_PROTOCOL_VERSIONS[0];
/** What a request without any version is taken to speak (MCP allows it for pre-header clients). */
export const DEFAULT_PROTOCOL_VERSION = '2025-03-26';
/** What `initialize` answers to a version it does not know: the newest it can negotiate there. */
export const NEWEST_LEGACY_VERSION = LEGACY_PROTOCOL_VERSIONS[LEGACY_PROTOCOL_VERSIONS.length - 1]!;
/** From this version on, results carry `structuredContent` and tools their `outputSchema`. */
export const STRUCTURED_FROM = '2025-06-18';

export const META = {
  protocolVersion: 'io.modelcontextprotocol/protocolVersion',
  clientCapabilities: 'io.modelcontextprotocol/clientCapabilities',
  serverInfo: 'io.modelcontextprotocol/serverInfo',
} as const;

/** Error codes the 2026-07-28 revision reserves (-32020 to -32099). */
export const MODERN_RPC = { HEADER_MISMATCH: -32020, MISSING_REQUIRED_CLIENT_CAPABILITY: -32021, UNSUPPORTED_PROTOCOL_VERSION: -32022 } as const;

/** Methods whose `Mcp-Name` header mirrors a body field. */
const NAME_SOURCE: Record<string, 'name' | 'uri'> = { 'tools/call': 'name', 'prompts/get': 'name', 'resources/read': 'uri' };

export const isSupportedVersion = (v: string): boolean => (SUPPORTED_PROTOCOL_VERSIONS as readonly string[]).includes(v);
export const isModernVersion = (v: string): boolean => (MODERN_PROTOCOL_VERSIONS as readonly string[]).includes(v);

/**
 * An unknown version: -32022 for a request carrying the 2026-07-28 envelope; a request without it
 * keeps the 2025 era's -32600 (SPEC), with the same list of supported versions.
 */
export const unsupportedVersion = (requested: string, modern = true) =>
  new RpcError(
    modern ? MODERN_RPC.UNSUPPORTED_PROTOCOL_VERSION : RPC.INVALID_REQUEST,
    modern ? 'Unsupported protocol version' : `Unsupported MCP-Protocol-Version "${requested}"`,
    {
      supported: [...SUPPORTED_PROTOCOL_VERSIONS].reverse(),
      requested,
      hint: `Supported versions: ${SUPPORTED_PROTOCOL_VERSIONS.join(', ')}. Omit the header to use ${DEFAULT_PROTOCOL_VERSION}.`,
    },
    400,
  );

const headerMismatch = (detail: string) =>
  new RpcError(
    MODERN_RPC.HEADER_MISMATCH,
    `Header mismatch: ${detail}`,
    { hint: 'Send MCP-Protocol-Version, Mcp-Method and (for tools/call) Mcp-Name headers equal to the body.' },
    400,
  );

/** A header value, decoded when it uses the revision's `=?base64?…?=` form; undefined when that form is broken. */
export function decodeHeaderValue(value: string): string | undefined {
  const wrapped = /^=\?base64\?([A-Za-z0-9+/]*={0,2})\?=$/.exec(value);
  if (!wrapped) return value.startsWith('=?base64?') ? undefined : value;
  const bytes = Buffer.from(wrapped[1]!, 'base64');
  if (bytes.toString('base64') !== wrapped[1]) return undefined;
  return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
}

/** The version a request claims in its `_meta`, if it carries the per-request envelope at all. */
export function envelopeVersion(msg: RpcRequest): unknown {
  const meta = msg.params?._meta;
  return meta && typeof meta === 'object' && META.protocolVersion in meta ? (meta as Record<string, unknown>)[META.protocolVersion] : undefined;
}

/**
 * The revision's checks, in the precedence its servers answer them: version header against the
 * body, the version itself, the envelope, then the routing headers (required on requests only).
 */
export function modernRequestError(msg: RpcRequest, claimed: unknown, headers: Record<string, string>, notification: boolean): RpcError | null {
  const headerVersion = headers['mcp-protocol-version'];
  if (typeof claimed !== 'string') return new RpcError(RPC.INVALID_PARAMS, `Invalid params: _meta.${META.protocolVersion} must be a string`, undefined, 400);
  if (headerVersion !== undefined && headerVersion !== claimed)
    return headerMismatch(`MCP-Protocol-Version header value '${headerVersion}' does not match body value '${claimed}'`);
  if (!isModernVersion(claimed)) return unsupportedVersion(claimed);
  const capabilities = (msg.params?._meta as Record<string, unknown>)[META.clientCapabilities];
  if (!capabilities || typeof capabilities !== 'object' || Array.isArray(capabilities))
    return new RpcError(RPC.INVALID_PARAMS, `Invalid params: _meta.${META.clientCapabilities} is required (an object)`, undefined, 400);
  const method = headers['mcp-method'];
  if (method !== undefined && method !== msg.method) return headerMismatch(`Mcp-Method header value '${method}' does not match body value '${msg.method}'`);
  if (notification) return null;
  if (headerVersion === undefined) return headerMismatch('the MCP-Protocol-Version header is missing');
  if (method === undefined) return headerMismatch('the Mcp-Method header is missing');
  const source = NAME_SOURCE[msg.method];
  if (source) {
    const raw = headers['mcp-name'];
    if (raw === undefined) return headerMismatch('the Mcp-Name header is missing');
    const name = decodeHeaderValue(raw);
    if (name === undefined) return headerMismatch('the Mcp-Name header is not valid =?base64?…?= encoding');
    const body = msg.params?.[source];
    if (name !== body) return headerMismatch(`Mcp-Name header value '${name}' does not match body value '${String(body)}'`);
  }
  return null;
}
