// /metrics on every role, scraped after real traffic through a NATS gateway and worker: the
// counters move, labels hold route patterns (never a raw path or a secret), and only the metrics
// port serves it.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { subjects } from '../src/bus/subjects.js';
import { DeadLetters } from '../src/ingest/deadLetters.js';
import { ingestStream } from '../src/ingest/stream.js';
import { sliceSubject } from '../src/slice/contract.js';
import { postJson, rpc, startTestService, type TestService } from './harness/service.js';
import { drained, family, onboard, postEvent, shareWith, TEST_DATA_KEY, visit } from './ingest.fixtures.js';

const NS = `m${randomBytes(4).toString('hex')}`;
const env = { BUS_NAMESPACE: NS, DATA_KEY: TEST_DATA_KEY, RATE_DIRECTORY_MCP_PER_MIN: '2' };
const started: TestService[] = [];
let gateway: TestService;
let worker: TestService;

async function scrape(svc: TestService): Promise<string> {
  const res = await fetch(svc.urls.metrics!);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return res.text();
}

/** The value of the sample `name` whose labels include `labels`; 0 when there is none yet. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number {
  for (const line of text.split('\n')) {
    const m = /^([a-z_:]+)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const have = Object.fromEntries([...(m[2] ?? '').matchAll(/([a-z_]+)="((?:[^"\\]|\\.)*)"/g)].map((l) => [l[1], l[2]]));
    if (Object.entries(labels).every(([k, v]) => have[k] === v)) return Number(m[3]);
  }
  return 0;
}

beforeAll(async () => {
  gateway = await startTestService({ role: 'gateway', nats: true, env });
  started.push(gateway);
}, 60_000);
afterAll(async () => {
  for (const svc of started.reverse()) await svc.stop();
});

describe('metrics', () => {
  it('when a request arrives before any worker subscribes, then it is retried until one does and the no-responders and retries counters move', async () => {
    const subject = sliceSubject(NS, 'directory');
    const before = await scrape(gateway);
    const answered = postJson(`${gateway.urls.site}/api/mcp`, rpc('tools/list'));
    // The worker starts once the request has found nobody on the bus.
    await vi.waitFor(
      async () =>
        expect(sample(await scrape(gateway), 'carecircle_bus_no_responders_total', { subject })).toBeGreaterThan(
          sample(before, 'carecircle_bus_no_responders_total', { subject }),
        ),
      { timeout: 5_000, interval: 20 },
    );
    worker = await startTestService({ role: 'worker', nats: true, mongoUrl: gateway.mongoUrl, env });
    started.push(worker);
    expect((await answered).status).toBe(200);
    const after = await scrape(gateway);
    expect(sample(after, 'carecircle_bus_no_responders_total', { subject })).toBeGreaterThan(sample(before, 'carecircle_bus_no_responders_total', { subject }));
    expect(sample(after, 'carecircle_bus_retries_total', { subject })).toBeGreaterThan(sample(before, 'carecircle_bus_retries_total', { subject }));
    expect(sample(after, 'carecircle_http_requests_total', { surface: 'site', route: '/api/mcp', method: 'POST', status: '200' })).toBeGreaterThan(0);
    expect(sample(after, 'carecircle_http_request_duration_seconds_count', { surface: 'site', route: '/api/mcp', method: 'POST' })).toBeGreaterThan(0);
  }, 60_000);

  it('when a client goes over the directory rate limit, then the 429 is counted by bucket and by status', async () => {
    const before = await scrape(gateway);
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push((await postJson(`${gateway.urls.site}/api/mcp`, rpc('tools/list'), { 'x-request-id': `metrics-${i}` })).status);
    expect(statuses).toContain(429);
    const after = await scrape(gateway);
    const refused = statuses.filter((s) => s === 429).length;
    expect(
      sample(after, 'carecircle_rate_limited_total', { bucket: 'directory-mcp' }) -
        sample(before, 'carecircle_rate_limited_total', { bucket: 'directory-mcp' }),
    ).toBe(refused);
    const by429 = { surface: 'site', route: '/api/mcp', method: 'POST', status: '429' };
    expect(sample(after, 'carecircle_http_requests_total', by429) - sample(before, 'carecircle_http_requests_total', by429)).toBe(refused);
  });

  it('when a partner sends an event twice, then accepted, duplicate and stored move, the consumer gauges are read, and no path, name or secret shows in a label', async () => {
    const partner = await onboard(gateway.store.db, gateway.credentials);
    const fam = await family(gateway.store.db, gateway.credentials, gateway.config);
    const subjectRef = `rose-petal-${randomBytes(3).toString('hex')}`;
    await shareWith({ urls: gateway.urls, bus: worker.bus, config: worker.config }, partner, subjectRef, fam);
    const before = await scrape(worker);
    const event = visit(partner, subjectRef, { source_event_id: `src-${randomBytes(3).toString('hex')}` });
    expect((await postEvent(gateway.urls.pipe!, partner, event)).status).toBe(202);
    expect((await postEvent(gateway.urls.pipe!, partner, event)).status).toBe(202);
    await drained(worker.bus, worker.config);
    const after = await scrape(worker);
    const moved = (name: string) => sample(after, name) - sample(before, name);
    expect(moved('carecircle_ingest_accepted_total')).toBe(2);
    expect(moved('carecircle_ingest_duplicates_total')).toBe(1);
    expect(moved('carecircle_ingest_stored_total')).toBe(1);
    expect(after).toContain('# TYPE carecircle_ingest_dead_lettered_total counter');

    const s = ingestStream(NS, subjects(NS).ingestEvents);
    expect(after).toMatch(new RegExp(`^carecircle_jetstream_consumer_pending\\{stream="${s.stream}",consumer="${s.durable}"\\} 0$`, 'm'));
    expect(after).toMatch(new RegExp(`^carecircle_jetstream_consumer_ack_pending\\{stream="${s.stream}",consumer="${s.durable}"\\} 0$`, 'm'));

    const share = { surface: 'pipe', route: '/pipe/v1/clients/:subject_ref/family-share', method: 'PUT', status: '200' };
    expect(sample(after, 'carecircle_http_requests_total', share)).toBeGreaterThan(0);
    for (const secret of [subjectRef, partner.secret, partner.institutionId, fam.uid, fam.cookie, '/api/family-share/link'])
      expect(after).not.toContain(secret);
    // Every route label is a declared pattern or a fixed word, never a path with a value in it.
    const routes = new Set([...after.matchAll(/route="([^"]*)"/g)].map((m) => m[1]));
    for (const route of routes) expect(route).toMatch(/^(\/[A-Za-z0-9._:\-/*]*|\(unmatched\)|oidc:[a-z_]+)$/);
  }, 60_000);

  it('when an accepted event is held in the dead-letter store, then the dead-letter counter moves', async () => {
    const before = sample(await scrape(worker), 'carecircle_ingest_dead_lettered_total');
    const now = new Date().toISOString();
    const queued = {
      v: 1 as const,
      eventId: `evt-${randomBytes(4).toString('hex')}`,
      institutionId: 'inst-x',
      subjectRef: 's-1',
      eventType: 'visit_started',
      occurredAt: now,
      receivedAt: now,
      payload: {},
      linkId: 'l-1',
    };
    await new DeadLetters(worker.store.db).put(queued, new Error('refused'), 5, 'consumer');
    expect(sample(await scrape(worker), 'carecircle_ingest_dead_lettered_total')).toBe(before + 1);
  });

  it('when a path no route declares is requested, then it is counted as unmatched, not by its path', async () => {
    const res = await fetch(`${gateway.urls.site}/people/jane-doe-1961`);
    expect(res.status).toBe(404);
    const text = await scrape(gateway);
    expect(sample(text, 'carecircle_http_requests_total', { surface: 'site', route: '(unmatched)', method: 'GET', status: '404' })).toBeGreaterThan(0);
    expect(text).not.toContain('jane-doe');
  });

  it('when the authorization server answers, then its requests are labelled by its own route', async () => {
    expect((await fetch(`${gateway.urls.auth}/.well-known/oauth-authorization-server`)).status).toBe(200);
    const text = await scrape(gateway);
    const auth = [...text.matchAll(/^carecircle_http_requests_total\{surface="auth",route="([^"]*)"/gm)].map((m) => m[1]);
    expect(auth.length).toBeGreaterThan(0);
    expect(auth).not.toContain('(unmatched)');
  });

  it('when /metrics is asked of a public listener, then it is not there: only the metrics port serves it', async () => {
    for (const surface of ['site', 'app', 'pipe'] as const) expect((await fetch(`${gateway.urls[surface]}/metrics`)).status).toBe(404);
    expect((await fetch(gateway.urls.metrics!.replace(/\/metrics$/, '/other'))).status).toBe(404);
  });

  it('when each role runs, then each serves /metrics with the process metrics and the carecircle ones', async () => {
    for (const role of ['cron', 'smtp', 'all'] as const) {
      const svc = await startTestService({ role, mongoUrl: gateway.mongoUrl, ...(role === 'all' ? {} : { nats: true, env }) });
      started.push(svc);
    }
    for (const svc of started) {
      const text = await scrape(svc);
      expect(text, svc.role).toContain('# TYPE process_cpu_user_seconds_total counter');
      expect(text, svc.role).toContain('# TYPE carecircle_http_requests_total counter');
      expect(text, svc.role).toContain('# TYPE carecircle_worker_in_flight gauge');
    }
    expect(new Set(started.map((s) => s.role))).toEqual(new Set(['gateway', 'worker', 'cron', 'smtp', 'all']));
  }, 90_000);
});
