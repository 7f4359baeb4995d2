// What the sandbox MCP endpoint is, declared once: its identity, URL and tool.
import type { McpEndpointSpec } from '../slice/contract.js';
import { START_WORKSPACE_TOOL } from './tool.js';

export const SANDBOX_ENDPOINT: McpEndpointSpec = {
  id: 'sandbox',
  name: 'carecircle-sandbox',
  title: 'carecircle sandbox workspaces',
  summary: 'Unauthenticated: an evaluator agent creates a sandbox family workspace that a person claims later by signing in.',
  instructions: (config) =>
    `Create a sandbox family care workspace with no sign-in (${START_WORKSPACE_TOOL.name}, sandbox: true). Nothing is ever emailed from a sandbox. A person claims it by signing in at ${config.appUrl}/onboarding with the primaryCaregiverEmail you gave.`,
  url: (config) => `${config.appUrl}/api/mcp/public`,
  auth: 'none',
  authDescription: () => 'None; rate-limited per client address.',
  tools: [START_WORKSPACE_TOOL],
};
