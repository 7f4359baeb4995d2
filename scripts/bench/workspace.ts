// Part (b): the workspace endpoint's tools/call list_care_events with an API key against the
// same call with a session cookie, on the embedded run. Runs alternate A B B A so that the
// store's growth during the part weighs on both alike.
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

export async function benchWorkspace(infra: Infra): Promise<void> {
  heading('(b) Workspace: tools/call list_care_events, API key against session cookie');
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
    const callers = {
      cookie: { label: 'session cookie', headers: { ...MCP_HEADERS, cookie: family.cookie } },
      key: { label: 'API key (Authorization: Bearer)', headers: { ...MCP_HEADERS, authorization: `Bearer ${family.apiKey}` } },
    };
    const connections = KNOBS.concurrency[0]!;
    const runs: Record<'cookie' | 'key', Measured[]> = { cookie: [], key: [] };
    for (const which of ['cookie', 'key', 'key', 'cookie'] as const) {
      const m = await runLoad(
        {
          kind: 'http',
          url: `${service.urls.app}/api/mcp`,
          headers: callers[which].headers,
          bodies: [body],
          expect: 200,
          connections,
          warmup: Math.ceil(KNOBS.warmup / 2),
          maxRequests: Math.ceil(KNOBS.requests / 2),
          maxSeconds: KNOBS.seconds / 2,
        },
        [service, infra.store],
        { storeCommands: infra.storeCommands },
      );
      progress(`workspace ${callers[which].label}: ${rate(m.perSecond)} req/s, p50 ${fixed(m.p50)} ms, p99 ${fixed(m.p99)} ms`);
      runs[which].push(m);
    }
    const cookie = combineRuns(runs.cookie);
    const key = combineRuns(runs.key);
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
      [cookie, key].map((m, i) => [
        i ? callers.key.label : callers.cookie.label,
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
      `The loved one holds 50 care events; each call asks for its newest 20. Runs alternate cookie, key, key, cookie (each up to ${KNOBS.seconds / 2} s); rates are over both runs, latencies their weighted mean.`,
    );
    finding({
      part: 'workspace',
      what: `API key vs session cookie, c=${connections}: req/s`,
      value: ratio(key.perSecond / cookie.perSecond),
      target: '≥ 0.9×',
      meets: key.perSecond >= 0.9 * cookie.perSecond,
    });
    if (key.storeCommands !== undefined)
      finding({
        part: 'workspace',
        what: 'API key: store commands per request',
        value: fixed(key.storeCommands),
        target: '≤ 1 (the audit write)',
        meets: key.storeCommands <= 1.005,
      });
  } finally {
    await stopAll(children);
    cleanup();
  }
}
