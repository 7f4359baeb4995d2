// What the workspace prompt and resources share: the caller's loved ones re-derived from the
// verified caller on every call, and care events in plain words.
import { RPC } from '../rpc/codes.js';
import { RpcError } from '../rpc/errors.js';
import type { CallContext } from '../rpc/mcp.js';
import type { CareEventRecord, LovedOneRecord, WorkspaceStore } from '../family/records.js';
import type { WorkspaceCaller } from './caller.js';

/** The one refusal the tools, the prompt and the resources give for an id outside the caller's workspace, whether or not it exists. */
export const notAuthorized = () =>
  new RpcError(RPC.NOT_AUTHORIZED, 'Not authorized for this lovedOneId', { hint: 'The id is not in your family workspace; call list_loved_ones for the ids you can read.' });

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
const timeOf = (d: Date): string => TIME.format(d).replace(/\u202f/g, ' ').replace(/ ([AP]M)$/, (_m, x: string) => ` ${x.toLowerCase()}`);

const str = (v: unknown): string => (typeof v === 'string' ? v.trim() : typeof v === 'number' && Number.isFinite(v) ? String(v) : '');
const who = (v: unknown): string => str(v) || 'someone';
const words = (type: string): string => {
  const w = type.replace(/[_-]+/g, ' ').trim() || 'event';
  return w.charAt(0).toUpperCase() + w.slice(1);
};

/** What kind of entry an event is, for the tally; the summary in plain words. */
function plain(e: CareEventRecord): { group: string; text: string } {
  const p = e.payload;
  switch (e.eventType) {
    case 'med_administered':
      return { group: 'medications', text: `${[str(p.medication_name) || 'A medication', str(p.dose_amount), str(p.dose_unit)].filter(Boolean).join(' ')} given by ${who(p.administered_by)}` };
    case 'vital_recorded': {
      const reading = [str(p.value), str(p.secondary_value)].filter(Boolean).join('/');
      return { group: 'vitals', text: `${words(str(p.vital_type) || 'vital sign')} ${reading} ${str(p.unit)}`.trim() + `, recorded by ${who(p.recorded_by)}` };
    }
    case 'visit_started':
      return { group: 'visits', text: `Visit by ${who(p.caregiver_id)} started` };
    case 'visit_ended':
      return { group: 'visits', text: `Visit by ${who(p.caregiver_id)} ended${typeof p.duration_minutes === 'number' ? ` after ${p.duration_minutes} min` : ''}` };
    case 'note_added':
      return { group: 'notes', text: `Note from ${who(p.caregiver_id)}: ${str(p.note_text).replace(/\s+/g, ' ').slice(0, 500)}` };
    case 'inbox_message':
      return { group: 'mail', text: `Mail from ${str(p.from) || 'an unknown sender'}: ${str(p.subject) || '(no subject)'}` };
    default: {
      // A type this version does not know is shown with its fields, never dropped.
      const fields = Object.entries(p).slice(0, 8).map(([k, v]) => `${words(k)}: ${(typeof v === 'string' ? v : JSON.stringify(v) ?? '').slice(0, 120)}`);
      return { group: 'other', text: `${words(e.eventType)}${fields.length ? ` (${fields.join('; ')})` : ''}` };
    }
  }
}

/** "- Mon, Nov 23, 2026, 8:02 am: Metoprolol 25 mg given by Ana" */
export const eventLine = (e: CareEventRecord): string => `- ${dayOf(e.occurredAt)}, ${timeOf(e.occurredAt)}: ${plain(e).text}`;

const GROUP_WORDS: Record<string, [string, string]> = {
  medications: ['medication given', 'medications given'],
  vitals: ['vital-sign reading', 'vital-sign readings'],
  visits: ['visit update', 'visit updates'],
  notes: ['note', 'notes'],
  mail: ['inbox message', 'inbox messages'],
  other: ['other event', 'other events'],
};

/** "3 medications given, 2 vital-sign readings", in the order they first appear. */
export function tally(events: CareEventRecord[]): string {
  const counts = new Map<string, number>();
  for (const { group } of events.map(plain)) counts.set(group, (counts.get(group) ?? 0) + 1);
  return [...counts].map(([g, n]) => `${n} ${(GROUP_WORDS[g] ?? GROUP_WORDS.other!)[n === 1 ? 0 : 1]}`).join(', ');
}
