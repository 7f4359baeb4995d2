// The family records' care-event storage contract: batches stored in any order, redeliveries
// reported as duplicates rather than failures, and a loved one's events removed with them.
import { passThroughCredentials } from '../src/auth/credentials.js';
import { describe, expect, it } from 'vitest';
import { appendCareEvents, deleteLovedOneCareEvents, WorkspaceStore, type CareEventRecord } from '../src/family/records.js';
import { useTestDatabase } from './harness/database.js';
import { openTimelines } from '../src/store/timeline/timelines.js';

const database = useTestDatabase();

const event = (id: string, lovedOneId: string, minute: number): CareEventRecord => ({
  _id: id,
  lovedOneId,
  workspaceId: 'ws_records',
  source: 'partner',
  institutionId: 'acme',
  subjectRef: `client-${lovedOneId}`,
  eventType: 'note_added',
  occurredAt: new Date(Date.UTC(2026, 10, 1, 8, minute)),
  receivedAt: new Date(Date.UTC(2026, 10, 1, 9, minute)),
  payload: { text: `note ${id}` },
});

describe('care event storage', () => {
  it('when a batch repeats events already stored, then the new ones are stored and the repeats are reported as duplicates', async () => {
    const timelines = await openTimelines(database.db);
    const store = new WorkspaceStore(database.db, passThroughCredentials(database.db), 'inbox.test', timelines);
    expect(await appendCareEvents(timelines, [])).toEqual({ stored: [], duplicates: [] });
    expect(await appendCareEvents(timelines, [event('e1', 'lo_a', 1), event('e2', 'lo_a', 2)])).toEqual({ stored: ['e1', 'e2'], duplicates: [] });
    const again = await appendCareEvents(timelines, [event('e2', 'lo_a', 2), event('e3', 'lo_a', 3), event('e1', 'lo_a', 1)]);
    expect(again.stored).toEqual(['e3']);
    expect([...again.duplicates].sort()).toEqual(['e1', 'e2']);
    const { events } = await store.listCareEvents('lo_a', { limit: 10 });
    expect(events.map((e) => e._id)).toEqual(['e3', 'e2', 'e1']);
  });

  it("when a loved one's events are deleted, then only that loved one's events go", async () => {
    const timelines = await openTimelines(database.db);
    const store = new WorkspaceStore(database.db, passThroughCredentials(database.db), 'inbox.test', timelines);
    await appendCareEvents(timelines, [event('k1', 'lo_keep', 1), event('g1', 'lo_gone', 1), event('g2', 'lo_gone', 2)]);
    expect(await deleteLovedOneCareEvents(timelines, 'lo_gone')).toBe(2);
    expect((await store.listCareEvents('lo_gone', { limit: 10 })).events).toEqual([]);
    expect((await store.listCareEvents('lo_keep', { limit: 10 })).events.map((e) => e._id)).toEqual(['k1']);
  });
});
