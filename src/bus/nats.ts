// NATS bus: the distributed engine operators scale on. Reconnects forever; drains on close.
import { connect, errors, headers as natsHeaders, type Msg, type NatsConnection } from '@nats-io/transport-node';
import type { Logger } from '../log.js';
import { BusClosedError, BusError, NoRespondersError, RemoteHandlerError, RequestTimeoutError } from './errors.js';
import { NatsDurableStreams } from './natsDurable.js';
import type { Bus, BusHandler, BusHeaders, BusMessage, ReplyEnvelope, RequestOptions, Subscription } from './types.js';

const encode = (data: unknown): string => JSON.stringify(data) ?? '';

function toNatsHeaders(h: BusHeaders | undefined) {
  const out = natsHeaders();
  for (const [k, v] of Object.entries(h ?? {})) out.set(k, v);
  return out;
}

function fromNatsHeaders(msg: Msg): BusHeaders {
  const out: BusHeaders = {};
  if (!msg.headers) return out;
  for (const [k, v] of msg.headers) if (v[0] !== undefined) out[k.toLowerCase()] = v[0];
  return out;
}

const decode = (msg: Msg): unknown => (msg.data.length ? msg.json() : undefined);

/** nats.js wraps some failures (no responders, a connection closed mid-request) in a RequestError. */
function failureOf(err: unknown, subject: string, timeoutMs: number): BusError {
  const inner = err instanceof errors.RequestError && err.cause !== undefined ? err.cause : err;
  if (inner instanceof errors.NoRespondersError) return new NoRespondersError(subject, { cause: err });
  if (inner instanceof errors.TimeoutError) return new RequestTimeoutError(subject, timeoutMs, { cause: err });
  if (inner instanceof errors.ClosedConnectionError || inner instanceof errors.DrainingConnectionError) return new BusClosedError({ cause: err });
  return new BusError(`request on ${subject} failed`, { cause: err });
}

export class NatsBus implements Bus {
  readonly kind = 'nats' as const;
  readonly durable: NatsDurableStreams;
  private readonly subs = new Set<{ drain(): Promise<void> }>();
  private connected = true;

  private constructor(
    private readonly nc: NatsConnection,
    private readonly log: Logger,
  ) {
    this.durable = new NatsDurableStreams(nc);
  }

  static async connect(servers: string, log: Logger, name = 'carecircle'): Promise<NatsBus> {
    const nc = await connect({
      servers: servers.split(',').map((s) => s.trim()),
      name: `${name}-${process.pid}`,
      maxReconnectAttempts: -1,
      reconnectTimeWait: 500,
    });
    const bus = new NatsBus(nc, log);
    void (async () => {
      for await (const s of nc.status()) {
        if (s.type === 'disconnect') bus.connected = false;
        if (s.type === 'reconnect') bus.connected = true;
        if (s.type === 'disconnect' || s.type === 'reconnect') log.warn({ nats: s.type }, `nats ${s.type}`);
      }
    })();
    return bus;
  }

  ready(): boolean {
    return this.connected && !this.nc.isClosed() && !this.nc.isDraining();
  }

  async flush(): Promise<void> {
    await this.nc.flush();
  }

  async request(subject: string, data: unknown, options: RequestOptions): Promise<unknown> {
    if (this.nc.isClosed() || this.nc.isDraining()) throw new BusClosedError();
    let reply: Msg;
    try {
      reply = await this.nc.request(subject, encode(data), {
        timeout: options.timeoutMs,
        headers: toNatsHeaders(options.headers),
      });
    } catch (err) {
      throw failureOf(err, subject, options.timeoutMs);
    }
    const env = decode(reply) as ReplyEnvelope;
    if (!env.ok) throw new RemoteHandlerError(subject, env.error);
    return env.data;
  }

  serve(subject: string, queue: string, handler: BusHandler): Subscription {
    const inflight = new Set<Promise<void>>();
    const sub = this.nc.subscribe(subject, {
      queue,
      callback: (err, msg) => {
        if (err) {
          this.log.error({ err, subject }, 'subscription error');
          return;
        }
        const message: BusMessage = { subject, data: decode(msg), headers: fromNatsHeaders(msg) };
        const run = handler(message).then(
          (data): ReplyEnvelope => ({ ok: true, data }),
          (e: unknown): ReplyEnvelope => ({ ok: false, error: e instanceof Error ? e.message : String(e) }),
        );
        const done = run.then((env) => {
          if (msg.reply && !this.nc.isClosed()) msg.respond(encode(env));
        });
        inflight.add(done);
        void done.finally(() => inflight.delete(done));
      },
    });
    const handle = {
      drain: async () => {
        this.subs.delete(handle);
        if (!sub.isClosed()) await sub.drain().catch(() => undefined);
        await Promise.allSettled([...inflight]);
      },
    };
    this.subs.add(handle);
    return handle;
  }

  publish(subject: string, data: unknown, headers?: BusHeaders): void {
    if (this.nc.isClosed() || this.nc.isDraining()) return;
    try {
      this.nc.publish(subject, encode(data), { headers: toNatsHeaders(headers) });
    } catch (err) {
      this.log.warn({ err, subject }, 'publish failed');
    }
  }

  subscribe(subject: string, handler: (msg: BusMessage) => void): Subscription {
    const sub = this.nc.subscribe(subject, {
      callback: (err, msg) => {
        if (!err) handler({ subject, data: decode(msg), headers: fromNatsHeaders(msg) });
      },
    });
    return { drain: async () => void (await sub.drain().catch(() => undefined)) };
  }

  async close(): Promise<void> {
    await this.durable.stopAll();
    await Promise.allSettled([...this.subs].map((s) => s.drain()));
    if (!this.nc.isClosed()) await this.nc.drain().catch(() => this.nc.close());
  }
}
