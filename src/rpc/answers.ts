// A person's answer to a question put on a tools/call's event stream, carried over the bus from the
// process the client posted it to, to the gateway holding that stream: a publish with an
// acknowledgement subject, as revocations are acknowledged, so the poster learns whether the call
// was still waiting.
import { randomUUID } from 'node:crypto';
import { subjects } from '../bus/subjects.js';
import type { Bus } from '../bus/types.js';
import type { AnswerRoute, ElicitAnswer } from './writes.js';

/** How long a posted answer waits for the stream's gateway to take it. */
const ACK_TIMEOUT_MS = 3_000;

type Answer = Omit<ElicitAnswer, 'question'>;

interface Carried {
  answer: Answer;
  ack: string;
}

const answerSubject = (namespace: string, key: string): string => `${subjects(namespace).mcpAnswers}.${key}`;

/** Where a worker sends the answers posted to it. */
export function busAnswers(bus: Bus, namespace: string): AnswerRoute {
  return {
    async deliver(key, answer) {
      const ack = `${answerSubject(namespace, 'ack')}.${randomUUID()}`;
      let taken!: () => void;
      const done = new Promise<void>((resolve) => (taken = resolve));
      const sub = bus.subscribe(ack, () => taken());
      let timer: NodeJS.Timeout | undefined;
      try {
        await bus.flush();
        bus.publish(answerSubject(namespace, key), { answer, ack } satisfies Carried);
        return await Promise.race([done.then(() => true), new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ACK_TIMEOUT_MS)))]);
      } finally {
        clearTimeout(timer);
        await sub.drain();
      }
    },
  };
}

/**
 * The answer for `key`, taken once and acknowledged; `unanswered` when none came within `timeoutMs`
 * or `stop` was called (the client went away). `ready` resolves once the subscription is in effect:
 * the question may be sent only then.
 */
export function awaitAnswer(bus: Bus, namespace: string, key: string, timeoutMs: number): { ready: Promise<void>; answer: Promise<Answer>; stop(): void } {
  let settle!: (a: Answer) => void;
  const answer = new Promise<Answer>((resolve) => (settle = resolve));
  let open = true;
  const sub = bus.subscribe(answerSubject(namespace, key), (msg) => {
    const carried = msg.data as Partial<Carried> | null;
    if (!open || typeof carried?.ack !== 'string' || typeof carried.answer?.action !== 'string') return;
    finish(carried.answer);
    bus.publish(carried.ack, {});
  });
  const timer = setTimeout(() => finish({ action: 'unanswered' }), timeoutMs);
  function finish(a: Answer): void {
    if (!open) return;
    open = false;
    clearTimeout(timer);
    void sub.drain();
    settle(a);
  }
  return { ready: bus.flush(), answer, stop: () => finish({ action: 'unanswered' }) };
}
