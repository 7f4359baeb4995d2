// Workers answer every request by the cause of its failure, log it once, and outlive it.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { MongoClient } from 'mongodb';
import { pino } from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { HttpReplyEnvelope, HttpRequestEnvelope } from '../bus/envelopes.js';
import { forward } from '../bus/forward.js';
import { MemoryBus } from '../bus/memory.js';
import { freePort } from '../store/embedded/process.js';
import { startWorkers, type HttpHandler } from './runtime.js';

const envelope: HttpRequestEnvelope = { v: 1, method: 'POST', path: '/x', query: {}, headers: {}, body: {}, clientIp: '127.0.0.1', requestId: 'req-1' };
const opts = { timeoutMs: 5_000, retryWindowMs: 8_000, idempotent: true };

/** A logger whose lines a test can read. */
function capturedLog() {
  const lines: { level: number; msg: string; requestId?: string }[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString().split('\n')) if (line.trim()) lines.push(JSON.parse(line) as { level: number; msg: string });
      done();
    },
  });
  return { log: pino({ level: 'info' }, sink), lines };
}

describe('worker runtime - failures by cause', () => {
  let bus: MemoryBus | undefined;
  let stop: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await stop?.();
    await bus?.close();
  });

  const serve = (handle: HttpHandler['handle']) => {
    const { log, lines } = capturedLog();
    bus = new MemoryBus();
    const pool = startWorkers(bus, [{ subject: 's', handle }], { concurrency: 4, log });
    stop = () => pool.stop();
    return lines;
  };

  it('when pathological input makes a handler throw RangeError, then 400 (not 503), logged once, and the next request is served', async () => {
    const lines = serve(async (req) => {
      if ((req.body as { deep?: boolean }).deep) throw new RangeError('Maximum call stack size exceeded');
      return { status: 200, headers: {}, body: 'fine' };
    });
    await expect(forward(bus!, 's', { ...envelope, body: { deep: true } }, opts)).rejects.toMatchObject({
      name: 'RequestRejectedError',
      status: 400,
      message: expect.stringMatching(/could not be processed/),
    });
    expect(lines.filter((l) => l.level >= 40)).toEqual([
      expect.objectContaining({ level: 40, requestId: 'req-1', msg: expect.stringMatching(/request rejected/) }),
    ]);
    await expect(forward(bus!, 's', envelope, opts)).resolves.toMatchObject({ status: 200, body: 'fine' });
  });

  it('when a request waited for a free slot past its deadline, then it is not handled (the gateway stopped waiting) and the next one is', async () => {
    const handled: string[] = [];
    const { log } = capturedLog();
    bus = new MemoryBus();
    let release!: () => void;
    const busy = new Promise<void>((resolve) => (release = resolve));
    const pool = startWorkers(
      bus,
      [
        {
          subject: 's',
          handle: async (req) => (handled.push(req.requestId), req.requestId === 'slow' && (await busy), { status: 200, headers: {}, body: req.requestId }),
        },
      ],
      { concurrency: 1, log },
    );
    stop = () => pool.stop();
    const slow = bus.request('s', { ...envelope, requestId: 'slow' }, { timeoutMs: 5_000, headers: { 'cc-deadline': String(Date.now() + 5_000) } });
    const lateDeadline = Date.now() + 50;
    const late = bus.request('s', { ...envelope, requestId: 'late' }, { timeoutMs: 5_000, headers: { 'cc-deadline': String(lateDeadline) } });
    // The slot comes free only once the late request's deadline has passed.
    await vi.waitFor(() => expect(Date.now()).toBeGreaterThan(lateDeadline), { interval: 10 });
    release();
    await expect(slow).resolves.toMatchObject({ status: 200, body: 'slow' });
    await expect(late).rejects.toMatchObject({ kind: 'unavailable' });
    await expect(
      bus.request('s', { ...envelope, requestId: 'next' }, { timeoutMs: 5_000, headers: { 'cc-deadline': String(Date.now() + 5_000) } }),
    ).resolves.toMatchObject({ body: 'next' });
    expect(handled).toEqual(['slow', 'next']);
  });

  it('when the database cannot be reached, then 503 by cause (a dependency), logged once as a warning', async () => {
    const client = new MongoClient(`mongodb://127.0.0.1:${await freePort()}/nothing`, { serverSelectionTimeoutMS: 200 });
    try {
      const lines = serve(async (): Promise<HttpReplyEnvelope> => {
        await client.db().collection('x').findOne({});
        return { status: 200, headers: {} };
      });
      await expect(forward(bus!, 's', envelope, opts)).rejects.toMatchObject({ name: 'UnavailableError', reason: 'dependency', retryAfterSec: 2 });
      expect(lines.filter((l) => l.level >= 40).map((l) => [l.level, l.msg])).toEqual([[40, 'dependency unavailable']]);
    } finally {
      await client.close();
    }
  });

  it('when a handler has a bug, then 500 by cause, logged once as an error', async () => {
    const lines = serve(async () => {
      throw new TypeError('x is undefined');
    });
    await expect(forward(bus!, 's', envelope, opts)).rejects.toMatchObject({ name: 'WorkerFailedError' });
    expect(lines.filter((l) => l.level >= 40).map((l) => [l.level, l.msg])).toEqual([[50, 'handler failed']]);
  });
});

describe('worker process guard', () => {
  it('when an error escapes every handler, then the process logs it and keeps running', async () => {
    const guard = fileURLToPath(new URL('./guard.ts', import.meta.url));
    const script = `
      const { guardProcess } = await import(${JSON.stringify(guard)});
      const line = (o, msg) => process.stdout.write(JSON.stringify({ ...o, msg }) + '\\n');
      guardProcess({ error: (o, msg) => line({ err: String(o.err), origin: o.origin }, msg) });
      setTimeout(() => { throw new Error('escaped'); }, 10);
      setTimeout(() => void Promise.reject(new Error('unhandled')), 20);
      setTimeout(() => line({}, 'still here'), 100);`;
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    const [code] = (await once(child, 'exit')) as [number | null];
    const lines = out
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { msg: string; origin?: string; err?: string });
    expect(code).toBe(0);
    expect(lines.map((l) => [l.origin, l.err])).toEqual([
      ['uncaughtException', 'Error: escaped'],
      ['unhandledRejection', 'Error: unhandled'],
      [undefined, undefined],
    ]);
    expect(lines.at(-1)!.msg).toBe('still here');
  });
});
