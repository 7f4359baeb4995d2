// Workers as a NATS service (the micro protocol): one service instance per process, one endpoint
// per served subject in its queue group, so `nats micro ls|info|stats` shows every worker process
// with its endpoints, request counts, latencies and errors.
import { ServiceErrorCodeHeader, ServiceErrorHeader, Svcm, type Service } from '@nats-io/services';
import { headers as natsHeaders, type Msg, type MsgHdrs, type NatsConnection } from '@nats-io/transport-node';
import { VERSION } from '../version.js';

export const SERVICE_NAME = 'carecircle';

/** What the micro library keeps per endpoint; it times only a handler's synchronous part. */
interface EndpointCounters {
  num_requests: number;
  processing_time: number;
  average_processing_time: number;
  countError(err: Error): void;
}

/** One answer's outcome, told back so the endpoint's figures cover the whole asynchronous handling. */
export interface Outcome {
  failed?: string;
}

/** What a handler needs of a request, as a plain subscription or a service endpoint delivers it. */
export type Incoming = Pick<Msg, 'data' | 'json'> & {
  headers?: MsgHdrs | undefined;
  reply?: string | undefined;
  respond(data: string | Uint8Array, opts?: { headers?: MsgHdrs }): boolean;
};

export type EndpointHandler = (msg: Incoming, errorHeaders: (failure: string) => MsgHdrs) => Promise<Outcome>;

export class WorkerService {
  private constructor(private readonly service: Service) {}

  /** The library's start subscribes synchronously; its promise settles at once. */
  static async start(nc: NatsConnection): Promise<WorkerService> {
    // The services package pins its own nats-core; the connection and messages are the same protocol.
    const service = await new Svcm(nc as unknown as ConstructorParameters<typeof Svcm>[0]).add({
      name: SERVICE_NAME,
      version: VERSION,
      description: 'carecircle worker: serves the HTTP requests gateways forward, one endpoint per slice',
      queue: 'workers',
      metadata: { pid: String(process.pid) },
    });
    return new WorkerService(service);
  }

  /** Subscribed before it returns, as a plain subscription would be. */
  addEndpoint(subject: string, queue: string, handler: EndpointHandler): void {
    let counters: EndpointCounters | undefined;
    this.service.addEndpoint(endpointName(subject), {
      subject,
      queue,
      handler: (err, msg) => {
        if (err) return;
        const started = performance.now();
        void handler(msg as unknown as Incoming, errorHeaders).then((outcome) => {
          counters ??= countersOf(this.service, subject);
          if (!counters) return;
          // The library counted the request and its synchronous part; add the time it awaited.
          counters.processing_time += Math.round((performance.now() - started) * 1e6);
          counters.average_processing_time = Math.round(counters.processing_time / Math.max(1, counters.num_requests));
          if (outcome.failed) counters.countError(new Error(outcome.failed));
        });
      },
    });
  }

  async stop(): Promise<void> {
    await this.service.stop().catch(() => undefined);
  }
}

/** The slice's name for `cc.http.<slice>` subjects; other subjects keep their last token. */
export function endpointName(subject: string): string {
  return (subject.split('.').pop() ?? subject).replace(/[^A-Za-z0-9_-]/g, '_') || 'endpoint';
}

/** The micro protocol's error headers on a failed reply, so `nats req` and the tooling name the failure. */
export function errorHeaders(failure: string): MsgHdrs {
  const h = natsHeaders();
  h.set(ServiceErrorCodeHeader, '500');
  h.set(ServiceErrorHeader, failure.slice(0, 200));
  return h;
}

function countersOf(service: Service, subject: string): EndpointCounters | undefined {
  const handlers = (service as unknown as { handlers?: { subject: string; stats?: EndpointCounters }[] }).handlers;
  return handlers?.find((h) => h.subject === subject)?.stats;
}
