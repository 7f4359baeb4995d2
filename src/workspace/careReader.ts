// What the workspace prompt and resources share: the caller's loved ones re-derived from the
// verified caller on every call, and care events in the catalogue's words, in the caller's time zone.
import { RPC } from '../rpc/codes.js';
import { RpcError } from '../rpc/errors.js';
import type { CallContext } from '../rpc/mcp.js';
import { careWords, countedAs, type WordsClock } from '../family/careEventTypes.js';
import { knownZone } from '../family/changes.js';
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

  events(lovedOne: LovedOneRecord, q: { since?: Date; until?: Date; limit: number }) {
    return this.store.listCareEvents(lovedOne._id, q);
  }

  /** Times in the zone the caller chose in Settings (at first sign-in, their browser's); UTC until then. */
  async wordsFor(ctx: CallContext): Promise<ZoneWords> {
    return wordsIn((await this.store.user(this.reader(ctx).uid))?.timeZone);
  }
}

/** Times in a zone, as the catalogue words them; an unknown or missing zone reads as UTC. */
export interface ZoneWords extends WordsClock {
  zone: string;
  /** "Tue, Nov 24, 2026" */
  day(d: Date): string;
  /** "- Tue, Nov 24, 2026, 6:20 pm: Metoprolol 25 mg given by Ana" */
  line(e: CareEventRecord): string;
}

const kept = new Map<string, ZoneWords>();

/** The catalogue's wording in `zone` (an IANA name, as Settings stores it). */
export function wordsIn(zone: string | undefined): ZoneWords {
  const name = (zone && knownZone(zone)) || 'UTC';
  const hit = kept.get(name);
  if (hit) return hit;
  const DAY = new Intl.DateTimeFormat('en-US', { timeZone: name, weekday: 'short', month: 'short', day: 'numeric', year: 'numeric' });
  const TIME = new Intl.DateTimeFormat('en-US', { timeZone: name, hour: 'numeric', minute: '2-digit' });
  const ISO = new Intl.DateTimeFormat('en-CA', { timeZone: name, year: 'numeric', month: '2-digit', day: '2-digit' });
  const day = (d: Date): string => DAY.format(d);
  const time = (d: Date): string =>
    TIME.format(d)
      .replace(/\u202f/g, ' ')
      .replace(/ ([AP]M)$/, (_m, x: string) => ` ${x.toLowerCase()}`);
  const words: ZoneWords = {
    zone: name,
    day,
    time,
    dayTime: (d) => `${day(d)}, ${time(d)}`,
    isoDay: (d) => ISO.format(d),
    line: (e) => `- ${day(e.occurredAt)}, ${time(e.occurredAt)}: ${careWords(e, words).line}`,
  };
  if (kept.size < 500) kept.set(name, words);
  return words;
}

/** "- Mon, Nov 23, 2026, 8:02 am: Metoprolol 25 mg given by Ana", in UTC. */
export const eventLine = (e: CareEventRecord): string => wordsIn('UTC').line(e);

/** "3 medications given, 1 dose missed, 2 vital-sign readings", in the order they first appear. */
export function tally(events: CareEventRecord[]): string {
  const counts = new Map<readonly [string, string], number>();
  for (const counted of events.map((e) => countedAs(e.eventType))) counts.set(counted, (counts.get(counted) ?? 0) + 1);
  return [...counts].map(([counted, n]) => `${n} ${counted[n === 1 ? 0 : 1]}`).join(', ');
}
