// What the workspace prompt and resources share: the caller's loved ones re-derived from the
// verified caller on every call, and care events in plain words.
import { InsufficientScope } from './tools.js';
import { RPC } from '../rpc/codes.js';
import { RpcError } from '../rpc/errors.js';
import type { CallContext } from '../rpc/mcp.js';
import type { CareEventRecord, LovedOneRecord, WorkspaceStore } from '../family/records.js';
import { describe as describeEvent } from '../care/describe.js';
import { clockIn } from '../care/time.js';
import type { WorkspaceCaller } from './caller.js';
import { CARE_READ_SCOPE } from './scopes.js';

/** Whether a caller is shown care content: OAuth callers only with care_circle:read. */
export function mayReadCare(caller: unknown): boolean {
  const scopes = (caller as WorkspaceCaller | undefined)?.scopes;
  return scopes === undefined || scopes === 'all' || scopes.includes(CARE_READ_SCOPE);
}

/** The same refusal the tools give for an id outside the caller's workspace, whether or not it exists. */
export const notAuthorized = () =>
  new RpcError(RPC.NOT_AUTHORIZED, 'Not authorized for this lovedOneId', { hint: 'The id is not in your family workspace; call list_loved_ones for the ids you can read.' });

export class CareReader {
  constructor(private readonly store: WorkspaceStore) {}

  /** The verified caller, refused when an OAuth grant lacks care_circle:read. */
  private reader(ctx: CallContext): WorkspaceCaller {
    const caller = ctx.caller as WorkspaceCaller;
    if (!mayReadCare(caller)) throw new InsufficientScope(CARE_READ_SCOPE);
    return caller;
  }

  /** Every loved one the caller's family workspace holds (none for other tenants). */
  async lovedOnes(ctx: CallContext): Promise<LovedOneRecord[]> {
    const caller = this.reader(ctx);
    const membership = caller.tenant === 'family' ? await this.store.workspaceOf(caller.uid) : null;
    return membership ? this.store.lovedOnesOf(membership.workspace._id) : [];
  }

  /** One loved one of the caller's workspace; a foreign or unknown id is refused alike. */
  async lovedOne(ctx: CallContext, lovedOneId: string): Promise<LovedOneRecord> {
    const caller = this.reader(ctx);
    const membership = caller.tenant === 'family' ? await this.store.workspaceOf(caller.uid) : null;
    const lovedOne = membership ? await this.store.lovedOneIn(membership.workspace._id, lovedOneId) : null;
    if (!lovedOne) throw notAuthorized();
    return lovedOne;
  }

  events(lovedOne: LovedOneRecord, q: { since?: Date; limit: number }) {
    return this.store.listCareEvents(lovedOne._id, q);
  }
}

/** Times are written in UTC: an assistant reading them knows no viewer's zone. */
const UTC = clockIn('UTC');

/** "- Mon, Nov 23, 8:02 am: Metoprolol 25 mg given by Ana at 8:02 am (Scheduled for …)" */
export function eventLine(e: CareEventRecord): string {
  const entry = describeEvent(e, UTC);
  const extra = entry.detail ? ` (${entry.detail.replace(/\s+/g, ' ').trim()})` : entry.fields?.length ? ` (${entry.fields.map(([k, v]) => `${k}: ${v}`).join('; ')})` : '';
  return `- ${UTC.day(e.occurredAt)}, ${UTC.time(e.occurredAt)}: ${entry.summary}${extra}`;
}

/** "3 medications given, 2 vital-sign readings" from the events' groups. */
export function tally(events: CareEventRecord[]): string {
  const words: Record<string, [string, string]> = {
    medications: ['medication given', 'medications given'],
    vitals: ['vital-sign reading', 'vital-sign readings'],
    visits: ['visit update', 'visit updates'],
    notes: ['note', 'notes'],
    mail: ['inbox message', 'inbox messages'],
    other: ['other event', 'other events'],
  };
  const counts = new Map<string, number>();
  for (const e of events) {
    const group = describeEvent(e, UTC).group;
    counts.set(group, (counts.get(group) ?? 0) + 1);
  }
  return [...counts].map(([g, n]) => `${n} ${(words[g] ?? words.other!)[n === 1 ? 0 : 1]}`).join(', ');
}

export const dayOf = (d: Date): string => UTC.day(d);
