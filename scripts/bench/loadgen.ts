// The load generator process: receives one LoadSpec over IPC, warms up, waits for "go", runs
// the measured phase bounded in requests and seconds, and reports latencies and statuses.
import { performance } from 'node:perf_hooks';
import { MongoClient } from 'mongodb';
import { signBody } from '../../src/partner/signature.js';
import { Connection, requestBytes } from './client.js';
import type { LoadResult, LoadSpec } from './load.js';

type Lane = (n: number) => Promise<string>;

/** One function per connection that sends request number n and answers "ok" or the status. */
async function makeLanes(spec: LoadSpec): Promise<{ lanes: Lane[]; close(): Promise<void> }> {
  if (spec.kind === 'insert') {
    const client = await new MongoClient(spec.mongoUrl, { maxPoolSize: spec.connections }).connect();
    const docs = client.db().collection(spec.collection);
    const lane: Lane = async (n) => {
      await docs.insertOne({
        _id: `${spec.tag}-${n}` as never,
        lovedOneId: 'lo',
        workspaceId: 'ws',
        source: 'partner',
        institutionId: 'bench',
        eventType: 'visit_started',
        occurredAt: new Date(),
        receivedAt: new Date(),
        payload: { caregiver_id: 'cg-77' },
        sourceEventId: `s-${n}`,
      });
      return 'ok';
    };
    return { lanes: Array.from({ length: spec.connections }, () => lane), close: () => client.close() };
  }
  const url = new URL(spec.url);
  const connections = Array.from({ length: spec.connections }, () => new Connection(Number(url.port), url.hostname));
  let bytes: (n: number) => Buffer;
  let expect: number;
  if (spec.kind === 'http') {
    const prepared = spec.bodies.map((body) => requestBytes('POST', url, spec.headers, body));
    const { numbered, bodies, headers } = spec;
    // The process id keeps the numbers of two runs apart.
    bytes = numbered
      ? (n) => requestBytes('POST', url, headers, bodies[n % bodies.length]!.replaceAll(numbered, `${process.pid}-${n}`))
      : (n) => prepared[n % prepared.length]!;
    expect = spec.expect;
  } else {
    const payload = { caregiver_id: 'cg-77', scheduled_start: '2026-11-22T10:00:00Z', actual_start: '2026-11-22T10:12:00Z' };
    const { alertEvery } = spec;
    bytes = (n) => {
      const alerting = alertEvery !== undefined && n % alertEvery === alertEvery - 1;
      const body = JSON.stringify({
        institution_id: spec.institutionId,
        subject_ref: spec.subjectRef,
        ...(alerting
          ? { event_type: 'note_added', payload: { caregiver_id: 'cg-77', note_text: `Visit ${n}: she fell in the hallway.` } }
          : { event_type: 'visit_started', payload }),
        occurred_at: new Date().toISOString(),
        source_event_id: `${spec.tag}-${n}`,
      });
      const headers = {
        'content-type': 'application/json',
        'x-pipe-institution': spec.institutionId,
        'x-pipe-timestamp': new Date().toISOString(),
        'x-pipe-signature': signBody(spec.secret, body),
      };
      return requestBytes('POST', url, headers, body);
    };
    expect = 202;
  }
  const alertEvery = spec.kind === 'ingest' ? spec.alertEvery : undefined;
  const tag = spec.kind === 'ingest' ? spec.tag : '';
  const lanes = connections.map((c): Lane => async (n) => {
    const status = await c.request(bytes(n));
    // Taken on the epoch's scale, so the parent can set it beside what it saw happen after.
    if (alertEvery !== undefined && n % alertEvery === alertEvery - 1 && status === expect)
      alerting.push({ sourceEventId: `${tag}-${n}`, at: performance.timeOrigin + performance.now() });
    return status === expect ? 'ok' : String(status);
  });
  return { lanes, close: async () => connections.forEach((c) => c.close()) };
}

let counter = 0;
/** The alerting notes of the current phase (see LoadSpec's `alertEvery`). */
let alerting: { sourceEventId: string; at: number }[] = [];

async function phase(lanes: Lane[], maxRequests: number, maxSeconds: number): Promise<LoadResult> {
  const latencies: number[] = [];
  const unexpected: Record<string, number> = {};
  let issued = 0;
  let ok = 0;
  let firstError: string | undefined;
  alerting = [];
  const started = performance.now();
  const deadline = started + maxSeconds * 1000;
  await Promise.all(
    lanes.map(async (lane) => {
      while (issued < maxRequests && performance.now() < deadline) {
        issued++;
        const t = performance.now();
        let outcome: string;
        try {
          outcome = await lane(counter++);
        } catch (err) {
          outcome = 'error';
          firstError ??= (err as Error).message;
        }
        latencies.push(performance.now() - t);
        if (outcome === 'ok') ok++;
        else unexpected[outcome] = (unexpected[outcome] ?? 0) + 1;
        if ((unexpected.error ?? 0) > 100) throw new Error(`too many failed requests: ${firstError}`);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0;
  return {
    count: latencies.length,
    ok,
    seconds,
    p50: at(0.5),
    p90: at(0.9),
    p99: at(0.99),
    unexpected,
    ...(firstError ? { firstError } : {}),
    ...(alerting.length ? { alerting } : {}),
  };
}

process.on('disconnect', () => process.exit(0));
const spec = await new Promise<LoadSpec>((resolve) => process.once('message', (m) => resolve(m as LoadSpec)));
try {
  const { lanes, close } = await makeLanes(spec);
  const warm = await phase(lanes, spec.warmup, Math.max(5, spec.maxSeconds));
  process.send?.({ type: 'warm', result: warm });
  await new Promise<void>((resolve) => process.once('message', () => resolve()));
  const result = await phase(lanes, spec.maxRequests, spec.maxSeconds);
  await close();
  process.send?.({ type: 'done', result }, () => process.exit(0));
} catch (err) {
  process.send?.({ type: 'failed', error: (err as Error).message }, () => process.exit(1));
}
