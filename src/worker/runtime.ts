// The worker side of the bus: a registry of handlers, each serving one subject in the shared
// queue group, under one per-process concurrency limit. A request can make its handler fail; the
// failure is logged once here and answered by cause, and the worker goes on serving.
import { parseRequestEnvelope, type HttpReplyEnvelope, type HttpRequestEnvelope } from '../bus/envelopes.js';
import { HandlerFailure } from '../bus/errors.js';
import { encodeJson, RawJson } from '../bus/replies.js';
import { countDatabaseError, failureKindOf } from '../bus/failures.js';
import { QUEUE } from '../bus/subjects.js';
import { HEADER_DEADLINE, HEADER_REQUEST_ID, type Bus, type BusHeaders, type Subscription } from '../bus/types.js';
import type { Logger } from '../log.js';
import { metrics } from '../metrics/index.js';
import { guardProcess } from './guard.js';

export interface HttpHandler {
  subject: string;
  handle(request: HttpRequestEnvelope, log: Logger): Promise<HttpReplyEnvelope>;
  /** Largest reply (encoded) this handler may send; a larger one is refused by name. */
  maxReplyBytes?: number;
}

/** Log a handler's failure once, at the level its cause deserves, and name the cause for the bus. */
function failureOf(err: unknown, log: Logger): HandlerFailure {
  const kind = failureKindOf(err);
  metrics.workerFailures.inc({ kind });
  countDatabaseError(err);
  const named = err instanceof HandlerFailure ? err : undefined;
  switch (kind) {
    case 'unavailable':
      log.warn({ err }, 'dependency unavailable');
      return named ?? new HandlerFailure(kind, 'a service this request needs is unavailable right now', { cause: err });
    case 'rejected': {
      log.warn({ err }, 'request rejected: it fails the same way every time');
      const what = err instanceof SyntaxError ? 'a value in it could not be parsed' : 'a value in it is nested too deeply or out of range';
      return named ?? new HandlerFailure(kind, `the request could not be processed: ${what}`, { cause: err });
    }
    case 'too_large':
      log.warn({ err }, 'reply too large');
      return named ?? new HandlerFailure(kind, String(err));
    default:
      log.error({ err }, 'handler failed');
      return named ?? new HandlerFailure(kind, err instanceof Error ? err.message : String(err), { cause: err });
  }
}

/**
 * The reply with its JSON body encoded here, once, for the gateway to send as it is (instead of
 * decoding it from the bus and encoding it again). One that cannot be encoded is left to the bus,
 * which answers it by cause.
 */
function withEncodedBody(reply: HttpReplyEnvelope): HttpReplyEnvelope {
  if (reply.body === undefined || reply.raw) return reply;
  try {
    const json = encodeJson(reply.body);
    return json === undefined ? reply : { ...reply, body: new RawJson(json) };
  } catch {
    return reply;
  }
}

/**
 * A request's logger, made on its first use: most requests log nothing, and making a child logger
 * runs the redaction over its bindings (about 1.5% of a worker's CPU on the directory's reads).
 */
function lazyChild(parent: Logger, bindings: Record<string, unknown>): Logger {
  let child: Logger | undefined;
  return new Proxy(parent, {
    get(_target, prop) {
      child ??= parent.child(bindings);
      const value: unknown = Reflect.get(child, prop, child);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(child) : value;
    },
  });
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
  const release = guardProcess(opts.log);
  const logFor = (headers: BusHeaders, subject: string) => lazyChild(opts.log, { requestId: headers[HEADER_REQUEST_ID], subject });
  const subs: Subscription[] = handlers.map((h) =>
    bus.serve(
      h.subject,
      QUEUE,
      (msg) =>
        gate.run(async () => {
          // Waited here past the gateway's deadline: the gateway has stopped listening (it tried
          // another worker or answered 503), so the work would be answered to nobody. Under
          // overload, doing it anyway is what keeps a worker behind the requests it could still answer.
          const deadline = Number(msg.headers[HEADER_DEADLINE]);
          if (deadline && Date.now() > deadline) {
            metrics.workerFailures.inc({ kind: 'unavailable' });
            throw new HandlerFailure('unavailable', 'the request waited past its deadline for a free slot');
          }
          const log = logFor(msg.headers, h.subject);
          // Envelopes come from our own gateways, but the bus is a trust boundary all the same.
          const request = parseRequestEnvelope(msg.data);
          if (!request.success) throw failureOf(new HandlerFailure('rejected', `not a request envelope: ${request.error.message}`), log);
          metrics.workerInFlight.inc();
          try {
            const reply = await h.handle(request.data, log);
            if (opts.log.isLevelEnabled('debug')) log.debug({ status: reply.status }, 'handled');
            return request.data.encodedBody === true ? withEncodedBody(reply) : reply;
          } catch (err) {
            throw failureOf(err, log);
          } finally {
            metrics.workerInFlight.dec();
          }
        }),
      {
        ...(h.maxReplyBytes ? { maxReplyBytes: h.maxReplyBytes } : {}),
        onRefused: (refused, headers) => {
          metrics.workerCrashesAvoided.inc({ origin: 'reply_refused' });
          logFor(headers, h.subject).warn({ kind: refused.kind }, refused.message);
        },
      },
    ),
  );
  opts.log.info({ subjects: handlers.map((h) => h.subject), concurrency: opts.concurrency, bus: bus.kind }, 'workers serving');
  return {
    stop: async () => {
      await Promise.all(subs.map((s) => s.drain()));
      release();
    },
  };
}
