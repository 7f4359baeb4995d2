// The partner client (`carecircle/partner`): the retry rule against a scripted real HTTP server on a
// simulated clock, and a real pipe host end to end.
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { PartnerClient, RETRY_DELAYS_MS, signBody, type AttemptInfo } from 'carecircle/partner';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from './harness/service.js';
import { careEvents, enterLinkCode, family, onboard, TEST_DATA_KEY } from './ingest.fixtures.js';

interface Seen {
  method: string;
  body: string;
  headers: IncomingMessage['headers'];
}

/** A real HTTP server answering from a script: one status (and headers) per request, the last repeating. */
async function scripted(
  script: { status: number; headers?: Record<string, string>; body?: unknown }[],
): Promise<{ url: string; seen: Seen[]; server: Server }> {
  const seen: Seen[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      seen.push({ method: req.method!, body, headers: req.headers });
      const step = script[Math.min(seen.length - 1, script.length - 1)]!;
      res.writeHead(step.status, { 'content-type': 'application/json', ...step.headers });
      res.end(JSON.stringify(step.body ?? { code: 'X', message: `status ${step.status}` }));
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const addr = server.address() as { port: number };
  return { url: `http://127.0.0.1:${addr.port}`, seen, server };
}

/** A client on a simulated clock: sleeping advances time instantly and is recorded. */
function clientFor(url: string) {
  let now = Date.parse('2026-11-22T10:00:00Z');
  const sleeps: number[] = [];
  const attempts: AttemptInfo[] = [];
  const client = new PartnerClient({
    baseUrl: url,
    institutionId: 'acme',
    secret: 'ccps_client_test',
    now: () => now,
    sleep: async (ms) => {
      sleeps.push(ms);
      now += ms;
    },
    onAttempt: (a) => attempts.push(a),
  });
  return { client, sleeps, attempts, elapsed: () => now - Date.parse('2026-11-22T10:00:00Z') };
}

const event = {
  subject_ref: 'c-1',
  event_type: 'vital_recorded',
  occurred_at: '2026-11-22T09:59:00Z',
  payload: { vital_type: 'pulse', value: 70, unit: 'bpm', recorded_by: 'cg' },
  source_event_id: 'e-1',
};

const servers: Server[] = [];
afterEach(() => {
  for (const s of servers.splice(0)) s.close();
});

describe('partner client - retry rule', () => {
  it('when the ingest answers 503 twice, then it retries after 1 s and 2 s with the same body, re-signed each time, and reports the 202', async () => {
    const srv = await scripted([{ status: 503 }, { status: 503 }, { status: 202, body: { event_id: 'evt_1', duplicate: false } }]);
    servers.push(srv.server);
    const { client, sleeps } = clientFor(srv.url);
    const result = await client.sendEvent(event);
    expect(result).toMatchObject({ ok: true, rule: 'accepted', attempts: 3, status: 202, eventId: 'evt_1', duplicate: false });
    expect(sleeps).toEqual([1_000, 2_000]);
    expect(new Set(srv.seen.map((s) => s.body)).size).toBe(1);
    for (const s of srv.seen) {
      expect(s.headers['x-pipe-signature']).toBe(signBody('ccps_client_test', s.body));
      expect(s.headers['x-pipe-institution']).toBe('acme');
      expect(JSON.parse(s.body)).toMatchObject({ institution_id: 'acme', source_event_id: 'e-1' });
    }
    expect(srv.seen.map((s) => s.headers['x-pipe-timestamp'])).toEqual(['2026-11-22T10:00:00.000Z', '2026-11-22T10:00:01.000Z', '2026-11-22T10:00:03.000Z']);
  });

  it('when the ingest keeps failing with 5xx, then it backs off 1, 2, 4, 8, 16, 32 s, then every 32 s, and gives up after about 5 minutes', async () => {
    const srv = await scripted([{ status: 500 }]);
    servers.push(srv.server);
    const { client, sleeps, elapsed } = clientFor(srv.url);
    const result = await client.sendEvent(event);
    expect(result).toMatchObject({ ok: false, rule: 'gave_up_5xx', status: 500 });
    expect(sleeps.slice(0, 6)).toEqual([...RETRY_DELAYS_MS]);
    expect(sleeps.slice(6).every((d) => d === 32_000)).toBe(true);
    expect(elapsed()).toBeLessThanOrEqual(5 * 60_000);
    expect(elapsed() + 32_000).toBeGreaterThan(5 * 60_000);
    expect(result.attempts).toBe(sleeps.length + 1);
    expect(result.reason).toMatch(/^gave up after \d+ attempts/);
  });

  it('when rate limited, then it waits for Retry-After and sends again', async () => {
    const srv = await scripted([
      { status: 429, headers: { 'retry-after': '7' } },
      { status: 202, body: { event_id: 'evt_2', duplicate: true } },
    ]);
    servers.push(srv.server);
    const { client, sleeps } = clientFor(srv.url);
    expect(await client.sendEvent(event)).toMatchObject({ ok: true, eventId: 'evt_2', duplicate: true, attempts: 2 });
    expect(sleeps).toEqual([7_000]);
  });

  it('when the answer is another 4xx, then it stops at once and says the rule', async () => {
    for (const status of [400, 401, 403, 404]) {
      const srv = await scripted([{ status, body: { code: 'NOT_FOUND', message: 'No family-share mapping for this subject_ref' } }]);
      servers.push(srv.server);
      const { client, sleeps } = clientFor(srv.url);
      const result = await client.sendEvent(event);
      expect(result).toMatchObject({ ok: false, rule: 'terminal_4xx', status, attempts: 1 });
      expect(result.reason).toContain(`${status} is terminal`);
      expect(sleeps).toEqual([]);
    }
  });

  it('when nothing answers, then network errors are retried like 5xx and it gives up naming the network', async () => {
    const srv = await scripted([{ status: 202 }]);
    srv.server.close();
    await once(srv.server, 'close');
    const { client, attempts } = clientFor(srv.url);
    const result = await client.sendEvent(event);
    expect(result).toMatchObject({ ok: false, rule: 'gave_up_network' });
    expect(attempts[0]?.error).toBeDefined();
    expect(result.status).toBeUndefined();
  });
});

describe('partner client - against the pipe host', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService({ env: { DATA_KEY: TEST_DATA_KEY } });
  });
  afterAll(async () => {
    await svc?.stop();
  });

  it('when a partner turns family-share on, the family links, and it sends a visit, a medication and a vital, then all three are stored for the loved one; a purge removes them', async () => {
    const partner = await onboard(svc.store.db, svc.credentials);
    const fam = await family(svc.store.db, svc.credentials, svc.config);
    const client = new PartnerClient({ baseUrl: svc.urls.pipe!, institutionId: partner.institutionId, secret: partner.secret });
    const before = await client.sendEvent({ ...event, subject_ref: 'client-pc', occurred_at: new Date().toISOString() });
    expect(before).toMatchObject({ ok: false, rule: 'terminal_4xx', status: 404 });

    const on = await client.setFamilyShare('client-pc', true);
    expect(on.ok).toBe(true);
    expect((await enterLinkCode(svc.bus, svc.config, fam, (on.body as { link_code: string }).link_code)).status).toBe(200);
    const at = new Date(Date.now() - 60_000).toISOString();
    const sent = [
      await client.sendEvent({
        subject_ref: 'client-pc',
        event_type: 'visit_started',
        occurred_at: at,
        payload: { caregiver_id: 'cg', scheduled_start: at, actual_start: at },
      }),
      await client.sendEvent({
        subject_ref: 'client-pc',
        event_type: 'med_administered',
        occurred_at: at,
        payload: { medication_name: 'Lisinopril', dose_amount: 10, dose_unit: 'mg', administered_by: 'cg' },
      }),
      await client.sendEvent({
        subject_ref: 'client-pc',
        event_type: 'vital_recorded',
        occurred_at: at,
        payload: { vital_type: 'temperature', value: 37.1, unit: 'C', recorded_by: 'cg' },
      }),
    ];
    expect(sent.map((r) => [r.ok, r.duplicate])).toEqual([
      [true, false],
      [true, false],
      [true, false],
    ]);
    const rows = await careEvents(svc.store.db).find({ lovedOneId: fam.lovedOneId }).toArray();
    expect(rows.map((r) => r._id).sort()).toEqual(sent.map((r) => r.eventId).sort());
    const purged = await client.purgeEvents('client-pc');
    expect(purged.body).toEqual({ subject_ref: 'client-pc', purged: 3 });
  });
});
