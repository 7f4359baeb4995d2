// The bridge's --check reads the same scope declaration the workspace endpoint enforces.
import { describe, expect, it } from 'vitest';
import { SCOPES } from '../src/auth/scopes.js';
import { WORKSPACE_ENDPOINT } from '../src/workspace/endpoint.js';
import { callerHoldsScope } from '../src/workspace/tools.js';
import { TOOL_SCOPES, toolAccess } from './identify.js';

/** Every tool the workspace endpoint declares. */
const WORKSPACE_TOOLS = WORKSPACE_ENDPOINT.tools;

describe('the bridge and the workspace agree on tool scopes', () => {
  it('when a tool is declared by the workspace, then the bridge knows the scope it needs', () => {
    expect(Object.keys(TOOL_SCOPES).sort()).toEqual(
      Object.values(WORKSPACE_TOOLS)
        .map((t) => t.name)
        .sort(),
    );
    // The declaration the server enforces is the table the bridge reads.
    for (const t of Object.values(WORKSPACE_TOOLS)) expect((t as { scope?: string }).scope, t.name).toBe(TOOL_SCOPES[t.name]);
  });

  it('when an OAuth grant holds any set of scopes, then the bridge lists as callable exactly what the workspace shows', () => {
    const grants = [[], ['profile:read'], ['care_circle:read'], [...SCOPES]] as const;
    for (const granted of grants) {
      const names = Object.values(WORKSPACE_TOOLS).map((t) => t.name);
      const bridge = toolAccess(names, granted.join(' '))
        .filter((a) => !a.missing)
        .map((a) => a.name);
      const declared = Object.values(WORKSPACE_TOOLS) as { name: string; scope?: string }[];
      const workspace = declared.filter((t) => t.scope === undefined || callerHoldsScope({ scopes: granted }, t.scope)).map((t) => t.name);
      expect(bridge, granted.join(' ') || '(none)').toEqual(workspace);
    }
  });
});
