// The workspace MCP tools for a loved one's medication list: list_medications reads it with
// today's dose states; update_medication adds, changes or stops one, for members who may write,
// and asks the person first before a change or a stop.
import { z } from 'zod';
import { authorOf } from '../family/careEventTypes.js';
import { plannedZone } from '../family/changes.js';
import { canWrite } from '../family/circle.js';
import {
  changedByWords,
  fieldsOf,
  inputOf,
  MedicationConflict,
  medicationFieldsInput,
  type ChangedBy,
  type MedicationList,
  type MedicationVersion,
  scheduledOf,
  amountOf,
} from '../family/medications.js';
import { todaysListDoses, WEEKDAYS } from '../family/medSchedule.js';
import type { WorkspaceStore, CareEventRecord } from '../family/records.js';
import { RPC } from '../rpc/codes.js';
import { RpcError, ToolError } from '../rpc/errors.js';
import { implementTool, type CallContext, type ToolDeclaration, type ToolDefinition } from '../rpc/mcp.js';
import type { WorkspaceCaller } from './caller.js';
import { notAuthorized, wordsIn } from './careReader.js';
import { TOOL_SCOPES } from './scopes.js';

const schedule = z.object({ asNeeded: z.boolean(), times: z.array(z.string()), days: z.array(z.string()), timeZone: z.string() });

const medicationView = z.object({
  medicationId: z.string(),
  version: z.number().int(),
  status: z.enum(['active', 'stopped']),
  name: z.string(),
  strength: z.string().optional(),
  dose: z.string().optional(),
  form: z.string().optional(),
  route: z.string().optional(),
  schedule,
  startDate: z.string().optional(),
  stopDate: z.string().optional(),
  prescriber: z.string().optional(),
  note: z.string().optional(),
  graceMinutes: z.number().int().optional(),
  stoppedAt: z.string().optional(),
  stopReason: z.string().optional(),
  changedAt: z.string(),
  changedBy: z.string(),
});

const doseView = z.object({
  medicationId: z.string(),
  medication: z.string(),
  amount: z.string(),
  due: z.string(),
  state: z.enum(['due', 'given', 'refused', 'missed']),
  recordedAt: z.string().optional(),
  recordedBy: z.string().optional(),
  note: z.string().optional(),
});

export const listMedicationsOutput = z.object({
  lovedOneId: z.string(),
  medications: z.array(medicationView),
  today: z.array(doseView),
});

export const updateMedicationOutput = z.object({
  lovedOneId: z.string(),
  action: z.enum(['add', 'change', 'stop']),
  medication: medicationView,
});

export const MEDICATION_TOOLS = {
  listMedications: {
    name: 'list_medications',
    scope: TOOL_SCOPES.list_medications,
    title: "List a loved one's medications",
    description:
      "A loved one's medication list (each medication with its strength, dose, form, how it is taken, schedule in the loved one's time zone, dates, prescriber and note; stopped ones with includeStopped) and today's scheduled doses, each due, given, refused or missed (nothing recorded 60 minutes after its time unless the medication sets its own grace), as the agency or the family recorded them.",
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    output: listMedicationsOutput,
  },
  updateMedication: {
    name: 'update_medication',
    scope: TOOL_SCOPES.update_medication,
    title: 'Add, change or stop a medication',
    description:
      "Adds a medication to a loved one's list (action add, with medication), changes one (action change, medicationId and the fields to change in medication), or stops one (action stop, medicationId, an optional reason). Times are HH:MM in the loved one's time zone; days are mon..sun (none: every day); asNeeded for no set times. Nothing is overwritten: each change is a new version and the list keeps the history. Changing or stopping asks the person first. Only members the primary caregiver lets add and change things may call it.",
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
    output: updateMedicationOutput,
  },
} as const satisfies Record<string, ToolDeclaration>;

const iso = (d: Date | undefined) => (d ? d.toISOString() : undefined);

function view(v: MedicationVersion): z.output<typeof medicationView> {
  const out = {
    medicationId: v.medicationId,
    version: v.version,
    status: v.status,
    name: v.name,
    strength: v.strength,
    dose: v.dose,
    form: v.form,
    route: v.route,
    schedule: v.schedule,
    startDate: v.startDate,
    stopDate: v.stopDate,
    prescriber: v.prescriber,
    note: v.note,
    graceMinutes: v.graceMinutes,
    stoppedAt: iso(v.stoppedAt),
    stopReason: v.stopReason,
    changedAt: v.at.toISOString(),
    changedBy: changedByWords(v.by),
  };
  return Object.fromEntries(Object.entries(out).filter(([, x]) => x !== undefined)) as z.output<typeof medicationView>;
}

const lovedOneId = z.string().min(1).max(64).describe('The loved one (from list_loved_ones).');

/** The fields of a medication as the tool takes them: a change gives only what changes. */
const changeFields = z
  .object({
    name: z.string().max(120),
    strength: z.string().max(60),
    dose: z.string().max(60),
    form: z.string().max(40),
    route: z.string().max(40),
    asNeeded: z.boolean(),
    times: z.array(z.string().max(5)).max(8),
    days: z.array(z.enum(WEEKDAYS)).max(7),
    timeZone: z.string().max(64),
    startDate: z.string().max(10),
    stopDate: z.string().max(10),
    prescriber: z.string().max(120),
    note: z.string().max(1000),
    graceMinutes: z.number().int(),
  })
  .partial()
  .strict();

const updateInput = z
  .object({
    lovedOneId,
    action: z.enum(['add', 'change', 'stop']).describe('add a new medication, change one, or stop one.'),
    medicationId: z.string().min(1).max(64).optional().describe('For change and stop: the medication (from list_medications).'),
    medication: changeFields
      .optional()
      .describe(
        'For add: the medication (name, and times or asNeeded, required; timeZone defaults to the loved one\'s). For change: only the fields that change. strength "500 mg", dose "1 tablet", form "tablet", route "by mouth", times ["08:00","20:00"], days ["mon","thu"], startDate/stopDate YYYY-MM-DD, graceMinutes 5-240.',
      ),
    reason: z.string().max(300).optional().describe('For stop: why, in a few words.'),
  })
  .strict()
  .superRefine((a, ctx) => {
    if (a.action !== 'add' && !a.medicationId) ctx.addIssue({ code: 'custom', path: ['medicationId'], message: `is required to ${a.action} a medication` });
    if (a.action === 'add' && a.medicationId)
      ctx.addIssue({ code: 'custom', path: ['medicationId'], message: 'is not taken with add (a new medication gets its own id)' });
    if (a.action !== 'stop' && !a.medication) ctx.addIssue({ code: 'custom', path: ['medication'], message: `is required to ${a.action} a medication` });
    if (a.action === 'add' && a.medication) {
      // Without a timeZone, the loved one's is taken (the handler knows them); one given must be real.
      const parsed = medicationFieldsInput.safeParse({ timeZone: 'UTC', ...a.medication });
      if (!parsed.success)
        for (const i of parsed.error.issues) ctx.addIssue({ code: 'custom', path: ['medication', ...i.path.map(String)], message: i.message });
    }
  });

type UpdateArgs = z.output<typeof updateInput>;

/** A member who may only read is refused before anything is written: -32003, in plain words. */
const readOnly = () =>
  new RpcError(RPC.NOT_AUTHORIZED, 'You can only read this family workspace', {
    hint: 'The primary caregiver decides who can add and change things; ask them to change your access on the Family page.',
  });

export interface MedicationToolDeps {
  store: WorkspaceStore;
  medications: MedicationList;
  /** The assistant's name for a caller's credential (the connected app, the API key), if known. */
  clientName?: (caller: WorkspaceCaller) => Promise<string | undefined>;
}

export function medicationTools({ store, medications, clientName }: MedicationToolDeps): ToolDefinition[] {
  const callerOf = (ctx: CallContext) => ctx.caller as WorkspaceCaller;

  /** The loved one and the caller's membership; a foreign or unknown id is refused alike. */
  const lovedOneOf = async (ctx: CallContext, id: string) => {
    const c = callerOf(ctx);
    const membership = c.tenant === 'family' ? await store.workspaceOf(c.uid) : null;
    const lovedOne = membership ? await store.lovedOneIn(membership.workspace._id, id) : null;
    if (!membership || !lovedOne) throw notAuthorized();
    return { lovedOne, member: membership.member };
  };

  const notFound = (id: string) =>
    new RpcError(RPC.NOT_AUTHORIZED, `No medication ${id} on this loved one's list`, { hint: 'Call list_medications for the ids on the list.' });

  const invalid = (message: string) => new RpcError(RPC.INVALID_PARAMS, `Invalid arguments for update_medication: ${message}`);

  /** The medication a change would become, validated whole; every problem names its field. */
  const changed = (current: MedicationVersion, given: NonNullable<UpdateArgs['medication']>) => {
    const parsed = medicationFieldsInput.safeParse({ ...inputOf(current), ...given });
    if (!parsed.success) throw invalid(parsed.error.issues.map((i) => `medication.${i.path.map(String).join('.')}: ${i.message}`).join('; '));
    return fieldsOf(parsed.data);
  };

  const words = (v: Pick<MedicationVersion, 'name' | 'strength' | 'dose'>) => [v.name, amountOf(v as MedicationVersion)].filter(Boolean).join(' ');

  return [
    implementTool(MEDICATION_TOOLS.listMedications, {
      input: z
        .object({
          lovedOneId,
          includeStopped: z.boolean().default(false).describe('Also list stopped medications (with their stop time and reason).'),
        })
        .strict(),
      handler: async ({ lovedOneId: id, includeStopped }, ctx) => {
        const { lovedOne } = await lovedOneOf(ctx, id);
        const meds = await medications.list(lovedOne._id);
        const now = new Date();
        const zoneOf = new Map(meds.map((m) => [m.current.medicationId, m.current.schedule.timeZone]));
        // Yesterday and today in any zone: the events today's doses may be matched to.
        const events = meds.length
          ? (
              await store.listCareEvents(lovedOne._id, {
                since: new Date(now.getTime() - 2 * 86_400_000),
                types: ['med_administered', 'med_refused', 'med_missed'],
                limit: 500,
              })
            ).events
          : [];
        const today = todaysListDoses(
          meds.map((m) => scheduledOf(m.current)),
          events,
          now,
          // A member's own entry names its author and how ("Sam Lopez, in the app"), as the timeline does.
          (e: CareEventRecord) =>
            e.source === 'family'
              ? authorOf(e)
              : typeof e.payload.caregiver_name === 'string'
                ? e.payload.caregiver_name
                : e.institutionId
                  ? 'the agency'
                  : 'the family',
        );
        return {
          structured: {
            lovedOneId: lovedOne._id,
            medications: meds.filter((m) => includeStopped || m.current.status === 'active').map((m) => view(m.current)),
            today: today.map((d) => ({
              medicationId: d.medicationId,
              medication: d.medication,
              amount: d.amount,
              due: d.due.toISOString(),
              state: d.state,
              ...(d.at ? { recordedAt: d.at.toISOString() } : {}),
              ...(d.by ? { recordedBy: d.by } : {}),
              ...(d.note ? { note: d.note } : {}),
            })),
          },
          summary: today.length
            ? `Today's doses for ${lovedOne.displayName}: ${today.map((d) => `${d.medication} at ${wordsIn(zoneOf.get(d.medicationId)).time(d.due)} ${d.state}`).join('; ')}.`
            : `${meds.length} medication(s) on ${lovedOne.displayName}'s list; no doses scheduled today.`,
        };
      },
    }),
    implementTool(MEDICATION_TOOLS.updateMedication, {
      input: updateInput,
      confirm: async (args, ctx) => {
        if (args.action === 'add' || !args.medicationId) return undefined;
        const { lovedOne } = await lovedOneOf(ctx, args.lovedOneId);
        const m = await medications.one(lovedOne._id, args.medicationId);
        if (!m) return undefined; // the handler refuses it
        if (args.action === 'stop') return `Stop ${words(m.current)} for ${lovedOne.displayName}?`;
        const fields = Object.keys(args.medication ?? {}).join(', ');
        return `Change ${words(m.current)} for ${lovedOne.displayName} (${fields})?`;
      },
      // The version the person was asked about: a change made since makes an approval stale.
      basis: async (args, ctx) => {
        if (args.action === 'add' || !args.medicationId) return undefined;
        const { lovedOne } = await lovedOneOf(ctx, args.lovedOneId);
        const m = await medications.one(lovedOne._id, args.medicationId);
        return m ? `${m.current.medicationId}@${m.current.version}` : 'none';
      },
      handler: async (args, ctx) => {
        const { lovedOne, member } = await lovedOneOf(ctx, args.lovedOneId);
        if (!canWrite(member)) throw readOnly();
        const c = callerOf(ctx);
        const user = await store.user(c.uid);
        const client = await clientName?.(c);
        const by: ChangedBy = { uid: c.uid, name: user?.name?.trim() || c.email.split('@')[0]!, how: 'assistant', ...(client ? { client } : {}) };
        const result = (v: MedicationVersion, text: string) => ({
          structured: { lovedOneId: lovedOne._id, action: args.action, medication: view(v) },
          summary: text,
        });
        if (args.action === 'add') {
          const v = await medications.add(lovedOne, changed(stub(plannedZone(lovedOne, user?.timeZone)), args.medication!), by);
          return result(v, `Added ${words(v)} to ${lovedOne.displayName}'s medication list.`);
        }
        const m = await medications.one(lovedOne._id, args.medicationId!);
        if (!m) throw notFound(args.medicationId!);
        try {
          if (args.action === 'stop') {
            if (m.current.status === 'stopped') throw new ToolError(`${m.current.name} is already stopped.`);
            const v = await medications.stop(m, args.reason?.trim() || undefined, by);
            return result(v, `Stopped ${words(v)} for ${lovedOne.displayName}; it stays on the list with its history.`);
          }
          const v = await medications.change(m, changed(m.current, args.medication!), by);
          return result(v, `Changed ${words(v)} for ${lovedOne.displayName} (version ${v.version}).`);
        } catch (err) {
          if (err instanceof MedicationConflict) throw new ToolError(`${err.message}: call list_medications and try again.`);
          throw err;
        }
      },
    }),
  ];
}

/** An empty medication to add onto: every field of a new one comes from the caller, but for the
 *  zone, which is the loved one's unless the caller names another. */
const stub = (timeZone: string): MedicationVersion =>
  ({ name: '', schedule: { asNeeded: false, times: [], days: [], timeZone } }) as unknown as MedicationVersion;
