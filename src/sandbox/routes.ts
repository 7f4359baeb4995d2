// The sandbox's routes: the unauthenticated MCP endpoint and, for people, the claim and invitation pages.
import { appPage } from '../app/routeTable.js';
import { defineRoutes } from '../slice/contract.js';
import { perMinute } from '../limits/limiter.js';
import { MCP_REQUEST_HEADERS } from '../rpc/versions.js';

/** SPEC §B2: the sandbox body is limited to 64 KB. */
export const SANDBOX_BODY_LIMIT = 64 * 1024;

export const SANDBOX_ROUTES = defineRoutes({
  mcp: {
    hosts: ['app'],
    path: '/api/mcp/public',
    methods: ['GET', 'POST'],
    edge: 'mcp',
    bodyLimit: SANDBOX_BODY_LIMIT,
    // SPEC's 6-an-hour bucket is spent by creations, which only a worker can recognise; the edge
    // keeps a general per-address limit on everything else.
    rate: { bucket: 'sandbox-endpoint', by: 'ip', policy: (c) => perMinute(c.rateSandboxMcpPerMin) },
    forwardHeaders: MCP_REQUEST_HEADERS,
  },
  onboardingClaim: appPage('/onboarding/claim', ['GET', 'POST']),
  workspaceInvites: appPage('/workspace/invites', ['GET']),
  workspaceInvitesSend: appPage('/workspace/invites/send', ['POST']),
  inbox: appPage('/inbox/:lovedOneId', ['GET']),
});
