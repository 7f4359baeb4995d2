// The workspace MCP tools for a loved one's appointments and shared tasks: reading them needs
// care_circle:read, adding and moving them care_circle:write and a member who may write.
import type { Db } from 'mongodb';
import { z } from 'zod';
import type { Credentials } from '../auth/credentials.js';
import { plannedZone } from '../family/changes.js';
import { canWrite, FamilyCircle } from '../family/circle.js';
import { PlansStore, TaskRefused, type AppointmentRecord, type Author, type TaskRecord } from '../family/plans.js';
import type { LovedOneRecord, MemberRecord, WorkspaceStore } from '../family/records.js';
import { appointmentFromTool, taskFromTool, TEXT_LIMITS, type FieldFault } from '../family/planInput.js';
import { RPC } from '../rpc/codes.js';
import { RpcError, ToolError } from '../rpc/errors.js';
import { implementTool, type CallContext, type ToolDeclaration, type ToolDefinition } from '../rpc/mcp.js';
import type { WorkspaceCaller } from './caller.js';
import { notAuthorized } from './careReader.js';
import { TOOL_SCOPES } from './scopes.js';

const READ_ONLY = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false } as const;
const ADDS = { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false } as const;

const appointmentView = z.object({
  id: z.string(),
  lovedOneId: z.string(),
  title: z.string(),
  withWhom: z.string().optional(),
  place: z.string().optional(),
  start: z.string(),
  end: z.string(),
  timeZone: z.string(),
  takenBy: z.object({ uid: z.string(), name: z.string() }).optional(),
  notes: z.string().optional(),
  status: z.enum(['scheduled', 'cancelled']),
  addedBy: z.string(),
});

const taskView = z.object({
  id: z.string(),
  lovedOneId: z.string(),
  title: z.string(),
  due: z.string(),
  timeZone: z.string(),
  notes: z.string().optional(),
  state: z.enum(['open', 'taken', 'done']),
  takenBy: z.object({ uid: z.string(), name: z.string() }).optional(),
  doneAt: z.string().optional(),
  addedBy: z.string(),
});

export const PLAN_TOOLS = {
  addAppointment: {
    name: 'add_appointment',
    scope: TOOL_SCOPES.add_appointment,
    title: 'Add an appointment',
    description:
      "Add an appointment for a loved one: what it is, with whom, where, start (and end, default one hour later) as ISO 8601 with an offset, the time zone (IANA; default the loved one's), who is taking them (a member's uid from get_user_profile or list_appointments) and notes. It appears on the loved one's page and in every member's calendar feed.",
    annotations: ADDS,
    output: z.object({ appointment: appointmentView }),
  },
  listAppointments: {
    name: 'list_appointments',
    scope: TOOL_SCOPES.list_appointments,
    title: 'List appointments',
    description: "A loved one's coming appointments, soonest first (those that ended are left out; cancelled ones only with includeCancelled).",
    annotations: READ_ONLY,
    output: z.object({ lovedOneId: z.string(), count: z.number().int(), appointments: z.array(appointmentView) }),
  },
  addTask: {
    name: 'add_task',
    scope: TOOL_SCOPES.add_task,
    title: 'Add a shared task',
    description:
      'Ask the family for help: a task for a loved one ("Drive Mom to cardiology") with its due time (ISO 8601 with an offset) and optional notes. It is open until a member takes it.',
    annotations: ADDS,
    output: z.object({ task: taskView }),
  },
  updateTask: {
    name: 'update_task',
    scope: TOOL_SCOPES.update_task,
    title: 'Take, hand back or finish a task',
    description:
      'action "take": you will do it (refused, saying who, when someone else already took it); "hand_back": you cannot do it after all, so it is open again; "done": it is done (an open task is taken by you first). Repeating your own action answers as the first did.',
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    output: z.object({ task: taskView }),
  },
  listTasks: {
    name: 'list_tasks',
    scope: TOOL_SCOPES.list_tasks,
    title: 'List shared tasks',
    description: 'A loved one\'s tasks: "open" (default: open and taken, soonest due first) or "done" (done in the last 30 days, latest first).',
    annotations: READ_ONLY,
    output: z.object({ lovedOneId: z.string(), count: z.number().int(), tasks: z.array(taskView) }),
  },
} as const satisfies Record<string, ToolDeclaration>;

const callerOf = (ctx: CallContext): WorkspaceCaller => ctx.caller as WorkspaceCaller;

const instant = (what: string) =>
  z.iso
    .datetime({ offset: true, message: `${what} must be an ISO 8601 date-time with an offset, e.g. 2026-12-03T14:00:00-05:00` })
    .describe(`${what} (ISO 8601 with an offset).`);

const lovedOneId = z.string().min(1).max(64).describe('The loved one (an id from list_loved_ones).');
const zone = z
  .string()
  .min(1)
  .max(64)
  .optional()
  .describe("The IANA time zone the times are meant in, e.g. America/New_York (default: the loved one's, from list_loved_ones).");

/** Faults from the shared checks, as the tools' invalid-arguments error naming each field. */
const invalid = (tool: string, faults: FieldFault[]) =>
  new RpcError(RPC.INVALID_PARAMS, `Invalid arguments for ${tool}: ${faults.map((f) => `${f.field}: ${f.message}`).join('; ')}`, {
    hint: 'Correct the fields named and call again.',
    fields: faults.map((f) => f.field),
  });

const readerRefusal = (workspace: string) =>
  new RpcError(RPC.NOT_AUTHORIZED, 'You can only read this care record', {
    hint: `The primary caregiver of ${workspace} has let you read only; ask them to let you add and take things.`,
  });

export function planTools(store: WorkspaceStore, db: Db, credentials: Credentials, clock: () => number = Date.now): ToolDefinition[] {
  const plans = new PlansStore(db, clock, store.timelines);
  const circle = new FamilyCircle(db, credentials, clock);

  /** The loved one in the caller's workspace (a foreign id is refused as unknown ones are), and whether they may write. */
  const where = async (ctx: CallContext, id: string, write: boolean): Promise<{ lovedOne: LovedOneRecord; member: MemberRecord }> => {
    const c = callerOf(ctx);
    const membership = c.tenant === 'family' ? await store.workspaceOf(c.uid) : null;
    const lovedOne = membership ? await store.lovedOneIn(membership.workspace._id, id) : null;
    if (!membership || !lovedOne) throw notAuthorized();
    if (write && !canWrite(membership.member)) throw readerRefusal(membership.workspace.name);
    return { lovedOne, member: membership.member };
  };

  const names = async (workspaceId: string) => {
    const members = await circle.members(workspaceId);
    return (uid: string) => {
      const m = members.find((x) => x.uid === uid);
      return m ? (m.name ?? m.email) : 'a former member';
    };
  };

  const author = async (ctx: CallContext): Promise<Author> => {
    const c = callerOf(ctx);
    const name = (await store.user(c.uid))?.name ?? c.email;
    if (c.via === 'session') return { uid: c.uid, name, via: 'app' };
    return { uid: c.uid, name, via: 'assistant', client: c.clientId ?? 'an API key' };
  };

  /** The zone the arguments name, else the loved one's, else (a loved one without one yet) the caller's. */
  const zoneFor = async (ctx: CallContext, lovedOne: LovedOneRecord, given: string | undefined) =>
    given ?? plannedZone(lovedOne, (await store.user(callerOf(ctx).uid))?.timeZone);

  const showAppointment = (a: AppointmentRecord, nameOf: (uid: string) => string): z.infer<typeof appointmentView> => ({
    id: a._id,
    lovedOneId: a.lovedOneId,
    title: a.title,
    ...(a.withWhom ? { withWhom: a.withWhom } : {}),
    ...(a.place ? { place: a.place } : {}),
    start: a.start.toISOString(),
    end: a.end.toISOString(),
    timeZone: a.timeZone,
    ...(a.takenBy ? { takenBy: { uid: a.takenBy, name: nameOf(a.takenBy) } } : {}),
    ...(a.notes ? { notes: a.notes } : {}),
    status: a.status,
    addedBy: a.createdBy.name,
  });

  const showTask = (t: TaskRecord, nameOf: (uid: string) => string): z.infer<typeof taskView> => ({
    id: t._id,
    lovedOneId: t.lovedOneId,
    title: t.title,
    due: t.due.toISOString(),
    timeZone: t.timeZone,
    ...(t.notes ? { notes: t.notes } : {}),
    state: t.state,
    ...(t.takenBy ? { takenBy: { uid: t.takenBy, name: nameOf(t.takenBy) } } : {}),
    ...(t.doneAt ? { doneAt: t.doneAt.toISOString() } : {}),
    addedBy: t.createdBy.name,
  });

  return [
    implementTool(PLAN_TOOLS.addAppointment, {
      input: z
        .object({
          lovedOneId,
          title: z.string().min(1).max(TEXT_LIMITS.title).describe('What it is, e.g. "Cardiology check-up".'),
          withWhom: z.string().max(TEXT_LIMITS.withWhom).optional().describe('Who it is with, e.g. "Dr. Patel".'),
          place: z.string().max(TEXT_LIMITS.place).optional().describe('Where.'),
          start: instant('start'),
          end: instant('end').optional(),
          timeZone: zone,
          takenBy: z.string().min(1).max(64).optional().describe('The uid of the member taking them.'),
          notes: z.string().max(TEXT_LIMITS.notes).optional(),
        })
        .strict(),
      handler: async (args, ctx) => {
        const { lovedOne } = await where(ctx, args.lovedOneId, true);
        const members = (await circle.members(lovedOne.workspaceId)).map((m) => m.uid);
        const checked = appointmentFromTool({ ...args, timeZone: await zoneFor(ctx, lovedOne, args.timeZone) }, clock(), members);
        if (!checked.ok) throw invalid('add_appointment', checked.faults);
        const a = await plans.addAppointment({ workspaceId: lovedOne.workspaceId, lovedOneId: lovedOne._id }, checked.value, await author(ctx));
        return {
          summary: `Added “${a.title}” for ${lovedOne.displayName}.`,
          structured: { appointment: showAppointment(a, await names(lovedOne.workspaceId)) },
        };
      },
    }),
    implementTool(PLAN_TOOLS.listAppointments, {
      input: z
        .object({
          lovedOneId,
          includeCancelled: z.boolean().default(false).describe('Also list cancelled appointments.'),
          limit: z.number().int().min(1).max(50).default(20).describe('At most this many, 1-50 (default 20).'),
        })
        .strict(),
      handler: async ({ lovedOneId: id, includeCancelled, limit }, ctx) => {
        const { lovedOne } = await where(ctx, id, false);
        const now = new Date(clock());
        const found = includeCancelled
          ? (await plans.between(lovedOne._id, new Date(now.getTime() - 86_400_000), new Date(now.getTime() + 3 * 365 * 86_400_000), 200))
              .filter((a) => a.end >= now)
              .slice(0, limit)
          : await plans.upcoming(lovedOne._id, now, limit);
        const nameOf = await names(lovedOne.workspaceId);
        return { structured: { lovedOneId: lovedOne._id, count: found.length, appointments: found.map((a) => showAppointment(a, nameOf)) } };
      },
    }),
    implementTool(PLAN_TOOLS.addTask, {
      input: z
        .object({
          lovedOneId,
          title: z.string().min(1).max(TEXT_LIMITS.title).describe('What needs doing.'),
          due: instant('due'),
          timeZone: zone,
          notes: z.string().max(TEXT_LIMITS.notes).optional(),
        })
        .strict(),
      handler: async (args, ctx) => {
        const { lovedOne } = await where(ctx, args.lovedOneId, true);
        const checked = taskFromTool({ ...args, timeZone: await zoneFor(ctx, lovedOne, args.timeZone) }, clock());
        if (!checked.ok) throw invalid('add_task', checked.faults);
        const t = await plans.addTask({ workspaceId: lovedOne.workspaceId, lovedOneId: lovedOne._id }, checked.value, await author(ctx));
        return { summary: `Added the task “${t.title}” for ${lovedOne.displayName}.`, structured: { task: showTask(t, await names(lovedOne.workspaceId)) } };
      },
    }),
    implementTool(PLAN_TOOLS.updateTask, {
      input: z
        .object({
          lovedOneId,
          taskId: z.string().min(1).max(64).describe('The task (an id from list_tasks).'),
          action: z.enum(['take', 'hand_back', 'done']).describe('take, hand_back or done.'),
        })
        .strict(),
      handler: async ({ lovedOneId: id, taskId, action }, ctx) => {
        const { lovedOne } = await where(ctx, id, true);
        const task = await plans.task(lovedOne._id, taskId);
        if (!task)
          throw new RpcError(RPC.NOT_AUTHORIZED, 'Not authorized for this taskId', {
            hint: "The task is not among this loved one's; call list_tasks for the ids.",
          });
        const nameOf = await names(lovedOne.workspaceId);
        try {
          const moved = await plans.move(task, action, await author(ctx), async (uid) => nameOf(uid));
          return { structured: { task: showTask(moved, nameOf) } };
        } catch (err) {
          if (err instanceof TaskRefused) throw new ToolError(err.message);
          throw err;
        }
      },
    }),
    implementTool(PLAN_TOOLS.listTasks, {
      input: z
        .object({
          lovedOneId,
          state: z.enum(['open', 'done']).default('open').describe('"open" (open and taken) or "done" (the last 30 days).'),
        })
        .strict(),
      handler: async ({ lovedOneId: id, state }, ctx) => {
        const { lovedOne } = await where(ctx, id, false);
        const found = state === 'open' ? await plans.openTasks(lovedOne._id) : await plans.doneSince(lovedOne._id, new Date(clock() - 30 * 86_400_000));
        const nameOf = await names(lovedOne.workspaceId);
        return { structured: { lovedOneId: lovedOne._id, count: found.length, tasks: found.map((t) => showTask(t, nameOf)) } };
      },
    }),
  ];
}
