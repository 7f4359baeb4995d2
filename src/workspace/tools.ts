// The workspace MCP tools (SPEC §B1). Each re-derives what the caller may see from the verified
// caller alone: a lovedOneId from anywhere else is "not authorized", whether or not it exists.
import { z } from 'zod';
import { RPC } from '../rpc/codes.js';
import { RpcError, ToolError } from '../rpc/errors.js';
import { implementTool, type CallContext, type ToolDeclaration, type ToolDefinition } from '../rpc/mcp.js';
import type { WorkspaceCaller } from './caller.js';
import { lovedOneView, type CareEventQuery, type CareEventRecord, type WorkspaceStore } from '../family/records.js';
import { notAuthorized } from './careReader.js';
import { grantCovers, TOOL_SCOPES } from './scopes.js';
import { careEventsOutput, lovedOnesOutput, pingOutput, profileOutput } from './outputs.js';
import { CursorRefused } from '../store/timeline/port.js';
import { MEDICATION_TOOLS, medicationTools, type MedicationToolDeps } from './medicationTools.js';
import { ENTRY_TOOLS, entryTools, type ClientNamer } from './entryTools.js';
import { SUMMARY_TOOLS, summaryTools } from './summaryTool.js';

export const DEFAULT_EVENTS_LIMIT = 20;
const READ_ONLY = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false } as const;

/** The workspace endpoint's tools as clients and discovery documents see them. */
export const WORKSPACE_TOOLS = {
  ping: {
    name: 'ping',
    title: 'Check the connection',
    description: 'Confirms the connection and shows who you are connected as. No side effects.',
    annotations: READ_ONLY,
    output: pingOutput,
  },
  getUserProfile: {
    name: 'get_user_profile',
    scope: TOOL_SCOPES.get_user_profile,
    title: 'Get my profile',
    description:
      "Your account: uid, email and tenant; for family accounts also the family workspace's name, your role in it (caregiver: the primary caregiver who manages it; family_member: reads it) and how many members it has, everyone counted.",
    annotations: READ_ONLY,
    output: profileOutput,
  },
  listLovedOnes: {
    name: 'list_loved_ones',
    scope: TOOL_SCOPES.list_loved_ones,
    title: 'List loved ones',
    description:
      "The loved ones (ids, names and time zones) in your family workspace. Use an id with list_care_events; new medications, appointments and tasks are meant in the loved one's time zone unless you name another.",
    annotations: READ_ONLY,
    output: lovedOnesOutput,
  },
  listCareEvents: {
    name: 'list_care_events',
    scope: TOOL_SCOPES.list_care_events,
    title: 'List recent care events',
    description:
      'Care events (visits, notes, medications, vitals, forwarded mail, and what the family added: source "family", with author; the family\'s appointments at their start time, eventType "appointment", listed once as they now are, and tasks when done, "task_done"), newest first (an appointment still to come is listed first): for one loved one when lovedOneId is given, otherwise for each loved one in your workspace (limit applies per loved one). writtenBy (with lovedOneId) keeps only what the agency sent, what the family added, or inbox mail. Narrow by time with since/until (ISO 8601; since inclusive, until exclusive) and by event type with types. When more events match, the result has nextCursor: call again with the same arguments and cursor set to it for the next page.',
    annotations: READ_ONLY,
    output: careEventsOutput,
  },
  ...SUMMARY_TOOLS,
  ...MEDICATION_TOOLS,
  // The tools that add to the record, declared beside their implementation.
  ...ENTRY_TOOLS,
} as const satisfies Record<string, ToolDeclaration>;

/**
 * Whether a verified caller holds a scope: OAuth callers hold what they were granted, API keys and
 * sessions everything. The MCP server asks this of every tool, prompt and resource that declares one.
 */
export function callerHoldsScope(caller: unknown, scope: string): boolean {
  const scopes = (caller as WorkspaceCaller | undefined)?.scopes;
  return scopes !== undefined && grantCovers(scopes, scope);
}

/** The verified caller; the server has already refused one whose grant lacks the tool's scope. */
const callerOf = (ctx: CallContext): WorkspaceCaller => ctx.caller as WorkspaceCaller;

const instant = (field: 'since' | 'until') =>
  z.iso
    .datetime({ offset: true, message: `${field} must be an ISO 8601 date-time with a time zone, e.g. 2026-11-01T00:00:00Z` })
    .describe(`${field === 'since' ? 'Events at or after' : 'Events before'} this instant (ISO 8601).`);

const badCursor = () =>
  new RpcError(RPC.INVALID_PARAMS, 'Invalid arguments for list_care_events: cursor: not a nextCursor of this query', {
    hint: 'Pass nextCursor from the previous result unchanged, with the same lovedOneId, since, until and types.',
  });

const eventView = (e: CareEventRecord) => ({
  id: e._id,
  lovedOneId: e.lovedOneId,
  source: e.source,
  eventType: e.eventType,
  occurredAt: e.occurredAt.toISOString(),
  receivedAt: e.receivedAt.toISOString(),
  ...(e.institutionId ? { institutionId: e.institutionId } : {}),
  payload: e.payload,
  ...(e.author ? { author: e.author } : {}),
  ...(e.supersedes ? { supersedes: e.supersedes } : {}),
});

export function workspaceTools(
  store: WorkspaceStore,
  medications: Omit<MedicationToolDeps, 'store'>,
  clientName: ClientNamer = async () => undefined,
  platform = 'carecircle',
): ToolDefinition[] {
  return [
    implementTool(WORKSPACE_TOOLS.ping, {
      input: z.object({}).strict(),
      handler: async (_args, ctx) => {
        const c = callerOf(ctx);
        const text = `pong from ${platform} - uid=${c.uid} tenant=${c.tenant} via=${c.via}`;
        return { summary: text, structured: { pong: true, platform, uid: c.uid, tenant: c.tenant, via: c.via } };
      },
    }),
    implementTool(WORKSPACE_TOOLS.getUserProfile, {
      input: z.object({}).strict(),
      handler: async (_args, ctx) => {
        const c = callerOf(ctx);
        const membership = c.tenant === 'family' ? await store.workspaceOf(c.uid) : null;
        return {
          structured: {
            uid: c.uid,
            email: c.email,
            tenant: c.tenant,
            ...(c.tenant === 'family'
              ? {
                  workspace: membership
                    ? {
                        id: membership.workspace._id,
                        name: membership.workspace.name,
                        role: membership.member.role,
                        familyMemberCount: await store.memberCount(membership.workspace._id),
                      }
                    : null,
                }
              : {}),
          },
        };
      },
    }),
    implementTool(WORKSPACE_TOOLS.listLovedOnes, {
      input: z.object({}).strict(),
      handler: async (_args, ctx) => {
        const c = callerOf(ctx);
        if (c.tenant !== 'family') throw new ToolError(`list_loved_ones is for family caregivers; this account's tenant is "${c.tenant}".`);
        const membership = await store.workspaceOf(c.uid);
        const lovedOnes = membership ? await store.lovedOnesOf(membership.workspace._id) : [];
        return {
          structured: {
            workspaceId: membership?.workspace._id ?? null,
            lovedOnes: lovedOnes.map(lovedOneView),
          },
        };
      },
    }),
    implementTool(WORKSPACE_TOOLS.listCareEvents, {
      input: z
        .object({
          lovedOneId: z.string().min(1).max(64).optional().describe('One loved one (from list_loved_ones); omit for all.'),
          limit: z.number().int().min(1).max(50).default(DEFAULT_EVENTS_LIMIT).describe('Events per loved one, 1-50 (default 20).'),
          since: instant('since').optional(),
          until: instant('until').optional(),
          types: z
            .array(z.string().min(1).max(64))
            .min(1)
            .max(20)
            .optional()
            .describe('Only these event types, e.g. ["vital_recorded"]; types this server does not know yet are allowed.'),
          cursor: z.string().min(1).max(512).optional().describe('nextCursor from the previous result, with the same lovedOneId, since, until and types.'),
          writtenBy: z
            .enum(['agency', 'family', 'inbox'])
            .optional()
            .describe('Only what the agency sent, what the family added, or mail to the inbox; with lovedOneId.'),
        })
        .strict()
        .refine((a) => a.cursor === undefined || a.lovedOneId !== undefined, {
          path: ['lovedOneId'],
          message: "lovedOneId is required with cursor (a cursor continues one loved one's listing)",
        })
        .refine((a) => !a.since || !a.until || Date.parse(a.since) < Date.parse(a.until), { path: ['until'], message: 'until must be after since' })
        .refine((a) => a.writtenBy === undefined || a.lovedOneId !== undefined, { path: ['lovedOneId'], message: 'lovedOneId is required with writtenBy' }),
      handler: async ({ lovedOneId, limit, since, until, types, cursor, writtenBy }, ctx) => {
        const c = callerOf(ctx);
        const query: CareEventQuery = {
          limit,
          ...(since ? { since: new Date(since) } : {}),
          ...(until ? { until: new Date(until) } : {}),
          ...(types ? { types } : {}),
        };
        const membership = c.tenant === 'family' ? await store.workspaceOf(c.uid) : null;
        if (lovedOneId !== undefined) {
          const lovedOne = membership ? await store.lovedOneIn(membership.workspace._id, lovedOneId) : null;
          if (!lovedOne) throw notAuthorized();
          const paged = { ...query, ...(cursor ? { cursor } : {}) };
          const source = writtenBy === 'agency' ? 'partner' : writtenBy;
          const page = await (source ? store.listCareEventsFrom(lovedOne._id, paged, source) : store.listCareEvents(lovedOne._id, paged)).catch(
            (err: unknown) => {
              throw err instanceof CursorRefused ? badCursor() : err;
            },
          );
          return {
            structured: {
              lovedOneId: lovedOne._id,
              count: page.events.length,
              events: page.events.map(eventView),
              ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}),
            },
          };
        }
        if (!membership) return { structured: { count: 0, events: [], byLovedOne: [] } };
        const lovedOnes = await store.lovedOnesOf(membership.workspace._id);
        const byLovedOne = await Promise.all(
          lovedOnes.map(async (l) => {
            const page = await store.listCareEvents(l._id, query);
            return { lovedOneId: l._id, name: l.displayName, events: page.events.map(eventView), ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}) };
          }),
        );
        const events = byLovedOne.flatMap((b) => b.events).sort((a, b) => b.occurredAt.localeCompare(a.occurredAt));
        return { structured: { count: events.length, events, byLovedOne } };
      },
    }),
    ...summaryTools(store, medications.medications),
    ...medicationTools({ store, ...medications }),
    ...entryTools(store, clientName),
  ];
}
