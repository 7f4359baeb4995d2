// What the directory MCP endpoint is, declared once: its identity, URL and tools.
import type { McpEndpointSpec } from '../slice/contract.js';
import { DIRECTORY_TOOLS } from './tools.js';

export const DIRECTORY_INSTRUCTIONS =
  'Public, read-only directory for family caregivers of older adults in the US: search national care resources, read community channels, and estimate long-term-care costs. No sign-in needed.';

export const DIRECTORY_ENDPOINT: McpEndpointSpec = {
  id: 'directory',
  name: 'carecircle-directory',
  title: 'carecircle care-resource directory',
  summary: 'Public, read-only: search national US caregiver resources, read community channels, estimate long-term-care costs.',
  instructions: () => DIRECTORY_INSTRUCTIONS,
  url: (config) => `${config.siteUrl}/api/mcp`,
  auth: 'none',
  authDescription: () => 'None.',
  tools: Object.values(DIRECTORY_TOOLS),
};
