// The workspace MCP's tools that add to a loved one's timeline: a note, a dose, a reading, and
// withdrawing an entry. Each re-derives the loved one and the member from the verified caller,
// checks the member may write, and records who wrote it and through which app or key.
import { z } from 'zod';
import { RPC } from '../rpc/codes.js';
import { RpcError, ToolError } from '../rpc/errors.js';
import { implementTool, type CallContext, type ToolDeclaration, type ToolDefinition } from '../rpc/mcp.js';
import type { CareEventRecord, LovedOneRecord, MemberRecord, WorkspaceStore } from '../family/records.js';
import { careWords } from '../family/careEventTypes.js';
import {
  DOSE_STATUSES,
  EntryChanged,
  EntryInvalid,
  EntryNotFound,
  FamilyEntries,
  HOME_VITALS,
  MOODS,
  NotYourEntry,
  ReadOnlyMember,
  type EntryAuthor,
} from '../family/entries.js';
import type { WorkspaceCaller } from './caller.js';
import { notAuthorized } from './careReader.js';
import { TOOL_SCOPES } from './scopes.js';

/** The name of the app or key a verified caller came through ("Claude", "Kitchen tablet"); none for a session. */
export type ClientNamer = (caller: WorkspaceCaller) => Promise<string | undefined>;

const WRITE = { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false } as const;

const author = z.object({ uid: z.string(), name: z.string(), via: z.enum(['app', 'assistant']), client: z.string().optional() });
const entryView = z.object({
  id: z.string(),
  lovedOneId: z.string(),
  source: z.literal('family'),
  eventType: z.string(),
  occurredAt: z.string(),
  payload: z.record(z.string(), z.unknown()),
  author,
  supersedes: z.string().optional(),
  /** The entry in words, as the family's timeline shows it (times in UTC). */
  line: z.string(),
});
const entryOutput = z.object({ entry: entryView });

export const ENTRY_TOOLS = {
  addCareNote: {
    name: 'add_care_note',
    scope: TOOL_SCOPES.add_care_note,
    title: 'Add a note to the care record',
    description:
      'Adds a note to a loved one\'s timeline in your name, through this app: plain text, line breaks kept. With about="day" (and an optional mood) it records how the day went. The family sees who wrote it and how.',
    annotations: WRITE,
    output: entryOutput,
  },
  logMedicationDose: {
    name: 'log_medication_dose',
    scope: TOOL_SCOPES.log_medication_dose,
    title: 'Log a medication dose',
    description:
      "Records a dose you (or the family) gave, or one that was missed or refused, on the loved one's timeline: medication name, optional amount and unit, the time (default now) and for a missed or refused dose an optional reason.",
    annotations: WRITE,
    output: entryOutput,
  },
  recordVital: {
    name: 'record_vital',
    scope: TOOL_SCOPES.record_vital,
    title: 'Record a reading taken at home',
    description: `Records a reading taken at home on the loved one's timeline. Kinds and units: ${Object.entries(HOME_VITALS)
      .map(([k, v]) => `${k} (${Object.keys(v.units).join(' or ')})`)
      .join(', ')}. Blood pressure takes the upper number as value and the lower as second. A value outside the plausible range is refused with the range.`,
    annotations: WRITE,
    output: entryOutput,
  },
  retractEntry: {
    name: 'retract_entry',
    scope: TOOL_SCOPES.retract_entry,
    title: 'Withdraw an entry',
    description:
      "Withdraws a family entry (its id from list_care_events) with a reason: the timeline shows it as withdrawn, with the reason, and its earlier text stays in its history. Agency events cannot be withdrawn. Only the entry's author or the primary caregiver may withdraw it. The person is asked to confirm first.",
    annotations: { ...WRITE, destructiveHint: true, idempotentHint: true },
    output: entryOutput,
  },
} as const satisfies Record<string, ToolDeclaration>;

const UTC_WORDS = {
  time: (d: Date) => `${d.toISOString().slice(11, 16)} UTC`,
  dayTime: (d: Date) => `${d.toISOString().slice(0, 10)} ${d.toISOString().slice(11, 16)} UTC`,
  isoDay: (d: Date) => d.toISOString().slice(0, 10),
};

const view = (e: CareEventRecord) => ({
  entry: {
    id: e._id,
    lovedOneId: e.lovedOneId,
    source: 'family' as const,
    eventType: e.eventType,
    occurredAt: e.occurredAt.toISOString(),
    payload: e.payload,
    author: e.author!,
    ...(e.supersedes ? { supersedes: e.supersedes } : {}),
    line: careWords(e, UTC_WORDS).line,
  },
});

const lovedOneId = z.string().min(1).max(64).describe('The loved one (from list_loved_ones).');
const at = z.iso
  .datetime({ offset: true, message: 'at must be an ISO 8601 date-time with a time zone, e.g. 2026-11-27T18:30:00Z' })
  .optional()
  .describe('When it happened (ISO 8601, within the last 30 days); default now.');

/** A domain refusal in the words a client acts on: a named field, a plain reason, a missing entry. */
function refusal(tool: string, err: unknown): unknown {
  if (err instanceof EntryInvalid) return new RpcError(RPC.INVALID_PARAMS, `Invalid arguments for ${tool}: ${err.message}`, { field: err.field });
  if (err instanceof ReadOnlyMember || err instanceof NotYourEntry)
    return new RpcError(RPC.NOT_AUTHORIZED, err.message, { hint: 'Ask the primary caregiver to let you add things on the Family circle page.' });
  if (err instanceof EntryNotFound)
    return new RpcError(RPC.NOT_AUTHORIZED, 'Not authorized for this entryId', {
      hint: "The id is not a family entry of this loved one; agency events cannot be changed. list_care_events shows each entry's id.",
    });
  if (err instanceof EntryChanged) return new ToolError(err.message);
  return err;
}

export function entryTools(store: WorkspaceStore, clientName: ClientNamer): ToolDefinition[] {
  const entries = new FamilyEntries(store.timelines);

  /** The caller's membership and the loved one in it; anything else is "not authorized". */
  async function scope(ctx: CallContext, id: string): Promise<{ member: MemberRecord; lovedOne: LovedOneRecord; author: EntryAuthor }> {
    const caller = ctx.caller as WorkspaceCaller;
    const membership = caller.tenant === 'family' ? await store.workspaceOf(caller.uid) : null;
    const lovedOne = membership ? await store.lovedOneIn(membership.workspace._id, id) : null;
    if (!membership || !lovedOne) throw notAuthorized();
    const [user, client] = await Promise.all([store.user(caller.uid), caller.via === 'session' ? undefined : clientName(caller)]);
    const name = user?.name?.trim() || caller.email;
    const who: EntryAuthor =
      caller.via === 'session' ? { uid: caller.uid, name, via: 'app' } : { uid: caller.uid, name, via: 'assistant', client: client ?? 'an assistant' };
    return { member: membership.member, lovedOne, author: who };
  }

  const guarded =
    <A>(tool: string, run: (args: A, ctx: CallContext) => Promise<CareEventRecord>) =>
    async (args: A, ctx: CallContext) => {
      try {
        const e = await run(args, ctx);
        const v = view(e);
        return { summary: v.entry.line, structured: v };
      } catch (err) {
        throw refusal(tool, err);
      }
    };

  return [
    implementTool(ENTRY_TOOLS.addCareNote, {
      input: z
        .object({
          lovedOneId,
          text: z.string().min(1).max(5000).describe('The note, plain text; line breaks are kept.'),
          about: z.enum(['note', 'day']).default('note').describe('"day": how the day went.'),
          mood: z
            .enum(Object.keys(MOODS) as [keyof typeof MOODS, ...(keyof typeof MOODS)[]])
            .optional()
            .describe('With about="day": how the day was overall.'),
          at,
        })
        .strict(),
      handler: guarded('add_care_note', async (a, ctx) => {
        const s = await scope(ctx, a.lovedOneId);
        const kind = a.about === 'day' || a.mood ? 'day' : 'note';
        return entries.add(s.member, s.lovedOne, kind, { text: a.text, ...(a.mood ? { mood: a.mood } : {}) }, s.author, a.at ? { at: new Date(a.at) } : {});
      }),
    }),
    implementTool(ENTRY_TOOLS.logMedicationDose, {
      input: z
        .object({
          lovedOneId,
          medication: z.string().min(1).max(200).describe('The medication\'s name, e.g. "Metoprolol".'),
          status: z.enum(Object.keys(DOSE_STATUSES) as [keyof typeof DOSE_STATUSES, ...(keyof typeof DOSE_STATUSES)[]]).describe('given, missed or refused.'),
          amount: z.number().min(0).max(100_000).optional().describe('The dose, e.g. 25.'),
          unit: z.string().min(1).max(50).optional().describe('The dose\'s unit, e.g. "mg" or "tablet".'),
          reason: z.string().min(1).max(500).optional().describe('Why it was missed or refused.'),
          at,
        })
        .strict(),
      handler: guarded('log_medication_dose', async ({ lovedOneId: id, at: when, ...dose }, ctx) => {
        const s = await scope(ctx, id);
        return entries.add(s.member, s.lovedOne, 'dose', dose, s.author, when ? { at: new Date(when) } : {});
      }),
    }),
    implementTool(ENTRY_TOOLS.recordVital, {
      input: z
        .object({
          lovedOneId,
          kind: z.enum(Object.keys(HOME_VITALS) as [string, ...string[]]).describe('What was measured.'),
          value: z.number().describe('The reading; for blood pressure the upper (systolic) number.'),
          second: z.number().optional().describe('For blood pressure only: the lower (diastolic) number.'),
          unit: z.string().min(1).max(20).describe('One of the units listed for the kind, e.g. "mmHg", "kg", "°C", "mg/dL", "%", "/min".'),
          at,
        })
        .strict(),
      handler: guarded('record_vital', async ({ lovedOneId: id, at: when, ...reading }, ctx) => {
        const s = await scope(ctx, id);
        return entries.add(s.member, s.lovedOne, 'reading', reading, s.author, when ? { at: new Date(when) } : {});
      }),
    }),
    implementTool(ENTRY_TOOLS.retractEntry, {
      input: z
        .object({
          lovedOneId,
          entryId: z.string().min(1).max(64).describe('The entry to withdraw (its id from list_care_events).'),
          reason: z.string().min(1).max(500).describe('Why it is withdrawn; the family sees it.'),
        })
        .strict(),
      confirm: async ({ lovedOneId: id, entryId, reason }, ctx) => {
        const s = await scope(ctx, id).catch(() => null);
        const entry = s ? await entries.entry(s.lovedOne, entryId) : null;
        if (!s || !entry) return undefined; // the handler refuses it, with the reason
        return `Withdraw "${careWords(entry, UTC_WORDS).line}" from ${s.lovedOne.displayName}'s care record, giving the reason "${reason}"?`;
      },
      // The entry as the person saw it: edited or withdrawn since, an approval is stale.
      basis: async ({ lovedOneId: id, entryId }, ctx) => {
        const s = await scope(ctx, id).catch(() => null);
        const entry = s ? await entries.entry(s.lovedOne, entryId) : null;
        return entry ? `${entry._id}>${entry.supersededBy ?? ''}` : 'none';
      },
      handler: guarded('retract_entry', async ({ lovedOneId: id, entryId, reason }, ctx) => {
        const s = await scope(ctx, id);
        const entry = await entries.entry(s.lovedOne, entryId);
        // Withdrawn already by this same request's withdrawal: the answer the first call had.
        if (entry?.supersededBy) {
          const newer = await entries.entry(s.lovedOne, entry.supersededBy);
          if (newer?.eventType === 'entry_withdrawn' && newer.payload.reason === reason && newer.author?.uid === s.author.uid) return newer;
        }
        return entries.withdraw(s.member, s.lovedOne, entryId, reason, s.author);
      }),
    }),
  ];
}
