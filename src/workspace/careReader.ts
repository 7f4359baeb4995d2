// What the workspace prompt and resources share: the caller's loved ones re-derived from the
// verified caller on every call, and care events in the catalogue's words.
import { RPC } from '../rpc/codes.js';
import { RpcError } from '../rpc/errors.js';
import type { CallContext } from '../rpc/mcp.js';
import { CARE_GROUPS, careWords, groupOf, type CareGroup, type WordsClock } from '../family/careEventTypes.js';
import type { CareEventRecord, LovedOneRecord, WorkspaceStore } from '../family/records.js';
import type { WorkspaceCaller } from './caller.js';

/** The one refusal the tools, the prompt and the resources give for an id outside the caller's workspace, whether or not it exists. */
export const notAuthorized = () =>
  new RpcError(RPC.NOT_AUTHORIZED, 'Not authorized for this lovedOneId', {
    hint: 'The id is not in your family workspace; call list_loved_ones for the ids you can read.',
  });

export class CareReader {
  constructor(private readonly store: WorkspaceStore) {}

  /** The verified caller; the server has already refused one whose grant lacks the declared scope. */
  private reader(ctx: CallContext): WorkspaceCaller {
    return ctx.caller as WorkspaceCaller;
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
const DAY = new Intl.DateTimeFormat('en-US', { timeZone: 'UTC', weekday: 'short', month: 'short', day: 'numeric', year: 'numeric' });
const TIME = new Intl.DateTimeFormat('en-US', { timeZone: 'UTC', hour: 'numeric', minute: '2-digit' });
export const dayOf = (d: Date): string => DAY.format(d);
const timeOf = (d: Date): string =>
  TIME.format(d)
    .replace(/\u202f/g, ' ')
    .replace(/ ([AP]M)$/, (_m, x: string) => ` ${x.toLowerCase()}`);

/** The catalogue's wording in UTC. */
const UTC: WordsClock = { time: timeOf, dayTime: (d) => `${dayOf(d)}, ${timeOf(d)}`, isoDay: (d) => d.toISOString().slice(0, 10) };
/** "- Mon, Nov 23, 2026, 8:02 am: Metoprolol 25 mg given by Ana" */
export const eventLine = (e: CareEventRecord): string => `- ${dayOf(e.occurredAt)}, ${timeOf(e.occurredAt)}: ${careWords(e, UTC).line}`;

/** "3 medications given, 2 vital-sign readings", in the order they first appear. */
export function tally(events: CareEventRecord[]): string {
  const counts = new Map<CareGroup, number>();
  for (const group of events.map((e) => groupOf(e.eventType))) counts.set(group, (counts.get(group) ?? 0) + 1);
  return [...counts].map(([g, n]) => `${n} ${CARE_GROUPS[g].counted[n === 1 ? 0 : 1]}`).join(', ');
}
