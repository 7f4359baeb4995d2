// What a loved one's timeline costs the embedded store in commands: FerretDB v1 scans a
// collection for every command, so a write must be a few inserts however large the batch, and
// a read must touch the month list and the newest months only (a week's read, bounded on both
// sides, only the months it spans). Command monitoring on the test's
// own client counts them.
import { MongoClient, type Db } from 'mongodb';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { appendCareEvents, listCareEvents, type CareEventRecord } from '../src/family/careEvents.js';
import { databaseName } from '../src/store/mongo.js';
import type { Timelines } from '../src/store/timeline/port.js';
import { timelinesOf } from '../src/store/timeline/timelines.js';
import { sentCommands, watchedDatabaseUrl, type SentCommand } from './harness/servers.js';

let client: MongoClient | undefined;
let commands: SentCommand[] = [];
let db: Db;
let timelines: Timelines;

beforeAll(async () => {
  const url = watchedDatabaseUrl(inject('mongoUrl'));
  client = await new MongoClient(url).connect();
  commands = sentCommands(client);
  db = client.db(databaseName(url));
  timelines = timelinesOf(db, 'embedded');
});
afterAll(async () => {
  await db?.dropDatabase();
  await client?.close();
});

let seq = 0;
const event = (who: { lovedOneId: string; workspaceId: string }, at: number): CareEventRecord => ({
  _id: `evt_c${String(seq++).padStart(6, '0')}`,
  ...who,
  source: 'partner',
  institutionId: 'inst_test',
  subjectRef: 'subj-1',
  eventType: 'visit_started',
  occurredAt: new Date(Date.parse('2026-09-01T00:00:00Z') + at * 3_600_000),
  receivedAt: new Date(),
  payload: { n: seq },
});

describe('a loved one timeline on the embedded store, in commands', () => {
  it('when a batch of 500 events spans two months, then it is four inserts, and a read of the newest 20 three finds', async () => {
    const who = { lovedOneId: 'lo_commands', workspaceId: 'ws_commands' };
    await appendCareEvents(
      timelines,
      Array.from({ length: 300 }, (_, i) => event(who, i)),
    );
    // Hours 500 to 999: the end of September and October.
    const batch = Array.from({ length: 500 }, (_, i) => event(who, 500 + ((i * 37) % 500)));
    commands.length = 0;
    await appendCareEvents(timelines, batch);
    // The records, the month list, and one insert per month.
    expect(commands.map((c) => `${c.name} ${c.collection}`).sort()).toEqual(
      ['insert care_events', 'insert tl_care_202609_lo_commands', 'insert tl_care_202610_lo_commands', 'insert tlm_care_lo_commands'].sort(),
    );
    commands.length = 0;
    const page = await listCareEvents(timelines, who.lovedOneId, { limit: 20 });
    expect(page.events).toHaveLength(20);
    expect(commands.map((c) => `${c.name} ${c.collection}`).sort()).toEqual(
      ['find tl_care_202609_lo_commands', 'find tl_care_202610_lo_commands', 'find tlm_care_lo_commands'].sort(),
    );
  });

  it('when a week that spans two months is read, then it is one find per month and no read of the month list', async () => {
    const who = { lovedOneId: 'lo_week', workspaceId: 'ws_week' };
    // Hours 600 to 799: September 26th to October 4th.
    await appendCareEvents(
      timelines,
      Array.from({ length: 200 }, (_, i) => event(who, 600 + i)),
    );
    const since = new Date('2026-09-28T00:00:00Z');
    const until = new Date('2026-10-05T00:00:00Z');
    commands.length = 0;
    const page = await listCareEvents(timelines, who.lovedOneId, { since, until, limit: 200 });
    // Hours 648 (September 28th) to 799.
    expect(page.events).toHaveLength(152);
    expect(commands.map((c) => `${c.name} ${c.collection}`).sort()).toEqual(['find tl_care_202609_lo_week', 'find tl_care_202610_lo_week']);
  });
});
