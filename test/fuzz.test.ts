// The fuzz suite: generated requests against every HTTP endpoint of a NATS-mode deployment (one
// gateway process, two worker processes). After every input no process has died and nothing
// answered 5xx; at the end every 202'd partner event is stored exactly once, with every payload
// field it was sent with, and the service answers.
// FUZZ_RUNS and FUZZ_TIME_LIMIT_S scale it (`npm run fuzz`), FUZZ_SEED replays a run.
import { passThroughCredentials } from '../src/auth/credentials.js';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { INGEST_DEAD_LETTERS } from '../src/ingest/deadLetters.js';
import { SLICES } from '../src/slices.js';
import { startDeployment, type Deployment } from './harness/deployment.js';
import { appCall, caregiverWithKey, devIdToken } from './harness/identity.js';
import { sendHttp, sendRaw, type Answer } from './harness/send.js';
import { freshDatabaseUrl } from './harness/servers.js';
import { authEndpointsOf, endpointsOf, fuzzInput, type Fixtures, type FuzzInput } from './fuzz.inputs.js';
import { careEvents, onboard, setFamilyShare, TEST_DATA_KEY } from './ingest.fixtures.js';
import { FUZZ_REGRESSIONS } from './fuzz.regressions.js';

const RUNS = Number(process.env.FUZZ_RUNS ?? 1000);
/** Inputs stop after this long (0: never), so `npm test` stays bounded on a slow or busy machine. */
const TIME_LIMIT_S = Number(process.env.FUZZ_TIME_LIMIT_S ?? 25);
const SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : (Math.random() * 2 ** 31) | 0;
/** Record failures and carry on, to see every kind a long run finds (the test still fails at the end). */
const KEEP_GOING = process.env.FUZZ_KEEP_GOING === '1';
const ANSWER_TIMEOUT_MS = 60_000;
const LINKED = 'fuzz-linked-client';

const counts = { inputs: 0, '2xx': 0, '3xx': 0, '4xx': 0, '5xx': 0, 'no status': 0, crashes: 0, accepted: 0, stored: 0 };
const failures: string[] = [];
/** Statuses by endpoint, printed with FUZZ_VERBOSE=1 to see where the inputs reached. */
const byEndpoint = new Map<string, Map<number, number>>();
const accepted = new Set<string>();
/** The payload field paths of each first 202'd event as it was sent (JSON.parse keeps a "__proto__" field). */
const sentFields = new Map<string, string[]>();

/** Every field path of a JSON value: `["a"]["b"][0]`, sorted, so a field lost on the way shows. */
function fieldPaths(value: unknown, at = ''): string[] {
  if (Array.isArray(value)) return value.flatMap((v, i) => fieldPaths(v, `${at}[${i}]`));
  if (!value || typeof value !== 'object') return [];
  return Object.keys(value)
    .flatMap((k) => [`${at}[${JSON.stringify(k)}]`, ...fieldPaths((value as Record<string, unknown>)[k], `${at}[${JSON.stringify(k)}]`)])
    .sort();
}
let dep: Deployment;
let fixtures: Fixtures;

beforeAll(async () => {
  dep = await startDeployment({
    natsUrl: inject('natsUrl'),
    mongoUrl: freshDatabaseUrl(inject('mongoUrl')),
    env: {
      DATA_KEY: TEST_DATA_KEY,
      // Rate limits would turn most inputs into 429s: each is tested on its own elsewhere.
      RATE_DIRECTORY_MCP_PER_MIN: '1000000',
      RATE_SANDBOX_MCP_PER_MIN: '1000000',
      RATE_MCP_KEY_PER_MIN: '1000000',
      RATE_NEWSLETTER_PER_HOUR: '1000000',
      RATE_COMMUNITY_WRITES_PER_MIN: '1000000',
      RATE_INGEST_PER_MIN: '1000000',
      SANDBOX_RATE_CAPACITY: '1000000',
      // A machine busy with the rest of the suite can be slow to answer; slowness is not what this measures.
      BUS_TIMEOUT_MS: '15000',
      GATEWAY_RETRY_WINDOW_MS: '30000',
    },
  });
  const caregiver = await caregiverWithKey(dep, 'fuzz@example.com');
  const partner = await onboard(dep.db, passThroughCredentials(dep.db), 'Fuzz Home Care');
  const share = await setFamilyShare(dep.urls.pipe, partner, LINKED, true);
  const linked = await appCall(dep, caregiver.cookie, 'POST', '/api/family-share/link', { code: share.json.link_code, lovedOneId: caregiver.lovedOneId });
  if (linked.status !== 200) throw new Error(`link answered ${linked.status}: ${JSON.stringify(linked.json)}`);
  fixtures = {
    origins: {
      site: new URL(dep.urls.site).origin,
      app: new URL(dep.urls.app).origin,
      pipe: new URL(dep.urls.pipe).origin,
      auth: new URL(dep.urls.auth).origin,
    },
    institutionId: partner.institutionId,
    secret: partner.secret,
    linkedSubject: LINKED,
    cookie: caregiver.cookie,
    apiKey: caregiver.apiKey,
    idToken: await devIdToken(dep, 'fuzz-community@example.com'),
    ids: [caregiver.lovedOneId, caregiver.workspaceId, caregiver.keyId],
    tools: [...new Set(SLICES.flatMap((s) => s.mcp ?? []).flatMap((m) => m.tools.map((t) => t.name)))],
    maxBatch: dep.config.mcpMaxBatch,
  };
}, 180_000);

afterAll(async () => {
  counts.crashes = dep?.dead().length ?? 0;
  const c = counts;
  process.stdout.write(
    `fuzz: inputs ${c.inputs}, 2xx ${c['2xx']}, 4xx ${c['4xx']}, 5xx ${c['5xx']}, crashes ${c.crashes}, accepted ${c.accepted}, stored ${c.stored}\n`,
  );
  process.stdout.write(`fuzz: also 3xx ${c['3xx']}, closed without a status ${c['no status']}; seed ${SEED} (FUZZ_SEED=${SEED} replays it)\n`);
  if (process.env.FUZZ_VERBOSE === '1')
    for (const [endpoint, seen] of [...byEndpoint].sort())
      process.stdout.write(
        `fuzz: ${endpoint} ${[...seen]
          .sort(([a], [b]) => a - b)
          .map(([st, n]) => `${st}×${n}`)
          .join(' ')}\n`,
      );
  if (failures.length) process.stdout.write(`fuzz: failures\n${failures.slice(0, 20).join('\n')}\n`);
  await dep?.stop();
});

const describeInput = (input: FuzzInput) =>
  input.kind === 'raw'
    ? `raw ${input.host} ${input.endpoint}: ${input.shape}`
    : `${input.method} ${input.host}${input.target.slice(0, 120)} [${input.endpoint}, ${input.shape}, ${input.body?.length ?? 0} bytes] headers ${JSON.stringify(input.headers).slice(0, 400)}`;

async function send(input: FuzzInput): Promise<Answer> {
  const base = dep.urls[input.host];
  return input.kind === 'raw' ? sendRaw(base, input.bytes, ANSWER_TIMEOUT_MS) : sendHttp(base, input, ANSWER_TIMEOUT_MS);
}

/** One input: sent, counted, and held to the rules that hold for any input. */
async function check(input: FuzzInput): Promise<void> {
  counts.inputs++;
  let answer: Answer;
  try {
    answer = await send(input);
  } catch (err) {
    failures.push(`${describeInput(input)} → ${(err as Error).message}`);
    throw err;
  }
  const klass = answer.status === 0 ? 'no status' : (`${Math.floor(answer.status / 100)}xx` as keyof typeof counts);
  if (klass in counts) counts[klass]++;
  const seen = byEndpoint.get(input.endpoint) ?? new Map<number, number>();
  byEndpoint.set(input.endpoint, seen.set(answer.status, (seen.get(answer.status) ?? 0) + 1));
  if (input.kind === 'http' && input.endpoint === 'ingest.pipeV1Events' && answer.status === 202) {
    const { event_id: id, duplicate } = JSON.parse(answer.body.toString('utf8')) as { event_id: string; duplicate: boolean };
    if (!accepted.has(id)) counts.accepted++;
    accepted.add(id);
    if (!duplicate && !sentFields.has(id)) sentFields.set(id, fieldPaths((JSON.parse(input.body!.toString('utf8')) as { payload: unknown }).payload));
  }
  const dead = dep.dead();
  if (answer.status >= 500 || dead.length) {
    failures.push(`${describeInput(input)} → ${answer.status} ${answer.body.toString('utf8').slice(0, 300)}${dead.length ? `; dead: ${dead.join(', ')}` : ''}`);
    if (!KEEP_GOING || dead.length)
      throw new Error(`${answer.status >= 500 ? `answered ${answer.status}` : `${dead.join(', ')} died`} for ${describeInput(input)}`);
  }
}

/** Every accepted event is in care_events once, nothing else arrived for the family, and nothing was dead-lettered. */
function settledStore(): Promise<{ stored: string[]; others: string[]; deadLetters: number; lostFields: string[] }> {
  return vi.waitFor(
    async () => {
      const rows = await careEvents(dep.db)
        .find({ institutionId: fixtures.institutionId }, { projection: { _id: 1, payload: 1 } })
        .toArray();
      const ids = rows.map((r) => r._id);
      const deadLetters = await dep.db.collection(INGEST_DEAD_LETTERS).countDocuments({ institutionId: fixtures.institutionId });
      const stored = ids.filter((id) => accepted.has(id));
      if (stored.length + deadLetters < accepted.size)
        throw new Error(`${stored.length} of ${accepted.size} accepted events stored, ${deadLetters} dead-lettered`);
      const lostFields = rows.flatMap((r) => {
        const sent = sentFields.get(r._id);
        const kept = new Set(fieldPaths(r.payload));
        return (sent ?? []).filter((f) => !kept.has(f)).map((f) => `${r._id} payload${f}`);
      });
      return { stored, others: ids.filter((id) => !accepted.has(id)), deadLetters, lostFields };
    },
    { timeout: 60_000, interval: 200 },
  );
}

describe('fuzz', () => {
  it('lists every route of every slice manifest, on each of its hosts', () => {
    const names = new Set(endpointsOf(SLICES).map((e) => e.name));
    for (const slice of SLICES)
      for (const [route, spec] of Object.entries(slice.routes ?? {}))
        expect(names.has(`${slice.name}.${route}`)).toBe(!spec.hosts.every((h) => h === 'internal'));
  });

  it('replays the inputs earlier runs shrank to, and each is answered without a 5xx', { timeout: 120_000 }, async () => {
    for (const make of FUZZ_REGRESSIONS) await check(make(fixtures));
  });

  it(
    `when ${RUNS} generated requests hit every endpoint, then no process dies, nothing answers 5xx, every 202 is stored once with every field it was sent with, and the service still answers`,
    { timeout: 180_000 + (TIME_LIMIT_S > 0 ? TIME_LIMIT_S * 1_000 : RUNS * 1_000) },
    async () => {
      const endpoints = [...endpointsOf(SLICES), ...authEndpointsOf(SLICES)];
      await fc.assert(
        fc.asyncProperty(fuzzInput(fixtures, endpoints), (input) => check(input)),
        { numRuns: RUNS, seed: SEED, ...(TIME_LIMIT_S > 0 ? { interruptAfterTimeLimit: TIME_LIMIT_S * 1_000, markInterruptAsFailure: false } : {}) },
      );

      expect(failures).toEqual([]);
      const { stored, others, deadLetters, lostFields } = await settledStore();
      counts.stored = stored.length;
      expect(deadLetters).toBe(0);
      expect(others).toEqual([]);
      expect(stored.sort()).toEqual([...accepted].sort());
      expect(lostFields).toEqual([]);

      const health = await fetch(`${dep.urls.site}/healthz`);
      expect(health.status).toBe(200);
      const search = await fetch(`${dep.urls.site}/api/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: { name: 'search_care_resources', arguments: { query: 'respite care', limit: 2 } },
        }),
      });
      expect(search.status).toBe(200);
      expect(JSON.parse(((await search.json()) as { result: { content: { text: string }[] } }).result.content[0]!.text).results.length).toBeGreaterThan(0);
      expect((await fetch(`${dep.urls.site}/resources`)).status).toBe(200);
      expect(dep.dead()).toEqual([]);
    },
  );
});
