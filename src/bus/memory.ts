// In-process bus: the embedded default. Same semantics as NATS (queue groups, copies, timeouts).
import { BusClosedError, HandlerFailure, NoRespondersError, RequestEncodingError, RequestTimeoutError } from './errors.js';
import { decodeReply, encodeReply, failureEnvelope, openReply } from './replies.js';
import type { Bus, BusHandler, BusHeaders, BusMessage, ReplyEnvelope, RequestOptions, ServeOptions, Subscription } from './types.js';

/**
 * A member on another thread: it gets the request as the JSON text a copy would be made from and
 * answers the reply already encoded (encodedAnswer on that thread's bus). It never rejects: a
 * thread that cannot answer resolves a failure envelope instead.
 */
export type RemoteMember = (subject: string, json: string | undefined, headers: BusHeaders) => Promise<string>;

interface Member {
  handler: BusHandler;
  remote?: RemoteMember;
  options: ServeOptions;
  inflight: Set<Promise<unknown>>;
  closed: boolean;
}

/** Messages cross the bus as JSON, as they would over the network: no shared references. */
const copy = (data: unknown): unknown => (data === undefined ? undefined : JSON.parse(JSON.stringify(data)));

export class MemoryBus implements Bus {
  readonly kind = 'memory' as const;
  private readonly groups = new Map<string, Map<string, { members: Member[]; next: number }>>();
  private readonly listeners = new Map<string, Set<(msg: BusMessage) => void>>();
  private closed = false;

  ready(): boolean {
    return !this.closed;
  }

  /** Subscriptions take effect at once here. */
  async flush(): Promise<void> {}

  request(subject: string, data: unknown, options: RequestOptions): Promise<unknown> {
    if (this.closed) return Promise.reject(new BusClosedError());
    const member = this.pick(subject);
    if (!member) return Promise.reject(new NoRespondersError(subject));
    let msg: BusMessage;
    let json: string | undefined;
    try {
      // A remote member parses the text on its own thread: this one only encodes.
      if (member.remote) json = JSON.stringify(data) as string | undefined;
      msg = { subject, data: member.remote ? undefined : copy(data), headers: { ...options.headers } };
    } catch (err) {
      return Promise.reject(
        new RequestEncodingError(subject, false, `the request could not be encoded (${err instanceof Error ? err.message : String(err)})`, { cause: err }),
      );
    }
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new RequestTimeoutError(subject, options.timeoutMs)), options.timeoutMs);
      // The reply crosses as the NATS bus would send it: encoded, within the limit, failures named.
      const run = member.remote ? member.remote(subject, json, msg.headers).then(decodeReply) : this.answer(member, msg).then(decodeReply);
      member.inflight.add(run);
      run
        .then((env) => resolve(openReply(subject, env)))
        .catch(reject)
        .finally(() => {
          clearTimeout(timer);
          member.inflight.delete(run);
        });
    });
  }

  /** The member's reply to `msg`, encoded as it crosses the bus: within the limit, failures named. */
  private async answer(member: Member, msg: BusMessage): Promise<string> {
    const env = await Promise.resolve()
      .then(() => member.handler(msg))
      .then(
        (data): ReplyEnvelope => ({ ok: true, data }),
        (err: unknown) => failureEnvelope(err),
      );
    const { text, refused } = encodeReply(env, member.options.maxReplyBytes ?? Infinity);
    if (refused) member.options.onRefused?.(refused, msg.headers);
    return text;
  }

  /**
   * The encoded reply of this bus's member of `subject` to a request that arrived as JSON text
   * from another thread's RemoteMember: what request() would have decoded.
   */
  async encodedAnswer(subject: string, json: string | undefined, headers: BusHeaders): Promise<string> {
    const member = this.pick(subject);
    if (!member || this.closed) return JSON.stringify(failureEnvelope(new HandlerFailure('unavailable', `nothing serves ${subject} on this thread`)));
    let data: unknown;
    try {
      data = json === undefined ? undefined : JSON.parse(json);
    } catch (err) {
      return JSON.stringify(failureEnvelope(new HandlerFailure('rejected', 'the request could not be parsed', { cause: err })));
    }
    const msg: BusMessage = { subject, data, headers };
    const run = this.answer(member, msg);
    member.inflight.add(run);
    try {
      return await run;
    } finally {
      member.inflight.delete(run);
    }
  }

  serve(subject: string, queue: string, handler: BusHandler, options: ServeOptions = {}): Subscription {
    return this.join(subject, queue, { handler, options, inflight: new Set(), closed: false });
  }

  /** Serve a subject from another thread (RemoteMember): in the queue group like any member. */
  serveRemote(subject: string, queue: string, remote: RemoteMember): Subscription {
    const unused: BusHandler = () => Promise.reject(new Error(`${subject} is served from another thread`));
    return this.join(subject, queue, { handler: unused, remote, options: {}, inflight: new Set(), closed: false });
  }

  private join(subject: string, queue: string, member: Member): Subscription {
    let bySubject = this.groups.get(subject);
    if (!bySubject) this.groups.set(subject, (bySubject = new Map()));
    let group = bySubject.get(queue);
    if (!group) bySubject.set(queue, (group = { members: [], next: 0 }));
    group.members.push(member);
    const members = group.members;
    return {
      drain: async () => {
        member.closed = true;
        const at = members.indexOf(member);
        if (at >= 0) members.splice(at, 1);
        await Promise.allSettled([...member.inflight]);
      },
    };
  }

  publish(subject: string, data: unknown, headers: BusHeaders = {}): void {
    if (this.closed) return;
    for (const listener of this.listeners.get(subject) ?? []) {
      queueMicrotask(() => listener({ subject, data: copy(data), headers: { ...headers } }));
    }
  }

  subscribe(subject: string, handler: (msg: BusMessage) => void): Subscription {
    let set = this.listeners.get(subject);
    if (!set) this.listeners.set(subject, (set = new Set()));
    set.add(handler);
    return {
      drain: async () => {
        set.delete(handler);
        // A subject subscribed once (a reply's own subject) leaves nothing behind.
        if (!set.size && this.listeners.get(subject) === set) this.listeners.delete(subject);
      },
    };
  }

  async close(): Promise<void> {
    this.closed = true;
    const all = [...this.groups.values()].flatMap((g) => [...g.values()].flatMap((q) => q.members));
    await Promise.allSettled(all.flatMap((m) => [...m.inflight]));
    this.groups.clear();
    this.listeners.clear();
  }

  /** One member per queue group is chosen, round-robin; with several groups the first answers. */
  private pick(subject: string): Member | undefined {
    for (const group of this.groups.get(subject)?.values() ?? []) {
      if (!group.members.length) continue;
      const member = group.members[group.next % group.members.length];
      group.next = (group.next + 1) % group.members.length;
      if (member && !member.closed) return member;
    }
    return undefined;
  }
}
