// 202 means stored, or accounted for: what the store would refuse is a 400 before acceptance, and an
// accepted event the database still refuses ends in the dead-letter store, which the operator's
// `carecircle deadletters` lists, shows, replays and drops. Real NATS (JetStream) and FerretDB.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { subjects } from '../src/bus/subjects.js';
import { deadLetterCount, DeadLetters, INGEST_DEAD_LETTERS, onDeadLetter, type DeadLetterRecord } from '../src/ingest/deadLetters.js';
import { deadlettersCommand } from '../src/ingest/cli.js';
import { FamilyShares } from '../src/ingest/familyShare.js';
import { MAX_PAYLOAD_DEPTH } from '../src/ingest/storable.js';
import { ingestStream } from '../src/ingest/stream.js';
import type { QueuedEvent } from '../src/ingest/writer.js';
import { repoRoot } from './harness/servers.js';
import { startTestService, type TestService } from './harness/service.js';
import {
  careEvents,
  drained,
  family,
  onboard,
  postEvent,
  shareWith,
  storedEvents,
  TEST_DATA_KEY,
  visit,
  type Family,
  type Partner,
} from './ingest.fixtures.js';

let svc: TestService;
let partner: Partner;
let fam: Family;
const SUBJECT = 'client-dl';
beforeAll(async () => {
  svc = await startTestService({ nats: true, env: { DATA_KEY: TEST_DATA_KEY, INGEST_MAX_DELIVERIES: '2', RATE_INGEST_PER_MIN: '10000' } });
  partner = await onboard(svc.store.db, svc.credentials);
  fam = await family(svc.store.db, svc.credentials, svc.config);
  await shareWith(svc, partner, SUBJECT, fam);
});
afterAll(async () => {
  await svc?.stop();
});

export const nest = (depth: number, leaf: unknown = 1): unknown => {
  let v = leaf;
  for (let i = 0; i < depth; i++) v = { a: v };
  return v;
};

const withPayload = (extra: Record<string, unknown>, id: string) =>
  visit(partner, SUBJECT, {
    source_event_id: id,
    payload: { caregiver_id: 'cg-1', scheduled_start: '2026-11-22T09:00:00Z', actual_start: new Date(Date.now() - 60_000).toISOString(), ...extra },
  });

/** A queued event as the handler would have queued it, for what reaches the consumer anyway. */
export function queued(p: Partner, linkId: string, id: string, payload: Record<string, unknown>): QueuedEvent {
  const at = new Date(Date.now() - 60_000).toISOString();
  return { v: 1, eventId: id, institutionId: p.institutionId, subjectRef: SUBJECT, eventType: 'note_added', occurredAt: at, receivedAt: at, payload, linkId };
}

async function linkId(): Promise<string> {
  return (await new FamilyShares(svc.store.db, svc.credentials).binding(partner.institutionId, SUBJECT))!.link.linkId;
}

async function publish(e: QueuedEvent): Promise<void> {
  const s = ingestStream(svc.config.busNamespace, subjects(svc.config.busNamespace).ingestEvents);
  await svc.bus.durable!.publish(s.subject, e, { msgId: e.eventId });
}

describe('ingest - what the store would refuse is a 400 before acceptance', () => {
  it.each([
    ['nested 95 levels', { extra: nest(95) }, /^payload\.extra\.a\.a.*: is nested more than 32 levels deep.*\[rule: depth\]$/],
    ['nested 3000 levels', { extra: nest(3000) }, /\[rule: depth\]$/],
    ['a "$" key', { extra: { $where: 'x' } }, /^payload\.extra\["\$where"\]: key starts with "\$".*\[rule: key\]$/],
    ['a key with "."', { 'a.b': 1 }, /^payload\["a\.b"\]: key contains "\."/],
    ['an empty key', { '': 1 }, /^payload\[""\]: key is an empty key name/],
    ['a NUL in a key', { 'a\u0000b': 1 }, /key contains a NUL character/],
    ['an array in an array', { grid: [[1, 2]] }, /^payload\.grid\[0\]: is an array directly inside an array.*\[rule: nested_array\]$/],
    ['a lone surrogate', { note: 'x\ud800y' }, /^payload\.note: holds an unpaired UTF-16 surrogate.*\[rule: text\]$/],
    // As JSON.parse makes them: own "__proto__" fields, which an object literal cannot write.
    ['a "__proto__" key', JSON.parse('{"__proto__": {"admin": true}}'), /^payload\.__proto__: key is "__proto__", which is not allowed .*\[rule: key\]$/],
    [
      'a "__proto__" key inside a known field',
      { structured_summary: JSON.parse('{"mood": "calm", "__proto__": {"admin": true}}') },
      /^payload\.structured_summary\.__proto__: key is "__proto__", which is not allowed/,
    ],
    ['a "__proto__" key deep inside', { extra: { list: [JSON.parse('{"__proto__": 1}')] } }, /^payload\.extra\.list\[0\]\.__proto__: key is "__proto__"/],
  ])('when the payload holds %s, then 400 naming the field and the rule, and nothing is queued', async (_name, extra, message) => {
    const r = await postEvent(svc.urls.pipe!, partner, withPayload(extra as Record<string, unknown>, `bad-${_name}`));
    expect([r.status, r.json.code]).toEqual([400, 'VALIDATION_FAILED']);
    expect(r.json.message).toMatch(message);
    expect(r.json.message.length).toBeLessThan(300);
  });

  it('when the payload has "constructor" and "prototype" keys, at the top and inside, then it is accepted and they are stored as sent', async () => {
    const r = await postEvent(
      svc.urls.pipe!,
      partner,
      withPayload({ constructor: 'Acme', prototype: { version: 2 }, extra: { constructor: { prototype: { x: 1 } } } }, 'ok-constructor'),
    );
    expect(r.status).toBe(202);
    const [row] = await storedEvents(svc.store.db, { _id: r.json.event_id }, 1);
    expect(row!.payload).toMatchObject({ constructor: 'Acme', prototype: { version: 2 }, extra: { constructor: { prototype: { x: 1 } } } });
    expect(Object.getPrototypeOf(row!.payload)).toBe(Object.prototype);
  });

  it('when a number is beyond the double range (1e999), then 400 with rule number', async () => {
    const body = JSON.stringify(withPayload({}, 'bad-inf')).replace('"caregiver_id":"cg-1"', '"caregiver_id":"cg-1","dose":1e999');
    const r = await postEvent(svc.urls.pipe!, partner, undefined, { body });
    expect([r.status, r.json.message]).toEqual([400, expect.stringMatching(/^payload\.dose: is a number outside .*\[rule: number\]$/)]);
  });

  it(`when the payload is nested ${MAX_PAYLOAD_DEPTH} levels with arrays of objects and "$" inside values, then it is accepted and stored as sent`, async () => {
    const payloadExtra = { deep: nest(MAX_PAYLOAD_DEPTH - 2), list: [{ items: [1, 2] }], price: '$5', 'key-with-dash': 'ok' };
    const r = await postEvent(svc.urls.pipe!, partner, withPayload(payloadExtra, 'ok-deep'));
    expect(r.status).toBe(202);
    const [row] = await storedEvents(svc.store.db, { _id: r.json.event_id }, 1);
    expect(row!.payload).toMatchObject(payloadExtra);
  });
});

describe('ingest - an accepted event the database refuses is dead-lettered, not redelivered for ever', () => {
  it('when every write is refused, then after INGEST_MAX_DELIVERIES attempts it is held exactly as accepted, acknowledged, logged and counted', async () => {
    const seen: DeadLetterRecord[] = [];
    const off = onDeadLetter((r) => seen.push(r));
    const before = deadLetterCount();
    const e = queued(partner, await linkId(), 'evt_deadletter000000001', { note_text: 'x', $bad: { nested: [[1]] } });
    await publish(e);
    await drained(svc.bus, svc.config, 20_000);
    off();
    const row = await new DeadLetters(svc.store.db).get(e.eventId);
    expect(row).toMatchObject({
      _id: e.eventId,
      institutionId: partner.institutionId,
      subjectRef: SUBJECT,
      eventType: 'note_added',
      attempts: 2,
      origin: 'consumer',
      error: { class: expect.stringMatching(/^Mongo/) },
    });
    expect(JSON.parse(row!.event)).toEqual(e);
    expect(deadLetterCount()).toBe(before + 1);
    expect(seen.map((r) => r._id)).toEqual([e.eventId]);
    expect(await careEvents(svc.store.db).countDocuments({ _id: e.eventId })).toBe(0);
  });
});

/** One command in this process, with its output captured. */
async function deadletters(args: string[], stdin?: string) {
  let stdout = '';
  let stderr = '';
  let answer = stdin;
  const out = vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => ((stdout += String(chunk)), true));
  const err = vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => {
    stderr += String(chunk);
    // Asked (the question goes to stderr): the operator types the answer.
    if (answer !== undefined && stderr.includes('[y/N] ')) {
      const typed = answer;
      answer = undefined;
      setImmediate(() => process.stdin.emit('data', typed));
    }
    return true;
  });
  try {
    return { code: await deadlettersCommand(args, { ...svc.config, mongoUrl: svc.mongoUrl }), stdout, stderr };
  } finally {
    out.mockRestore();
    err.mockRestore();
  }
}

describe('carecircle deadletters', () => {
  it('when an operator lists, shows, replays and drops, then a stored replay removes the letter, a refused one keeps it, and drop asks first', async () => {
    const letters = new DeadLetters(svc.store.db);
    const link = await linkId();
    const fixable = queued(partner, link, 'evt_deadletter000000002', { note_text: 'Replay me' });
    const broken = queued(partner, link, 'evt_deadletter000000003', { $still: 'bad' });
    await letters.put(fixable, new Error('refused then'), 3, 'consumer');
    await letters.put(broken, new Error('refused'), 3, 'consumer');

    const listed = await deadletters(['list', '--json']);
    expect(listed.code).toBe(0);
    expect(JSON.parse(listed.stdout).map((r: { event_id: string }) => r.event_id)).toEqual(expect.arrayContaining([fixable.eventId, broken.eventId]));
    const shown = JSON.parse((await deadletters(['show', fixable.eventId, '--json'])).stdout);
    expect(shown).toMatchObject({ event_id: fixable.eventId, attempts: 3, error_class: 'Error', error: 'refused then', event: fixable });

    const replayed = await deadletters(['replay', fixable.eventId, '--json']);
    expect([replayed.code, JSON.parse(replayed.stdout)]).toEqual([0, { event_id: fixable.eventId, outcome: 'stored' }]);
    expect(await careEvents(svc.store.db).findOne({ _id: fixable.eventId })).toMatchObject({ payload: { note_text: 'Replay me' }, lovedOneId: fam.lovedOneId });
    expect(await letters.get(fixable.eventId)).toBeNull();

    const refused = await deadletters(['replay', broken.eventId, '--wait', '3']);
    expect(refused.code).toBe(1);
    expect(refused.stdout).toMatch(/not stored; dead letter kept/);
    await drained(svc.bus, svc.config, 20_000);
    expect(await letters.get(broken.eventId)).not.toBeNull();

    const declined = await deadletters(['drop', broken.eventId], 'n\n');
    expect([declined.code, declined.stderr]).toEqual([1, expect.stringContaining('not dropped')]);
    expect(await letters.get(broken.eventId)).not.toBeNull();
    expect((await deadletters(['drop', broken.eventId, '--yes'])).code).toBe(0);
    expect(await svc.store.db.collection(INGEST_DEAD_LETTERS).countDocuments({ _id: broken.eventId as never })).toBe(0);
    expect((await deadletters(['show', broken.eventId])).code).toBe(1);
  });
});

/** The real command line as a child process, its stdin /dev/null: at its end before any answer. */
async function deadlettersWithoutStdin(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(repoRoot, 'src/cli.ts'), 'deadletters', ...args], {
    cwd: repoRoot,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      NODE_ENV: 'test',
      LOG_LEVEL: 'silent',
      MONGO_URL: svc.mongoUrl,
      DATA_KEY: TEST_DATA_KEY,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => void (stdout += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => void (stderr += chunk.toString()));
  // A command still waiting for an answer is killed: its exit code is then null.
  const stuck = setTimeout(() => child.kill('SIGKILL'), 20_000);
  const [code] = (await once(child, 'exit')) as [number | null];
  clearTimeout(stuck);
  return { code, stdout, stderr };
}

describe('carecircle deadletters drop without an answer', () => {
  it(
    'when drop runs without --yes and stdin ends before any answer, then it refuses at once saying to pass --yes, exits 2, and the letter stays',
    { timeout: 30_000 },
    async () => {
      const letters = new DeadLetters(svc.store.db);
      const kept = queued(partner, await linkId(), 'evt_deadletter000000004', { $still: 'bad' });
      await letters.put(kept, new Error('refused'), 3, 'consumer');

      const r = await deadlettersWithoutStdin(['drop', kept.eventId]);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/no answer on stdin .*not dropped\. Pass --yes to drop without asking/);
      expect(r.stdout).toBe('');
      expect(await letters.get(kept.eventId)).not.toBeNull();
    },
  );
});
