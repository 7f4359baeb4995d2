// Part (b): the workspace endpoint's tools/call list_care_events with an API key against the
// same call with a session cookie, and the family's write add_care_note with a read-and-write key
// against that read, on the embedded run. Runs alternate A B C C B A so that the store's growth
// during the part weighs on all alike.
import { MongoClient } from 'mongodb';
import { appendCareEvents } from '../../src/family/records.js';
import { databaseName } from '../../src/store/mongo.js';
import { careEvent, signUpFamily } from './family.js';
import type { Infra } from './infra.js';
import { KNOBS } from './knobs.js';
import { combineRuns, cpuCell, problems, runLoad, type Measured } from './load.js';
import { carecircleEnv, startCarecircle, stopAll, type Child } from './procs.js';
import { MCP_HEADERS } from './queries.js';
import { finding, fixed, heading, note, progress, rate, ratio, table } from './report.js';
import { openTimelines } from '../../src/store/timeline/timelines.js';

const NOTE_TEXT = 'Bench note';

async function countNotes(mongoUrl: string, lovedOneId: string): Promise<number> {
  const client = await new MongoClient(mongoUrl).connect();
  try {
    return await client
      .db(databaseName(mongoUrl))
      .collection('care_events')
      .countDocuments({ lovedOneId, eventType: 'note_added', 'payload.note_text': { $regex: `^${NOTE_TEXT} ` } });
  } finally {
    await client.close();
  }
}

export async function benchWorkspace(infra: Infra): Promise<void> {
  heading('(b) Workspace: tools/call list_care_events, API key against session cookie; add_care_note against the read');
  const children: Child[] = [];
  const { env, cleanup } = await carecircleEnv(infra.database('workspace'));
  try {
    progress('workspace: starting carecircle embedded and signing up a family…');
    const service = await startCarecircle('carecircle', 'all', env);
    children.push(service);
    const family = await signUpFamily(service.urls.app!, env);
    const client = await new MongoClient(env.MONGO_URL!).connect();
    try {
      // Through the timeline, so the events are on the loved one's timeline as well as in `care_events`.
      await appendCareEvents(
        await openTimelines(client.db(databaseName(env.MONGO_URL!))),
        Array.from({ length: 50 }, (_, n) => careEvent(n, family.lovedOneId, family.workspaceId)),
      );
    } finally {
      await client.close();
    }

    const body = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'list_care_events', arguments: { lovedOneId: family.lovedOneId, limit: 20 } },
    });
    // Each note's text differs (NOTE_NUMBER), so every call is a new write and none a replay of an earlier one.
    const noteBody = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'add_care_note', arguments: { lovedOneId: family.lovedOneId, text: `${NOTE_TEXT} NOTE_NUMBER` } },
    });
    const callers = {
      cookie: { label: 'session cookie', headers: { ...MCP_HEADERS, cookie: family.cookie }, body },
      key: { label: 'API key (Authorization: Bearer)', headers: { ...MCP_HEADERS, authorization: `Bearer ${family.apiKey}` }, body },
      write: {
        label: 'add_care_note, read-and-write API key',
        headers: { ...MCP_HEADERS, authorization: `Bearer ${family.writeKey}` },
        body: noteBody,
        numbered: 'NOTE_NUMBER',
      },
    };
    const connections = KNOBS.concurrency[0]!;
    const runs: Record<'cookie' | 'key' | 'write', Measured[]> = { cookie: [], key: [], write: [] };
    for (const which of ['cookie', 'key', 'write', 'write', 'key', 'cookie'] as const) {
      const caller = callers[which];
      const m = await runLoad(
        {
          kind: 'http',
          url: `${service.urls.app}/api/mcp`,
          headers: caller.headers,
          bodies: [caller.body],
          ...('numbered' in caller ? { numbered: caller.numbered } : {}),
          expect: 200,
          connections,
          warmup: Math.ceil(KNOBS.warmup / 2),
          maxRequests: Math.ceil(KNOBS.requests / 2),
          maxSeconds: KNOBS.seconds / 2,
        },
        [service, infra.store],
        { storeCommands: infra.storeCommands },
      );
      progress(`workspace ${caller.label}: ${rate(m.perSecond)} req/s, p50 ${fixed(m.p50)} ms, p99 ${fixed(m.p99)} ms`);
      runs[which].push(m);
    }
    const cookie = combineRuns(runs.cookie);
    const key = combineRuns(runs.key);
    const write = combineRuns(runs.write);
    // The notes the runs stored: every answered call wrote one (warm-ups included), none was a replay.
    const notes = await countNotes(env.MONGO_URL!, family.lovedOneId);
    table(
      [
        'caller',
        'conns',
        'req/s',
        'p50 ms',
        'p99 ms',
        'vs session cookie',
        'CPU ms per request (total = by process)',
        'store commands per request',
        'unexpected',
      ],
      [cookie, key, write].map((m, i) => [
        [callers.cookie.label, callers.key.label, callers.write.label][i]!,
        connections,
        rate(m.perSecond),
        fixed(m.p50),
        fixed(m.p99),
        ratio(m.perSecond / cookie.perSecond),
        cpuCell(m.cpu),
        fixed(m.storeCommands),
        problems(m),
      ]),
    );
    note(
      `The loved one holds 50 care events; each list_care_events call asks for its newest 20. add_care_note adds a note with a text of its own each call (so none is an idempotent replay) through the write machinery (idempotency claim, timeline append, audit row); the runs stored ${notes} notes. Runs alternate cookie, key, write, write, key, cookie (each up to ${KNOBS.seconds / 2} s); rates are over both runs of each, latencies their weighted mean.`,
    );
    finding({
      part: 'workspace',
      what: `API key vs session cookie, c=${connections}: req/s`,
      value: ratio(key.perSecond / cookie.perSecond),
      target: '≥ 0.9×',
      meets: key.perSecond >= 0.9 * cookie.perSecond,
    });
    finding({
      part: 'workspace',
      what: `add_care_note vs list_care_events, both API key, c=${connections}: req/s`,
      value: ratio(write.perSecond / key.perSecond),
      target: '≥ 0.5×',
      meets: write.perSecond >= 0.5 * key.perSecond,
    });
    if (key.storeCommands !== undefined)
      finding({
        part: 'workspace',
        what: "API key: store commands per request (the loved one's month list and newest month, the audit write)",
        value: fixed(key.storeCommands),
        target: '≤ 3',
        meets: key.storeCommands <= 3.005,
      });
  } finally {
    await stopAll(children);
    cleanup();
  }
}
