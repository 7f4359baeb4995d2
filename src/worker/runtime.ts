// The worker side of the bus: a registry of handlers, each serving one subject in the shared
// queue group, under one per-process concurrency limit.
import { httpRequestEnvelope, type HttpReplyEnvelope, type HttpRequestEnvelope } from '../bus/envelopes.js';
import { QUEUE } from '../bus/subjects.js';
import { HEADER_REQUEST_ID, type Bus, type Subscription } from '../bus/types.js';
import type { Logger } from '../log.js';

export interface HttpHandler {
  subject: string;
  handle(request: HttpRequestEnvelope, log: Logger): Promise<HttpReplyEnvelope>;
}

/** Counts running work and makes callers wait when the limit is reached. */
export class Semaphore {
  private running = 0;
  private readonly waiting: (() => void)[] = [];
  constructor(private readonly limit: number) {}

  async run<T>(fn: () => Promise<T>): Promise<T> {
    if (this.running >= this.limit) await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.running++;
    try {
      return await fn();
    } finally {
      this.running--;
      this.waiting.shift()?.();
    }
  }
}

export interface WorkerPool {
  stop(): Promise<void>;
}

export function startWorkers(bus: Bus, handlers: readonly HttpHandler[], opts: { concurrency: number; log: Logger }): WorkerPool {
  const gate = new Semaphore(opts.concurrency);
  const subs: Subscription[] = handlers.map((h) =>
    bus.serve(h.subject, QUEUE, (msg) =>
      gate.run(async () => {
        const log = opts.log.child({ requestId: msg.headers[HEADER_REQUEST_ID], subject: h.subject });
        // Envelopes come from our own gateways, but the bus is a trust boundary all the same.
        const request = httpRequestEnvelope.parse(msg.data);
        const reply = await h.handle(request, log);
        log.debug({ status: reply.status }, 'handled');
        return reply;
      }),
    ),
  );
  opts.log.info({ subjects: handlers.map((h) => h.subject), concurrency: opts.concurrency, bus: bus.kind }, 'workers serving');
  return { stop: async () => void (await Promise.all(subs.map((s) => s.drain()))) };
}
