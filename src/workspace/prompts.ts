// The workspace's prompt: a weekly care summary for one loved one, built from the last 7 days of
// that loved one's care events in plain words (the family's appointments and tasks done among them)
// and the coming week's appointments. Read-only: it only reads what the tools read.
import type { PromptDeclaration, PromptDefinition } from '../rpc/mcp.js';
import type { AppointmentRecord, PlansStore } from '../family/plans.js';
import type { CareEventRecord, LovedOneRecord, WorkspaceStore } from '../family/records.js';
import { isDoseNotGiven } from '../family/careEventTypes.js';
import { CareReader, tally, type ZoneWords } from './careReader.js';
import { CARE_READ_SCOPE } from './scopes.js';

export const SUMMARY_DAYS = 7;
/** More than a week of ordinary care produces; the prompt says when it was cut short. */
export const SUMMARY_MAX_EVENTS = 200;

export const WEEKLY_SUMMARY_PROMPT = {
  name: 'weekly_care_summary',
  title: 'Weekly care summary for a loved one',
  description: `A plain-words summary of the last ${SUMMARY_DAYS} days of care for one loved one: medications (missed and refused doses too), vital signs, visits, notes and mail, appointments and the tasks the family did, with times in the family's time zone. Read-only.`,
  arguments: [{ name: 'lovedOneId', description: 'The loved one (an id from list_loved_ones).', required: true }],
} as const satisfies PromptDeclaration;

export const WORKSPACE_PROMPTS: readonly PromptDeclaration[] = [WEEKLY_SUMMARY_PROMPT];

export function workspacePrompts(store: WorkspaceStore, clock: () => number = Date.now, plans?: PlansStore): PromptDefinition[] {
  const reader = new CareReader(store);
  return [
    {
      ...WEEKLY_SUMMARY_PROMPT,
      scope: CARE_READ_SCOPE,
      get: async (args, ctx) => {
        const lovedOne = await reader.lovedOne(ctx, args.lovedOneId!.trim());
        const words = await reader.wordsFor(ctx);
        const now = new Date(clock());
        const since = new Date(now.getTime() - SUMMARY_DAYS * 86_400_000);
        const { name, record, planned } = await careSummary(store, plans, lovedOne, words, since, now);
        const ask = `Please write a short weekly care summary of ${name} for the family, in plain words: how the week went, medications given, every dose missed or refused (what, when and why, if the record says), any vital-sign readings worth a look, visits and notes, appointments and the tasks the family did. Give times as written, in ${words.zone}. Do not guess at anything that is not in the record.`;
        return {
          description: `Weekly care summary for ${name}`,
          messages: [{ role: 'user', content: { type: 'text', text: `${ask}\n\n${record}${planned}` } }],
        };
      },
    },
  ];
}

/** What was recorded for a loved one between two instants, in the catalogue's words: the one
 *  wording the weekly_care_summary prompt and the family's digest mail (src/alerts) share. */
export interface CareSummary {
  name: string;
  /** Newest first, at most SUMMARY_MAX_EVENTS. */
  events: CareEventRecord[];
  /** The record as text: a tally, every event as a line, then the doses missed or refused. */
  record: string;
  /** The appointments of the period after it, as lines (empty without plans); the period's own
   *  appointments and tasks done are in the record. */
  planned: string;
  appointments: AppointmentRecord[];
}

export async function careSummary(
  store: Pick<WorkspaceStore, 'listCareEvents'>,
  plans: Pick<PlansStore, 'between'> | undefined,
  lovedOne: LovedOneRecord,
  words: ZoneWords,
  since: Date,
  now: Date,
): Promise<CareSummary> {
  // Until now: an appointment still to come is filed at its start, and is listed below as coming.
  const { events, nextCursor } = await store.listCareEvents(lovedOne._id, { since, until: now, limit: SUMMARY_MAX_EVENTS });
  const name = lovedOne.displayName;
  const period = `from ${words.day(since)} to ${words.day(now)} (times in ${words.zone})`;
  // Listed apart as well as in place: a dose not given is what a family most needs to hear of.
  const notGiven = events.filter((e) => isDoseNotGiven(e.eventType));
  const record = events.length
    ? [
        `Here is what was recorded for ${name} ${period}, newest first: ${tally(events)}${nextCursor ? ` (the latest ${SUMMARY_MAX_EVENTS} events only)` : ''}.`,
        '',
        ...events.map(words.line),
        ...(notGiven.length ? ['', `Doses missed or refused (${notGiven.length}):`, ...notGiven.map(words.line)] : []),
      ].join('\n')
    : `Nothing was recorded for ${name} ${period}.`;
  const ahead = new Date(now.getTime() + (now.getTime() - since.getTime()));
  const planned = plans ? await planLines(plans, lovedOne._id, now, ahead, words) : { text: '', appointments: [] };
  return { name, events, record, planned: planned.text, appointments: planned.appointments };
}

/** The appointments from now to `ahead`, as lines. */
async function planLines(
  plans: Pick<PlansStore, 'between'>,
  lovedOneId: string,
  now: Date,
  ahead: Date,
  words: ZoneWords,
): Promise<{ text: string; appointments: AppointmentRecord[] }> {
  const coming = await plans.between(lovedOneId, now, ahead, 50);
  const days = Math.round((ahead.getTime() - now.getTime()) / 86_400_000);
  const lines = [
    ...(coming.length ? ['', `Appointments in the next ${days} days (${coming.length}):`] : []),
    ...coming.map(
      (a) =>
        `- ${words.day(a.start)}, ${words.time(a.start)}: ${a.title}${a.withWhom ? ` with ${a.withWhom}` : ''}${a.place ? ` at ${a.place}` : ''}${a.status === 'cancelled' ? ' (cancelled)' : ''}`,
    ),
  ];
  return { text: lines.join('\n'), appointments: coming };
}
