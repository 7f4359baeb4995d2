// The revocation acknowledgement protocol: after the store says a credential is revoked (or a
// record changed), the writer forgets it here, in every other service of this process on the same
// database, and over NATS in every live process, and returns once each has acknowledged (a process
// silent past ACK_TIMEOUT_MS is logged, not waited for).
import { randomUUID } from 'node:crypto';
import type { Bus, Subscription } from '../bus/types.js';
import type { Logger } from '../log.js';
import type { CredentialKind, RecordKind } from './credentialCache.js';
import type { Membership } from './membership.js';

/** Longest a revocation waits for a process that should acknowledge and does not. */
const ACK_TIMEOUT_MS = 3_000;

export type Kind = CredentialKind | RecordKind;
/** Forgets ids of a kind in this process's caches. */
export type Forget = (kind: Kind, ids: readonly string[]) => void;

interface Revoked {
  kind: Kind;
  ids: string[];
  ack: string;
}

/**
 * Every service in this process on the same database (a test may run two, or write through a
 * handle of its own) forgets at once whatever any of them changes; the in-process bus reaches no
 * other process. Several processes on one database use NATS.
 */
const inProcess = new Map<string, Set<Revocations>>();

export class Revocations {
  /** Over NATS, what the last change sent from here reached: the other processes that acknowledged
   *  it and those silent past the timeout. A command that makes one change reports it. */
  lastReach: { acknowledged: number; silent: number } | undefined;
  /** The database whose services in this process share changes. */
  private local: string | undefined;

  constructor(
    private readonly bus: Bus | undefined,
    private readonly subject: (name: string) => string,
    private readonly log: Logger | undefined,
    private readonly membership: Membership,
    private readonly forgetHere: Forget,
  ) {}

  /** Changes made through other services of this process on `database` are forgotten here too
   *  (only with a bus: without one nothing is kept); what this one changes reaches them either way. */
  joinProcess(database: string | undefined): void {
    this.local = database;
    if (!this.bus || !database) return;
    let peers = inProcess.get(database);
    if (!peers) inProcess.set(database, (peers = new Set()));
    peers.add(this);
  }

  /** Over NATS: take revocations from the other processes and acknowledge each. */
  listen(bus: Bus): Subscription {
    return bus.subscribe(this.subject('revoked'), (msg) => {
      const r = msg.data as Revoked;
      if (!Array.isArray(r?.ids) || typeof r.ack !== 'string') return;
      this.forgetHere(r.kind, r.ids.map(String));
      bus.publish(r.ack, { member: this.membership.id });
    });
  }

  /**
   * Call after the store says revoked: forgets the credentials here and in every other process, and
   * resolves once each has acknowledged (a process silent past the timeout is logged, not waited for).
   */
  revoked(kind: CredentialKind, ids: readonly string[]): Promise<void> {
    return this.everywhere(kind, ids);
  }

  /** Call after the store has changed these records: the same as a revocation, so the very next
   *  request on any process reads them again. */
  changed(kind: RecordKind, ids: readonly string[]): Promise<void> {
    return this.everywhere(kind, ids);
  }

  private async everywhere(kind: Kind, ids: readonly string[]): Promise<void> {
    if (!ids.length) return;
    this.forgetHere(kind, ids);
    for (const peer of (this.local && inProcess.get(this.local)) || []) if (peer !== this) peer.forgetHere(kind, ids);
    const bus = this.bus;
    if (!bus || bus.kind === 'memory') return;
    const waiting = await this.membership.others();
    const expected = waiting.size;
    const ack = this.subject(`ack.${randomUUID()}`);
    let done!: () => void;
    const all = new Promise<void>((resolve) => (done = resolve));
    const sub = bus.subscribe(ack, (msg) => {
      waiting.delete((msg.data as { member?: string })?.member ?? '');
      if (!waiting.size) done();
    });
    try {
      await bus.flush();
      bus.publish(this.subject('revoked'), { kind, ids: [...ids], ack } satisfies Revoked);
      if (waiting.size) {
        let timer: NodeJS.Timeout | undefined;
        const late = await Promise.race([all.then(() => false), new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(true), ACK_TIMEOUT_MS)))]);
        clearTimeout(timer);
        if (late) this.log?.warn({ kind, unacknowledged: [...waiting] }, 'a revocation was not acknowledged by every process in time');
      }
      this.lastReach = { acknowledged: expected - waiting.size, silent: waiting.size };
    } finally {
      await sub.drain();
    }
  }

  leaveProcess(): void {
    if (this.local) inProcess.get(this.local)?.delete(this);
  }
}
