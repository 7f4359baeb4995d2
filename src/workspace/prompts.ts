// The workspace's prompt: a weekly care summary for one loved one, built from the last 7 days of
// that loved one's care events in plain words. Read-only: it only reads what the tools read.
import type { PromptDeclaration, PromptDefinition } from '../rpc/mcp.js';
import type { WorkspaceStore } from '../family/records.js';
import { CareReader, dayOf, eventLine, tally } from './careReader.js';
import { CARE_READ_SCOPE } from './scopes.js';

export const SUMMARY_DAYS = 7;
/** More than a week of ordinary care produces; the prompt says when it was cut short. */
export const SUMMARY_MAX_EVENTS = 200;

export const WEEKLY_SUMMARY_PROMPT = {
  name: 'weekly_care_summary',
  title: 'Weekly care summary for a loved one',
  description: `A plain-words summary of the last ${SUMMARY_DAYS} days of care for one loved one: medications, vital signs, visits, notes and mail. Read-only.`,
  arguments: [{ name: 'lovedOneId', description: 'The loved one (an id from list_loved_ones).', required: true }],
} as const satisfies PromptDeclaration;

export const WORKSPACE_PROMPTS: readonly PromptDeclaration[] = [WEEKLY_SUMMARY_PROMPT];

export function workspacePrompts(store: WorkspaceStore, clock: () => number = Date.now): PromptDefinition[] {
  const reader = new CareReader(store);
  return [
    {
      ...WEEKLY_SUMMARY_PROMPT,
      scope: CARE_READ_SCOPE,
      get: async (args, ctx) => {
        const lovedOne = await reader.lovedOne(ctx, args.lovedOneId!.trim());
        const now = new Date(clock());
        const since = new Date(now.getTime() - SUMMARY_DAYS * 86_400_000);
        const { events, nextCursor } = await reader.events(lovedOne, { since, limit: SUMMARY_MAX_EVENTS });
        const name = lovedOne.displayName;
        const period = `from ${dayOf(since)} to ${dayOf(now)} (times in UTC)`;
        const record = events.length
          ? [
              `Here is what was recorded for ${name} ${period}, newest first: ${tally(events)}${nextCursor ? ` (the latest ${SUMMARY_MAX_EVENTS} events only)` : ''}.`,
              '',
              ...events.map(eventLine),
            ].join('\n')
          : `Nothing was recorded for ${name} ${period}.`;
        const ask = `Please write a short weekly care summary of ${name} for the family, in plain words: how the week went, medications given, any vital-sign readings worth a look, visits and notes. Do not guess at anything that is not in the record.`;
        return {
          description: `Weekly care summary for ${name}`,
          messages: [{ role: 'user', content: { type: 'text', text: `${ask}\n\n${record}` } }],
        };
      },
    },
  ];
}
