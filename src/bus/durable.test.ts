// Durable streams on a real nats-server: acknowledged, de-duplicated publishes and the explicit-ack
// consumer's redelivery, concurrency bound and stop.
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, inject, it, vi } from 'vitest';
import { startNats } from '../../test/harness/servers.js';
import { createLogger } from '../log.js';
import type { ConsumeOptions, ConsumerSpec, DurableMessage, RunningConsumer, StreamSpec } from './durable.js';
import { MemoryBus } from './memory.js';
import { NatsBus } from './nats.js';
import type { Bus } from './types.js';

const log = createLogger('silent');
const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

async function natsBus(url = inject('natsUrl')): Promise<NatsBus> {
  const bus = await NatsBus.connect(url, log, 'durable-test');
  cleanup.push(() => bus.close());
  return bus;
}

function names(ackWaitMs = 30_000): { stream: StreamSpec; consumer: ConsumerSpec; subject: string } {
  const id = randomBytes(5).toString('hex');
  const subject = `test.durable.${id}`;
  return {
    subject,
    stream: { name: `TEST_DURABLE_${id}`, subjects: [subject], duplicateWindowMs: 60_000, retention: 'workqueue' },
    consumer: { durable: 'writer', filterSubject: subject, ackWaitMs },
  };
}

const until = (check: () => boolean | Promise<boolean>, timeoutMs = 5_000) =>
  vi.waitFor(async () => expect(await check(), 'condition not met in time').toBe(true), { timeout: timeoutMs, interval: 20 });

function running(c: RunningConsumer): RunningConsumer {
  cleanup.push(() => c.stop());
  return c;
}

describe('durable streams', () => {
  it('exist on the NATS bus and not on the in-process bus', async () => {
    const buses: Bus[] = [new MemoryBus(), await natsBus()];
    expect(buses.map((b) => b.durable !== undefined)).toEqual([false, true]);
  });

  it('acknowledge a publish with its sequence, and store a repeated message id once', async () => {
    const { durable } = await natsBus();
    const n = names();
    await durable.ensureStream(n.stream);
    await durable.ensureStream(n.stream); // idempotent
    await durable.ensureConsumer(n.stream.name, n.consumer);
    await durable.ensureConsumer(n.stream.name, { ...n.consumer, ackWaitMs: 5_000 }); // updates in place
    const first = await durable.publish(n.subject, { n: 1 }, { msgId: 'm1' });
    const again = await durable.publish(n.subject, { n: 1 }, { msgId: 'm1' });
    const second = await durable.publish(n.subject, { n: 2 }, { msgId: 'm2' });
    expect(first).toEqual({ stream: n.stream.name, seq: 1, duplicate: false });
    expect(again).toMatchObject({ seq: 1, duplicate: true });
    expect(second).toMatchObject({ seq: 2, duplicate: false });
    expect(await durable.consumerState(n.stream.name, n.consumer.durable)).toEqual({ pending: 2, ackPending: 0 });
  });

  it('deliver every message to the handler; a nak or a throw brings it back, term does not', async () => {
    const { durable } = await natsBus();
    const n = names();
    const seen: { n: number; redelivered: boolean }[] = [];
    const handler = async (m: DurableMessage) => {
      const body = m.json() as { n: number };
      seen.push({ n: body.n, redelivered: m.redelivered });
      if (body.n === 2 && !m.redelivered) return m.nak();
      if (body.n === 3 && !m.redelivered) throw new Error('storage trouble');
      if (body.n === 4) return m.term();
      m.ack();
    };
    let started = 0;
    running(durable.consume(n.stream, n.consumer, handler, { concurrency: 4, onStart: () => started++ }));
    await until(() => started === 1);
    for (const i of [1, 2, 3, 4]) await durable.publish(n.subject, { n: i }, { msgId: `e${i}` });
    await until(async () => {
      const s = await durable.consumerState(n.stream.name, n.consumer.durable);
      return seen.length >= 6 && s.pending === 0 && s.ackPending === 0;
    });
    expect(
      seen
        .filter((s) => !s.redelivered)
        .map((s) => s.n)
        .sort(),
    ).toEqual([1, 2, 3, 4]);
    expect(
      seen
        .filter((s) => s.redelivered)
        .map((s) => s.n)
        .sort(),
    ).toEqual([2, 3]);
  });

  /** The most handlers that ran at once while `bodies` were consumed under `options`. */
  async function mostAtOnce(options: ConsumeOptions, bodies: object[]): Promise<number> {
    const { durable } = await natsBus();
    const n = names();
    let now = 0;
    let most = 0;
    let done = 0;
    await durable.ensureStream(n.stream);
    running(
      durable.consume(
        n.stream,
        n.consumer,
        async (m) => {
          most = Math.max(most, ++now);
          await sleep(30);
          now--;
          done++;
          m.ack();
        },
        options,
      ),
    );
    await Promise.all(bodies.map((body, i) => durable.publish(n.subject, body, { msgId: `m${i}` })));
    await until(() => done === bodies.length);
    return most;
  }

  it('run at most `concurrency` handlers at once', async () => {
    expect(
      await mostAtOnce(
        { concurrency: 3 },
        Array.from({ length: 15 }, (_, i) => ({ i })),
      ),
    ).toBe(3);
  });

  it('run fewer handlers at once when their bodies would pass `maxBytes`', async () => {
    // Bodies of about 1,000 bytes: the second one taken reaches the bound, so two at most.
    const pad = 'x'.repeat(1_000);
    expect(
      await mostAtOnce(
        { concurrency: 8, maxBytes: 1_500 },
        Array.from({ length: 12 }, (_, i) => ({ i, pad })),
      ),
    ).toBe(2);
  });

  it('on stop, finish the handlers running and hand the rest back at once, not after the ack wait', async () => {
    const a = (await natsBus()).durable;
    const b = (await natsBus()).durable;
    const n = names(60_000);
    const byA: number[] = [];
    const byB: number[] = [];
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let startedA = false;
    const first = a.consume(
      n.stream,
      n.consumer,
      async (m) => {
        byA.push((m.json() as { i: number }).i);
        await held;
        m.ack();
      },
      { concurrency: 1, onStart: () => (startedA = true) },
    );
    await until(() => startedA);
    for (let i = 0; i < 5; i++) await a.publish(n.subject, { i }, { msgId: `s${i}` });
    await until(() => byA.length === 1);
    // Stopped with its handler held: that one finishes, the rest go back without waiting for it.
    const stopping = first.stop();
    release();
    await stopping;
    running(
      b.consume(
        n.stream,
        n.consumer,
        async (m) => {
          byB.push((m.json() as { i: number }).i);
          m.ack();
        },
        { concurrency: 2 },
      ),
    );
    await until(() => byA.length + byB.length === 5);
    expect([...byA, ...byB].sort()).toEqual([0, 1, 2, 3, 4]);
    expect(await a.consumerState(n.stream.name, n.consumer.durable)).toEqual({ pending: 0, ackPending: 0 });
  });

  it('keep retrying while JetStream is off, saying why, and stop cleanly', async () => {
    const server = await startNats({ jetstream: false });
    cleanup.push(() => server.stop());
    const { durable } = await natsBus(server.url);
    const failures: number[] = [];
    const c = durable.consume(names().stream, names().consumer, async () => undefined, { concurrency: 1, onError: (_err, count) => failures.push(count) });
    await until(() => failures.length >= 2);
    expect(failures.slice(0, 2)).toEqual([1, 2]);
    await c.stop();
    await expect(durable.publish('test.durable.off', {}, { msgId: 'x', timeoutMs: 500 })).rejects.toThrow();
  });
});
