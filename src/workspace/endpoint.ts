// What the workspace MCP endpoint is, declared once: its identity, URL, credentials and tools.
import type { McpEndpointSpec } from '../slice/contract.js';
import { WORKSPACE_PROMPTS } from './prompts.js';
import { WORKSPACE_RESOURCE_TEMPLATES } from './resources.js';
import { PLAN_TOOLS } from './planTools.js';
import { WORKSPACE_TOOLS } from './tools.js';

export const WORKSPACE_INSTRUCTIONS =
  "Access to the signed-in caregiver's own family workspace: profile, loved ones and recent care events, a weekly care summary prompt per loved one, and each loved one's timeline as a resource. With care_circle:write (and a member the primary caregiver lets add things), add notes, doses and home readings to a loved one's timeline in the person's name, and withdraw what the family added.";

export const WORKSPACE_ENDPOINT: McpEndpointSpec = {
  id: 'workspace',
  name: 'carecircle-workspace',
  title: 'carecircle family workspace',
  summary: "Authenticated, stateless, read-only access to the caregiver's own family workspace.",
  instructions: () => WORKSPACE_INSTRUCTIONS,
  url: (config) => `${config.appUrl}/api/mcp`,
  auth: 'bearer',
  authDescription: (config) =>
    `Authorization: Bearer <API key sk-svc-…> (minted in Settings → MCP API keys at ${config.appUrl}) or an OAuth access token from ${config.authUrl}.`,
  tools: [...Object.values(WORKSPACE_TOOLS), ...Object.values(PLAN_TOOLS)],
  prompts: WORKSPACE_PROMPTS,
  resourceTemplates: WORKSPACE_RESOURCE_TEMPLATES,
};
