// The bridge's --check reads the same scope declaration the workspace endpoint enforces.
import { describe, expect, it } from 'vitest';
import { SCOPES } from '../src/auth/scopes.js';
import { toolVisibleTo, WORKSPACE_TOOLS } from '../src/workspace/tools.js';
import { TOOL_SCOPES, toolAccess } from './identify.js';

describe('the bridge and the workspace agree on tool scopes', () => {
  it('when a tool is declared by the workspace, then the bridge knows the scope it needs', () => {
    expect(Object.keys(TOOL_SCOPES).sort()).toEqual(Object.values(WORKSPACE_TOOLS).map((t) => t.name).sort());
  });

  it('when an OAuth grant holds any set of scopes, then the bridge lists as callable exactly what the workspace shows', () => {
    const grants = [[], ['profile:read'], ['care_circle:read'], [...SCOPES]] as const;
    for (const granted of grants) {
      const names = Object.values(WORKSPACE_TOOLS).map((t) => t.name);
      const bridge = toolAccess(names, granted.join(' ')).filter((a) => !a.missing).map((a) => a.name);
      const workspace = names.filter((n) => toolVisibleTo(n, { scopes: granted }));
      expect(bridge, granted.join(' ') || '(none)').toEqual(workspace);
    }
  });
});
