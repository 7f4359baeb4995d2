// Part (e): how the embedded store's reads grow with everyone's data. list_care_events for one
// loved one and Settings' recent activity (GET /api/activity) over HTTP, and the inbox listing
// (the function the inbox page calls), at 1k, 10k and 100k stored rows in each collection, the
// family's own rows always the same 50; beside each, the query the reads used before (by field,
// with a sort), which the embedded FerretDB answers by scanning the whole collection; and what one
// entry's append to the loved one's timeline takes at each size.
import { performance } from 'node:perf_hooks';
import { MongoClient, type Collection, type Db } from 'mongodb';
import { listCareEvents } from '../../src/family/careEvents.js';
import { appendCareEvents, type CareEventRecord } from '../../src/family/records.js';
import { INBOX_ITEMS, recentInboxItems, storeInboxItem, type InboxItem } from '../../src/inbox/records.js';
import { databaseName } from '../../src/store/mongo.js';
import { careEvent, signUpFamily, type Family } from './family.js';
import type { Infra } from './infra.js';
import { KNOBS } from './knobs.js';
import { carecircleEnv, startCarecircle, stopAll, type Child } from './procs.js';
import { MCP_HEADERS } from './queries.js';
import { finding, fixed, heading, note, progress, table } from './report.js';
import { openTimelines } from '../../src/store/timeline/timelines.js';
import type { Timelines } from '../../src/store/timeline/port.js';

const OWN_ROWS = 50;
const BATCH = 1_000;
const DEFAULT_BUS_TIMEOUT_MS = 5_000;

export function growthSizes(max: number): number[] {
  const sizes = [1_000, 10_000, 100_000].filter((s) => s < max);
  return [...sizes, max];
}

function auditRow(n: number, uid: string, now = Date.now()) {
  return {
    _id: `aud_bench_${n}`,
    uid,
    tenant: 'family',
    method: 'tools/call',
    tool: 'list_care_events',
    success: true,
    durationMs: 4,
    authMethod: 'api-key',
    at: new Date(now - ((n * 7_919) % 31_536_000) * 1000),
  };
}

function inboxItem(n: number, lovedOneId: string, workspaceId: string, now = Date.now()): InboxItem {
  return {
    _id: `mail_bench_${n}`,
    lovedOneId,
    workspaceId,
    from: 'clinic@example.com',
    subject: `Visit summary ${n}`,
    receivedAt: new Date(now - ((n * 7_919) % 31_536_000) * 1000),
    excerpt: 'Blood pressure was stable; next visit in two weeks. '.repeat(8),
    attachmentNames: [],
  };
}

/** Grows the collections from `from` to `to` rows; row n < 50 belongs to the family (stored the
 *  way the service stores them), the rest to one of many others (loaded in bulk: rows of 50
 *  belong to one other family, so `from` and `to` are multiples of 50). */
async function seed(db: Db, timelines: Timelines, audit: Collection, family: Family, from: number, to: number): Promise<void> {
  let last = performance.now();
  const started = last;
  for (let n = from; n < to; n += BATCH) {
    const upto = Math.min(to, n + BATCH);
    const ids = Array.from({ length: upto - n }, (_, i) => n + i);
    const own = (i: number) => i < OWN_ROWS;
    const other = (i: number) => ({ lovedOneId: `lo_bench_${Math.floor(i / OWN_ROWS)}`, workspaceId: `ws_bench_${Math.floor(i / OWN_ROWS)}` });
    const mine = ids.filter(own);
    if (mine.length) {
      await appendCareEvents(
        timelines,
        mine.map((i) => careEvent(i, family.lovedOneId, family.workspaceId)),
      );
      for (const i of mine) await storeInboxItem(timelines, inboxItem(i, family.lovedOneId, family.workspaceId));
    }
    const others = ids.filter((i) => !own(i));
    // Other families' care events as the service stores them (their timelines too); their inbox
    // items and audit rows as records only: only the family's own are read.
    await appendCareEvents(
      timelines,
      others.map((i) => careEvent(i, other(i).lovedOneId, other(i).workspaceId)),
    );
    if (others.length)
      await db.collection(INBOX_ITEMS).insertMany(others.map((i) => inboxItem(i, other(i).lovedOneId, other(i).workspaceId)) as never[], { ordered: false });
    await audit.insertMany(ids.map((i) => auditRow(i, own(i) ? family.uid : `dev-bench-${Math.floor(i / OWN_ROWS)}`)) as never[], { ordered: false });
    if (performance.now() - last > 10_000 || upto === to) {
      last = performance.now();
      progress(`growth: seeded ${upto}/${to} rows in each collection (${((last - started) / 1000).toFixed(0)} s for this step)`);
    }
  }
}

/** p50 and max of timed calls: one uncounted warm-up, then up to N, at least 3, within the time budget. */
async function timeCalls(call: () => Promise<unknown>, most = KNOBS.growthCalls): Promise<{ p50: number; max: number; calls: number }> {
  await call();
  const samples: number[] = [];
  const budget = performance.now() + KNOBS.seconds * 2 * 1000;
  while (samples.length < most && (samples.length < 3 || performance.now() < budget)) {
    const t = performance.now();
    await call();
    samples.push(performance.now() - t);
  }
  samples.sort((a, b) => a - b);
  return { p50: samples[Math.floor(samples.length / 2)]!, max: samples[samples.length - 1]!, calls: samples.length };
}

export async function benchGrowth(infra: Infra): Promise<void> {
  heading("(e) Embedded store growth: one family's reads as every family's rows grow");
  const children: Child[] = [];
  // Slow reads must finish to be measured, not be cut off by the gateway's wait for a worker.
  const { env, cleanup } = await carecircleEnv(infra.database('growth'), { BUS_TIMEOUT_MS: '600000', GATEWAY_RETRY_WINDOW_MS: '600000' });
  const client = await new MongoClient(env.MONGO_URL!).connect();
  try {
    const sizes = growthSizes(KNOBS.growthMax);
    progress(`growth: starting carecircle embedded; sizes ${sizes.join(', ')} (BENCH_GROWTH_MAX=${KNOBS.growthMax}); a progress line every 10 s of seeding`);
    const service = await startCarecircle('carecircle', 'all', env);
    children.push(service);
    const appUrl = service.urls.app!;
    const family = await signUpFamily(appUrl, env);
    const db = client.db(databaseName(env.MONGO_URL!));
    const timelines = await openTimelines(db);
    const [events, audit, inbox] = [db.collection<CareEventRecord>('care_events'), db.collection('mcp_audit_log'), db.collection<InboxItem>(INBOX_ITEMS)];

    const listBody = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'list_care_events', arguments: { lovedOneId: family.lovedOneId, limit: 20 } },
    });
    const listEvents = async () => {
      const res = await fetch(`${appUrl}/api/mcp`, { method: 'POST', headers: { ...MCP_HEADERS, cookie: family.cookie }, body: listBody });
      const json = (await res.json()) as { result?: { structuredContent?: { events?: unknown[] } }; error?: unknown };
      if (res.status !== 200 || json.error) throw new Error(`list_care_events: ${res.status} ${JSON.stringify(json).slice(0, 300)}`);
    };
    const activity = async () => {
      const res = await fetch(`${appUrl}/api/activity`, { headers: { cookie: family.cookie, accept: 'application/json' } });
      if (res.status !== 200) throw new Error(`GET /api/activity: ${res.status} ${(await res.text()).slice(0, 300)}`);
      await res.arrayBuffer();
    };

    const rows: (string | number)[][] = [];
    const before: (string | number)[][] = [];
    let seeded = 0;
    let last: { size: number; list: number; activity: number; inbox: number; append: number } | undefined;
    let appended = 0;
    /** One event appended alone, as a family entry (FamilyEntries.add) or a partner's single event is; ids of their own. */
    const appendOne = () =>
      appendCareEvents(timelines, [
        { ...careEvent(appended, family.lovedOneId, family.workspaceId), _id: `evt_bench_one_${appended}`, sourceEventId: `bench-one-${appended++}` },
      ]);
    for (const size of sizes) {
      const t = performance.now();
      await seed(db, timelines, audit, family, seeded, size);
      const seconds = (performance.now() - t) / 1000;
      seeded = size;
      const list = await timeCalls(listEvents);
      const act = await timeCalls(activity);
      const mail = await timeCalls(() => recentInboxItems(timelines, family.lovedOneId, 50));
      // The store's part of list_care_events alone, without HTTP, the bus, the session and the audit row.
      const direct = await timeCalls(() => listCareEvents(timelines, family.lovedOneId, { limit: 20 }));
      // One batch of 20 new events for the family, as the ingest's consumer stores them.
      const batch = Array.from({ length: 20 }, (_, i) => careEvent(10_000_000 + size + i, family.lovedOneId, family.workspaceId));
      const t2 = performance.now();
      await appendCareEvents(timelines, batch);
      const append = performance.now() - t2;
      const one = await timeCalls(appendOne);
      progress(
        `growth ${size}: list_care_events p50 ${fixed(list.p50)} ms, /api/activity p50 ${fixed(act.p50)} ms, inbox p50 ${fixed(mail.p50)} ms; timing the queries used before…`,
      );
      rows.push([
        size,
        `${seconds.toFixed(1)} s`,
        `${fixed(list.p50, 1)} (${fixed(list.max, 1)})`,
        `${fixed(act.p50, 1)} (${fixed(act.max, 1)})`,
        `${fixed(mail.p50, 1)} (${fixed(mail.max, 1)})`,
        fixed(append, 1),
        `${fixed(one.p50, 1)} (${fixed(one.max, 1)})`,
        `${list.calls} / ${act.calls} / ${mail.calls} / ${one.calls}`,
      ]);
      const oldList = await timeCalls(() => events.find({ lovedOneId: family.lovedOneId }).sort({ occurredAt: -1, _id: -1 }).limit(21).toArray(), 3);
      const oldInbox = await timeCalls(() => inbox.find({ lovedOneId: family.lovedOneId }).sort({ receivedAt: -1 }).limit(50).toArray(), 3);
      before.push([size, fixed(oldList.p50, 1), fixed(direct.p50, 1), fixed(list.p50, 1), fixed(oldInbox.p50, 1), fixed(mail.p50, 1)]);
      last = { size, list: list.p50, activity: act.p50, inbox: mail.p50, append: one.p50 };
    }
    table(
      [
        'rows in care_events, mcp_audit_log and inbox_items',
        'seeding this step',
        'list_care_events p50 ms (max)',
        'GET /api/activity p50 ms (max)',
        'inbox listing p50 ms (max)',
        'append a batch of 20 events, ms',
        'append one event, p50 ms (max)',
        'calls',
      ],
      rows,
    );
    note(
      `One at a time, after one uncounted call; list_care_events and /api/activity over HTTP with the session cookie, the inbox listing as the inbox page calls it (recentInboxItems, newest 50). The family's loved one has ${OWN_ROWS} of the care events (the call asks for its newest 20), ${OWN_ROWS} of the inbox items, and the user ${OWN_ROWS} of the audit rows (Settings shows the newest). ` +
        "One event appended alone to the family's timeline, as a family entry is, timed like the reads. " +
        `Every other ${OWN_ROWS} rows belong to another family, loaded in bulk ${BATCH} at a time (the family's own through appendCareEvents and storeInboxItem). BUS_TIMEOUT_MS is raised so slow reads complete: ` +
        `at the default ${DEFAULT_BUS_TIMEOUT_MS / 1000} s, a read slower than that is answered 503.`,
    );
    table(
      [
        'rows',
        'care events by query (before), p50 ms',
        'the same from its timeline (listCareEvents)',
        'list_care_events over HTTP',
        'inbox by query (before), p50 ms',
        'inbox listing now',
      ],
      before,
    );
    note(
      '"By query": the single query each read used before, straight against the store (no HTTP): one loved one\'s newest rows by field with a sort, which the embedded FerretDB answers by scanning the whole collection. On MongoDB both are index reads.',
    );
    if (last) {
      finding({
        part: 'growth',
        what: `list_care_events p50 at ${last.size} rows`,
        value: `${fixed(last.list, 1)} ms`,
        ...(last.size >= 100_000 ? { target: '≤ 50 ms at 100k', meets: last.list <= 50 } : {}),
      });
      finding({ part: 'growth', what: `Settings' recent activity p50 at ${last.size} rows`, value: `${fixed(last.activity, 1)} ms` });
      finding({ part: 'growth', what: `inbox listing p50 at ${last.size} rows`, value: `${fixed(last.inbox, 1)} ms` });
      finding({
        part: 'growth',
        what: `one timeline append p50 at ${last.size} rows`,
        value: `${fixed(last.append, 1)} ms`,
        ...(last.size >= 100_000 ? { target: '≤ 20 ms at 100k', meets: last.append <= 20 } : {}),
      });
    }
  } finally {
    await stopAll(children);
    await client.close();
    cleanup();
  }
}
