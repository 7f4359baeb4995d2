// A care event as stored, its one listing order, and the JSON a page keeps its events in.

export interface CareEventRecord {
  _id: string;
  lovedOneId: string;
  workspaceId: string;
  source: 'partner' | 'inbox';
  institutionId?: string;
  eventType: string;
  occurredAt: Date;
  receivedAt: Date;
  payload: Record<string, unknown>;
  sourceEventId?: string;
  /** The partner's subject of a partner event: what the partner's purge deletes by. */
  subjectRef?: string;
}

/** The one order of every listing: newest first, ties broken by id so pages never overlap. */
export function newerFirst(a: { occurredAt: Date; _id: string }, b: { occurredAt: Date; _id: string }): number {
  return b.occurredAt.getTime() - a.occurredAt.getTime() || (a._id < b._id ? 1 : a._id > b._id ? -1 : 0);
}

/** `yyyy-mm` of an instant, in UTC. */
export const monthOf = (d: Date): string => d.toISOString().slice(0, 7);

export const encodeEvents = (events: readonly CareEventRecord[]): string => JSON.stringify(events);

export const decodeEvents = (json: string): CareEventRecord[] =>
  (JSON.parse(json) as (Omit<CareEventRecord, 'occurredAt' | 'receivedAt'> & { occurredAt: string; receivedAt: string })[]).map((e) => ({ ...e, occurredAt: new Date(e.occurredAt), receivedAt: new Date(e.receivedAt) }));

export function groupBy<T>(items: readonly T[], keyOf: (item: T) => string): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const item of items) {
    const key = keyOf(item);
    const list = out.get(key);
    if (list) list.push(item);
    else out.set(key, [item]);
  }
  return out;
}
