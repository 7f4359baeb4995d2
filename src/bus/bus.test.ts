// One behaviour suite, run against both bus implementations.
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, inject, it, vi } from 'vitest';
import { createLogger } from '../log.js';
import { HandlerFailure, NoRespondersError, RemoteHandlerError, RequestEncodingError, RequestTimeoutError } from './errors.js';
import { MemoryBus } from './memory.js';
import { RawJson } from './replies.js';
import { NatsBus } from './nats.js';
import type { Bus } from './types.js';

const log = createLogger('silent');
/**
 * The in-process bus with its members on the far side of a thread boundary (the embedded run's
 * worker threads): requests cross as JSON text (serveRemote), replies come back encoded
 * (encodedAnswer); only the postMessage between the two is left out.
 */
function acrossThreads(): Bus {
  const near = new MemoryBus();
  const far = new MemoryBus();
  return {
    kind: 'memory',
    request: (s, data, options) => near.request(s, data, options),
    serve: (s, queue, handler, options) => {
      const farSub = far.serve(s, queue, handler, options);
      const nearSub = near.serveRemote(s, queue, (subj, json, headers) => far.encodedAnswer(subj, json, headers));
      return { drain: async () => void (await Promise.all([nearSub.drain(), farSub.drain()])) };
    },
    publish: (s, data, headers) => near.publish(s, data, headers),
    subscribe: (s, handler) => near.subscribe(s, handler),
    ready: () => near.ready(),
    flush: () => near.flush(),
    close: async () => void (await Promise.all([near.close(), far.close()])),
  };
}

const impls: [string, () => Promise<Bus>][] = [
  ['memory', async () => new MemoryBus()],
  ['memory, members across a thread boundary', async () => acrossThreads()],
  ['nats', () => NatsBus.connect(inject('natsUrl'), log, 'bus-test')],
];
let subjectSeq = 0;
const subject = () => `test.bus.${process.pid}.${Date.now()}.${subjectSeq++}`;

describe.each(impls)('bus (%s)', (_name, open) => {
  const opened: Bus[] = [];
  const bus = async () => {
    const b = await open();
    opened.push(b);
    return b;
  };
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((b) => b.close()));
  });

  it('request/reply carries data and headers, as a copy', async () => {
    const a = await bus();
    const s = subject();
    const sent = { n: 1, nested: { list: [1, 2] } };
    a.serve(s, 'q', async (msg) => ({ got: msg.data, rid: msg.headers['cc-request-id'] }));
    const reply = (await a.request(s, sent, { timeoutMs: 2000, headers: { 'cc-request-id': 'abc' } })) as any;
    expect(reply).toEqual({ got: sent, rid: 'abc' });
    expect(reply.got).not.toBe(sent);
  });

  it('a member of the reply already encoded as JSON crosses as it is, beside the rest, and counts toward maxReplyBytes', async () => {
    const a = await bus();
    const s = subject();
    const json = JSON.stringify({ text: 'a "quoted"\nline', n: [1, 2.5, null], deep: { é: true } });
    a.serve(s, 'q', async (msg) => ({ status: 200, headers: { 'x-a': 'b' }, body: new RawJson(json.repeat(msg.data as number)) }), { maxReplyBytes: 1_000 });
    await a.flush();
    const reply = (await a.request(s, 1, { timeoutMs: 2000 })) as { status: number; headers: unknown; body: unknown };
    expect(reply).toMatchObject({ status: 200, headers: { 'x-a': 'b' } });
    expect(reply.body).toBeInstanceOf(RawJson);
    expect((reply.body as RawJson).json).toBe(json);
    // Over NATS the member stays the UTF-8 bytes it arrived as, for a gateway to send on as they are.
    if (_name === 'nats') expect(Buffer.from((reply.body as RawJson).utf8!).equals(Buffer.from(json))).toBe(true);
    await expect(a.request(s, 50, { timeoutMs: 2000 })).rejects.toMatchObject({ kind: 'too_large' });
  });

  it('requests sent in one turn of the event loop leave together and each gets its own reply', async () => {
    const a = await bus();
    const s = subject();
    a.serve(s, 'q', async (msg) => ({ n: msg.data, rid: msg.headers['cc-request-id'] }));
    await a.flush();
    const replies = await Promise.all(Array.from({ length: 200 }, (_, n) => a.request(s, n, { timeoutMs: 2000, headers: { 'cc-request-id': `r${n}` } })));
    expect(replies).toEqual(Array.from({ length: 200 }, (_, n) => ({ n, rid: `r${n}` })));
  });

  it('no responders fails fast with NoRespondersError', async () => {
    const a = await bus();
    await expect(a.request(subject(), {}, { timeoutMs: 2000 })).rejects.toBeInstanceOf(NoRespondersError);
  });

  it('a slow handler times out with RequestTimeoutError', async () => {
    const a = await bus();
    const s = subject();
    // The handler answers only once the caller has given up.
    let answer!: () => void;
    const held = new Promise<void>((resolve) => (answer = resolve));
    a.serve(s, 'q', async () => held);
    await expect(a.request(s, {}, { timeoutMs: 50 })).rejects.toBeInstanceOf(RequestTimeoutError);
    answer();
  });

  it('a failing handler becomes RemoteHandlerError with its message', async () => {
    const a = await bus();
    const s = subject();
    a.serve(s, 'q', async () => {
      throw new Error('boom');
    });
    await expect(a.request(s, {}, { timeoutMs: 2000 })).rejects.toThrow(RemoteHandlerError);
  });

  it('a handler failure carries its cause, and one that names none is `failed`', async () => {
    const a = await bus();
    const s = subject();
    a.serve(s, 'q', async (msg) => {
      if (msg.data === 'down') throw new HandlerFailure('unavailable', 'database down');
      throw new Error('boom');
    });
    await expect(a.request(s, 'down', { timeoutMs: 2000 })).rejects.toMatchObject({
      name: 'RemoteHandlerError',
      kind: 'unavailable',
      message: 'database down',
    });
    await expect(a.request(s, 'other', { timeoutMs: 2000 })).rejects.toMatchObject({ kind: 'failed', message: 'boom' });
  });

  it('a reply larger than maxReplyBytes is refused as too_large, told to onRefused, and the member keeps serving', async () => {
    const a = await bus();
    const s = subject();
    const refused: string[] = [];
    a.serve(s, 'q', async (msg) => 'x'.repeat(msg.data as number), { maxReplyBytes: 1_000, onRefused: (f) => refused.push(f.message) });
    await a.flush();
    await expect(a.request(s, 2_000, { timeoutMs: 2000 })).rejects.toMatchObject({
      kind: 'too_large',
      message: expect.stringMatching(/^reply too large: \d+ bytes, the limit is 1000$/),
    });
    expect(refused).toHaveLength(1);
    await expect(a.request(s, 10, { timeoutMs: 2000 })).resolves.toBe('x'.repeat(10));
  });

  it('a reply too deep to encode is answered as rejected, not left to time out', async () => {
    const a = await bus();
    const s = subject();
    a.serve(s, 'q', async () => {
      let deep: unknown = [];
      for (let i = 0; i < 20_000; i++) deep = [deep];
      return deep;
    });
    await a.flush();
    await expect(a.request(s, {}, { timeoutMs: 2000 })).rejects.toMatchObject({ kind: 'rejected', message: expect.stringMatching(/could not be encoded/) });
  });

  it('a request too deep to encode fails at once with RequestEncodingError, and no handler runs', async () => {
    const a = await bus();
    const s = subject();
    let ran = 0;
    a.serve(s, 'q', async () => ran++);
    await a.flush();
    let deep: unknown = [];
    for (let i = 0; i < 20_000; i++) deep = [deep];
    await expect(a.request(s, deep, { timeoutMs: 2000 })).rejects.toBeInstanceOf(RequestEncodingError);
    expect(ran).toBe(0);
  });

  it('a queue group gives each request to exactly one member, and spreads them', async () => {
    const a = await bus();
    const b = await bus();
    const s = subject();
    const served: string[] = [];
    a.serve(s, 'workers', async () => void served.push('a'));
    b.serve(s, 'workers', async () => void served.push('b'));
    await Promise.all([a.flush(), b.flush()]);
    // For the memory bus both members live on one bus instance's registry: serve on the caller's bus.
    const caller = a.kind === 'memory' ? a : b;
    if (a.kind === 'memory') caller.serve(s, 'workers', async () => void served.push('a2'));
    for (let i = 0; i < 40; i++) await caller.request(s, i, { timeoutMs: 2000 });
    expect(served).toHaveLength(40);
    expect(new Set(served).size).toBeGreaterThan(1);
  });

  it('drain waits for the handlers in flight, then takes no more', async () => {
    const a = await bus();
    const caller = a.kind === 'memory' ? a : await bus();
    const s = subject();
    let finished = 0;
    let started!: () => void;
    const inFlight = new Promise<void>((resolve) => (started = resolve));
    const sub = a.serve(s, 'q', async () => {
      started();
      await sleep(100); // the handler's work, still under way when the drain begins
      finished++;
      return 'done';
    });
    await a.flush();
    const pending = caller.request(s, {}, { timeoutMs: 2000 });
    await inFlight;
    await sub.drain();
    expect(finished).toBe(1);
    await expect(pending).resolves.toBe('done');
    await expect(caller.request(s, {}, { timeoutMs: 300 })).rejects.toBeInstanceOf(NoRespondersError);
  });

  it('publish reaches every subscriber', async () => {
    const a = await bus();
    const s = subject();
    const got: unknown[] = [];
    a.subscribe(s, (m) => got.push(m.data));
    a.subscribe(s, (m) => got.push(m.data));
    await a.flush();
    a.publish(s, { hello: 1 });
    await vi.waitFor(() => expect(got).toEqual([{ hello: 1 }, { hello: 1 }]), { timeout: 500, interval: 10 });
  });

  it('ready() is true while open and false after close', async () => {
    const a = await open();
    expect(a.ready()).toBe(true);
    await a.close();
    expect(a.ready()).toBe(false);
  });
});
