// The OAuth scope each workspace tool, prompt and resource needs: one declaration that the tool
// declarations reference, the MCP server enforces and the stdio bridge reads for --check (a leaf
// module: type imports only).
import type { Scope } from '../auth/scopes.js';

/** By tool name; `undefined`: a verified caller is enough. Each tool's declaration takes its `scope` from here. */
export const TOOL_SCOPES = {
  ping: undefined,
  get_user_profile: 'profile:read',
  list_loved_ones: 'care_circle:read',
  list_care_events: 'care_circle:read',
  get_health_summary: 'care_circle:read',
  list_medications: 'care_circle:read',
  update_medication: 'care_circle:write',
  add_appointment: 'care_circle:write',
  list_appointments: 'care_circle:read',
  add_task: 'care_circle:write',
  update_task: 'care_circle:write',
  list_tasks: 'care_circle:read',
  add_care_note: 'care_circle:write',
  log_medication_dose: 'care_circle:write',
  record_vital: 'care_circle:write',
  retract_entry: 'care_circle:write',
} as const satisfies Record<string, Scope | undefined>;

/** The weekly care summary prompt and the loved ones' timeline resources read the care circle. */
export const CARE_READ_SCOPE = 'care_circle:read' as const satisfies Scope;

/** What a credential was granted: the scopes an OAuth sign-in approved, or all of them for API keys and sessions. */
export type Granted = readonly string[] | 'all';

/** Whether a grant covers a declared scope: the rule the endpoint enforces and the bridge predicts with. */
export const grantCovers = (granted: Granted, needed: string | undefined): boolean => needed === undefined || granted === 'all' || granted.includes(needed);
