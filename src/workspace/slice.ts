// The workspace slice: the authenticated workspace MCP endpoint over the family records, and the
// audit log of its calls.
import { defineSlice, defineRoutes, handlers } from '../slice/contract.js';
import { perMinute } from '../limits/limiter.js';
import { AUDIT_INDEXES, auditStream, AuditLog, auditWriter, MCP_AUDIT_LOG, startAuditConsumer } from './audit.js';
import { WORKSPACE_ENDPOINT } from './endpoint.js';
import { workspaceEndpoint } from './handler.js';
import { MCP_REQUEST_HEADERS } from '../rpc/versions.js';
import { ACTIVITY_STREAM } from './activity.js';
import { WRITE_STORE_INDEXES, writeSweepJobs } from './writeStore.js';

export const APP_MCP_BODY_LIMIT = 256 * 1024;

const routes = defineRoutes({
  mcp: {
    hosts: ['app'],
    path: '/api/mcp',
    methods: ['GET', 'POST'],
    edge: 'mcp',
    bodyLimit: APP_MCP_BODY_LIMIT,
    // SPEC: 60 requests a minute per API key, a bucket of 60 refilled at one a second. Bearer
    // callers share a bucket per credential; session-cookie callers (in-app agents) have a bucket
    // per person, taken by the worker once it has read the session (workspace/handler.ts).
    rate: { bucket: 'mcp-key', by: 'credential', policy: (c) => perMinute(c.rateMcpKeyPerMin) },
    // Mcp-Session-Id carries what a 2025-era client declared at initialize (rpc/writes.ts).
    forwardHeaders: ['authorization', 'cookie', 'mcp-session-id', ...MCP_REQUEST_HEADERS],
  },
});

export const workspaceSlice = defineSlice({
  name: 'workspace',
  routes,
  mcp: [WORKSPACE_ENDPOINT],
  timelines: [ACTIVITY_STREAM],
  indexes: { [MCP_AUDIT_LOG]: AUDIT_INDEXES, ...WRITE_STORE_INDEXES },
  jobs: (ctx) => writeSweepJobs(ctx.db, ctx.clock),
  serve: (ctx) => {
    const endpoint = workspaceEndpoint(ctx.config, ctx.db, ctx.credentials, ctx.timelines, ctx.log, ctx.bus, ctx.limiter, { clock: ctx.clock });
    return handlers(routes).on('mcp', 'GET', endpoint).on('mcp', 'POST', endpoint).done();
  },
  // Audit rows reach the store here: the stream's consumer (NATS), or the last batch at shutdown.
  background: (ctx) => {
    const writer = auditWriter(ctx.timelines, ctx.bus, ctx.config.busNamespace, ctx.log);
    const consumer = ctx.bus.durable
      ? startAuditConsumer(ctx.bus.durable, auditStream(ctx.config.busNamespace), new AuditLog(ctx.timelines), ctx.log)
      : undefined;
    return { stop: async () => void (await Promise.all([consumer?.stop(), writer.stop()])) };
  },
});
