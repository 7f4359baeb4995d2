// For --check: which of carecircle's MCP endpoints a URL reached, from the endpoint's own answers,
// and which workspace tools a credential's scopes let it call.
import { grantCovers, TOOL_SCOPES as WORKSPACE_TOOL_SCOPES } from '../src/workspace/scopes.js';
import { resourceMetadataFrom } from './oauth.js';
import type { BridgeOptions } from './options.js';

export type EndpointKind = 'workspace' | 'directory' | 'sandbox';

/** The `name` each endpoint gives in its GET descriptor and `initialize` serverInfo. */
const NAMES: Record<string, EndpointKind> = {
  'carecircle-workspace': 'workspace',
  'carecircle-directory': 'directory',
  'carecircle-sandbox': 'sandbox',
};

export const kindOfName = (name: unknown): EndpointKind | undefined => (typeof name === 'string' ? NAMES[name] : undefined);

/**
 * GET the endpoint with no credential: the directory and the sandbox answer their descriptor, the
 * workspace a 401 naming its resource metadata. Undefined when the answer says neither; the
 * JSON-RPC steps then report what is wrong. No credential goes out, so a key never reaches an
 * endpoint that is not the workspace.
 */
export async function identifyEndpoint(o: Pick<BridgeOptions, 'endpoint' | 'timeoutMs'>, userAgent: string): Promise<EndpointKind | undefined> {
  try {
    const res = await fetch(o.endpoint, {
      method: 'GET',
      headers: { accept: 'application/json', 'user-agent': userAgent },
      redirect: 'manual',
      signal: AbortSignal.timeout(o.timeoutMs),
    });
    const text = await res.text();
    if (res.status === 401 && resourceMetadataFrom(res.headers.get('www-authenticate'))) return 'workspace';
    if (res.status !== 200) return undefined;
    return kindOfName((JSON.parse(text) as { name?: unknown } | null)?.name);
  } catch {
    // Unreachable, or not JSON: the initialize step says why, with its fix.
    return undefined;
  }
}

/** What the wrong endpoint is and what to set instead, for the FAIL line. */
export function wrongEndpoint(kind: Exclude<EndpointKind, 'workspace'>, o: Pick<BridgeOptions, 'endpoint' | 'appUrl'>): { message: string; hint: string } {
  if (kind === 'directory')
    return {
      message: `this is carecircle's public directory at ${o.endpoint}, not the family workspace`,
      hint: "Set CARECIRCLE_URL to carecircle's app URL (APP_URL, where caregivers sign in), for example http://localhost:8081, not the public site's.",
    };
  return {
    message: `this is carecircle's sandbox endpoint at ${o.endpoint} (it only creates sandbox workspaces), not the family workspace`,
    hint: `Set CARECIRCLE_URL to carecircle's app URL, ${o.appUrl} (without /api/mcp/public).`,
  };
}

/** The scope each workspace tool needs from an OAuth sign-in: the declaration the workspace enforces. */
export const TOOL_SCOPES: Readonly<Record<string, string | undefined>> = WORKSPACE_TOOL_SCOPES;

export interface ToolAccess {
  name: string;
  /** The scope it needs and this sign-in lacks. */
  missing?: string;
}

/** Each tool with the scope it lacks; `granted` undefined means a key, which may call them all. */
export function toolAccess(names: string[], granted: string | undefined): ToolAccess[] {
  const have = granted === undefined ? 'all' : granted.split(' ').filter(Boolean);
  return names.map((name) => {
    const needed = TOOL_SCOPES[name];
    return grantCovers(have, needed) ? { name } : { name, missing: needed! };
  });
}
