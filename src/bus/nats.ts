// NATS bus: the distributed engine operators scale on. Reconnects forever; drains on close.
import { connect, headers as natsHeaders, type MsgHdrs, type NatsConnection } from '@nats-io/transport-node';
import type { Logger } from '../log.js';
import { BusClosedError, RequestEncodingError } from './errors.js';
import { NatsDurableStreams } from './natsDurable.js';
import { NatsKeyValueStores } from './natsKv.js';
import { Outbox } from './natsOutbox.js';
import { NatsRequests, utf8 } from './natsRequests.js';
import { errorHeaders as plainErrorHeaders, WorkerService, type Incoming } from './natsService.js';
import { decodeReplyBytes, encodeReply, failureEnvelope, openReply } from './replies.js';
import {
  HEADER_REQUEST_ID,
  type Bus,
  type BusHandler,
  type BusHeaders,
  type BusMessage,
  type ReplyEnvelope,
  type RequestOptions,
  type ServeOptions,
  type Subscription,
} from './types.js';

const encode = (data: unknown): string => JSON.stringify(data) ?? '';

/** The request as JSON; one nested too deeply to encode is the request's fault, named as such. */
function encodeRequest(subject: string, data: unknown): string {
  try {
    return encode(data);
  } catch (err) {
    throw new RequestEncodingError(subject, false, `the request could not be encoded (${err instanceof Error ? err.message : String(err)})`, { cause: err });
  }
}

function toNatsHeaders(h: BusHeaders | undefined) {
  const out = natsHeaders();
  for (const [k, v] of Object.entries(h ?? {})) out.set(k, v);
  return out;
}

function fromNatsHeaders(msg: Pick<Incoming, 'headers'>): BusHeaders {
  const out: BusHeaders = {};
  if (!msg.headers) return out;
  for (const [k, v] of msg.headers) if (v[0] !== undefined) out[k.toLowerCase()] = v[0];
  return out;
}

const decode = (msg: Pick<Incoming, 'data' | 'json'>): unknown => (msg.data.length ? msg.json() : undefined);

export class NatsBus implements Bus {
  readonly kind = 'nats' as const;
  readonly durable: NatsDurableStreams;
  readonly kv: NatsKeyValueStores;
  private readonly subs = new Set<{ drain(): Promise<void> }>();
  /** Present in worker processes: their served subjects are endpoints of one NATS service. */
  private service: WorkerService | undefined;
  private connected = true;
  private connection = 0;
  private readonly requests: NatsRequests;
  /** Requests and replies leave together, once per turn of the event loop. */
  private readonly outbox = new Outbox();

  private constructor(
    private readonly nc: NatsConnection,
    private readonly log: Logger,
    replicas: number,
  ) {
    this.requests = new NatsRequests(nc, this.outbox);
    this.durable = new NatsDurableStreams(nc, this.requests, replicas);
    this.kv = new NatsKeyValueStores(nc, this.requests, replicas);
  }

  static async connect(servers: string, log: Logger, name = 'carecircle', opts: { service?: boolean; replicas?: number } = {}): Promise<NatsBus> {
    const nc = await connect({
      servers: servers.split(',').map((s) => s.trim()),
      name: `${name}-${process.pid}`,
      maxReconnectAttempts: -1,
      reconnectTimeWait: 500,
      // Otherwise every request (KV and JetStream ones included) builds two errors with stack traces up front, in case it fails.
      noAsyncTraces: true,
    });
    const bus = new NatsBus(nc, log, opts.replicas ?? 1);
    if (opts.service) bus.service = await WorkerService.start(nc);
    void (async () => {
      for await (const s of nc.status()) {
        if (s.type !== 'disconnect' && s.type !== 'reconnect') continue;
        // A disconnect is announced as the socket closes, well before a new connection can bring
        // a message: whatever follows a gap is handled under a later epoch than what preceded it.
        bus.connected = s.type === 'reconnect';
        bus.connection++;
        log.warn({ nats: s.type }, `nats ${s.type}`);
      }
    })();
    return bus;
  }

  ready(): boolean {
    return this.connected && !this.nc.isClosed() && !this.nc.isDraining();
  }

  get epoch(): number {
    return this.connection;
  }

  async flush(): Promise<void> {
    // Requests still queued for this turn's write go out before the round trip that confirms them.
    this.outbox.flush();
    await this.nc.flush();
  }

  async request(subject: string, data: unknown, options: RequestOptions): Promise<unknown> {
    if (this.nc.isClosed() || this.nc.isDraining()) throw new BusClosedError();
    const payload = encodeRequest(subject, data);
    const reply = await this.requests.request(subject, payload, options.timeoutMs, options.headers);
    return openReply(subject, decodeReplyBytes(reply.data));
  }

  /** In a worker process each served subject is an endpoint of its NATS service, in the queue group given. */
  serve(subject: string, queue: string, handler: BusHandler, options: ServeOptions = {}): Subscription {
    const inflight = new Set<Promise<unknown>>();
    const run = (msg: Incoming, errorHeaders: (failure: string) => MsgHdrs) => {
      // `answer` never rejects; the catch is the last guard against an unhandled rejection.
      const done = this.answer(subject, msg, handler, options, errorHeaders).catch((e: unknown) => {
        this.log.error({ err: e, subject }, 'request left unanswered');
        return { failed: 'request left unanswered' };
      });
      inflight.add(done);
      void done.finally(() => inflight.delete(done));
      return done;
    };
    let stop: () => Promise<void>;
    if (this.service) {
      const service = this.service;
      this.service.addEndpoint(subject, queue, run);
      // The service's endpoints stop together (the library closes a service whose endpoint ends).
      stop = () => service.stop();
    } else {
      const sub = this.nc.subscribe(subject, {
        queue,
        callback: (err, msg) => {
          if (err) this.log.error({ err, subject }, 'subscription error');
          else void run(msg, plainErrorHeaders);
        },
      });
      stop = async () => void (sub.isClosed() ? undefined : await sub.drain().catch(() => undefined));
    }
    const handle = {
      drain: async () => {
        this.subs.delete(handle);
        await stop();
        await Promise.allSettled([...inflight]);
      },
    };
    this.subs.add(handle);
    return handle;
  }

  /** Run the handler and send its reply, or the failure that stands in for it. */
  private async answer(
    subject: string,
    msg: Incoming,
    handler: BusHandler,
    options: ServeOptions,
    errorHeaders: (failure: string) => MsgHdrs,
  ): Promise<{ failed?: string }> {
    const headers = fromNatsHeaders(msg);
    let env: ReplyEnvelope;
    try {
      const message: BusMessage = { subject, data: decode(msg), headers };
      env = { ok: true, data: await handler(message) };
    } catch (err) {
      env = failureEnvelope(err);
    }
    const outcome = env.ok ? {} : { failed: env.error };
    if (!msg.reply || this.nc.isClosed()) return outcome;
    const limit = Math.min(options.maxReplyBytes ?? Infinity, this.nc.info?.max_payload ?? Infinity);
    const { text, refused } = encodeReply(env, limit);
    if (refused) {
      if (options.onRefused) options.onRefused(refused, headers);
      else this.log.warn({ subject, kind: refused.kind, requestId: headers[HEADER_REQUEST_ID] }, refused.message);
    }
    this.outbox.add(() => this.respond(subject, msg, text, env.ok ? undefined : errorHeaders(env.error)));
    return outcome;
  }

  private respond(subject: string, msg: Incoming, text: string, headers: MsgHdrs | undefined): void {
    try {
      msg.respond(utf8(text), headers ? { headers } : undefined);
    } catch (err) {
      // Sending failed although the reply fits what we know of the server (it may have changed, or
      // the connection closed): try a short failure so the requester need not wait for its timeout.
      this.log.warn({ err, subject }, 'reply could not be sent');
      try {
        msg.respond(JSON.stringify(failureEnvelope(err)));
      } catch {
        // the requester's timeout takes over
      }
    }
  }

  publish(subject: string, data: unknown, headers?: BusHeaders): void {
    if (this.nc.isClosed() || this.nc.isDraining()) return;
    try {
      this.nc.publish(subject, utf8(encode(data)), { headers: toNatsHeaders(headers) });
    } catch (err) {
      this.log.warn({ err, subject }, 'publish failed');
    }
  }

  subscribe(subject: string, handler: (msg: BusMessage) => void): Subscription {
    const sub = this.nc.subscribe(subject, {
      callback: (err, msg) => {
        if (err) return;
        try {
          handler({ subject, data: decode(msg), headers: fromNatsHeaders(msg) });
        } catch (e) {
          this.log.warn({ err: e, subject }, 'message handler failed');
        }
      },
    });
    return { drain: async () => void (await sub.drain().catch(() => undefined)) };
  }

  async close(): Promise<void> {
    await this.durable.stopAll();
    await Promise.allSettled([...this.subs].map((s) => s.drain()));
    // Replies to the requests just finished go out before the connection drains.
    this.outbox.flush();
    if (!this.nc.isClosed()) await this.nc.drain().catch(() => this.nc.close());
  }
}
