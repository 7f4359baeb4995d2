// Which processes of the deployment are alive on NATS, for a change to wait for: each says hello
// when it starts (and every other answers at once), beats every HEARTBEAT_MS, and says it is gone
// when it stops; a process not heard from for MEMBER_TTL_MS is no longer counted.
import { randomUUID } from 'node:crypto';
import type { Bus, Subscription } from '../bus/types.js';
import { HEARTBEAT_MS, MEMBER_TTL_MS } from './hearing.js';

/** How long a process that just said hello gives those already running to answer. */
const INTRODUCTION_MS = 300;

export class Membership {
  /** This process's name on the member list (and in acknowledgements). */
  readonly id = randomUUID();
  private readonly members = new Map<string, number>();
  private heartbeat: NodeJS.Timeout | undefined;
  /** When this process last heard its own heartbeat: older, and revokers may have stopped waiting for it. */
  private lastEcho = Date.now();
  /** Resolves once the processes already running have had time to say they are there. */
  private introduced: Promise<void> = Promise.resolve();

  constructor(
    private readonly bus: Bus | undefined,
    /** The subject the member list is kept on. */
    private readonly subject: string,
  ) {}

  /** When this process last heard its own heartbeat (src/auth/hearing.ts judges trust by it). */
  readonly heard = (): number => this.lastEcho;

  /** Keeps the list from what every process says; the caller flushes the bus, then `join`s. */
  listen(bus: Bus): Subscription {
    return bus.subscribe(this.subject, (msg) => {
      const m = msg.data as { member?: string; hello?: boolean; gone?: boolean };
      if (typeof m?.member !== 'string') return;
      if (m.member === this.id) this.lastEcho = Date.now();
      if (m.gone) this.members.delete(m.member);
      else this.members.set(m.member, Date.now());
      // A process that just started learns of every other at once.
      if (m.hello && m.member !== this.id) this.announce();
    });
  }

  /** Says hello and starts the heartbeat. */
  join(): void {
    this.announce(true);
    this.heartbeat = setInterval(() => this.announce(), HEARTBEAT_MS).unref();
    this.introduce();
  }

  /** Back on NATS after a wait: every process is asked again to say it is there, for the next change to wait for. */
  rejoin(): Promise<void> {
    this.announce(true);
    this.introduce();
    return this.bus ? this.bus.flush() : Promise.resolve();
  }

  private introduce(): void {
    this.introduced = new Promise((resolve) => setTimeout(resolve, INTRODUCTION_MS).unref());
  }

  private announce(hello = false): void {
    this.bus?.publish(this.subject, { member: this.id, ...(hello ? { hello } : {}) });
  }

  /** The other processes heard from lately, once those already running have had time to say so. */
  async others(): Promise<Set<string>> {
    await this.introduced;
    const now = Date.now();
    const alive = new Set([...this.members].filter(([, at]) => now - at < MEMBER_TTL_MS).map(([m]) => m));
    alive.delete(this.id);
    return alive;
  }

  /** Stops the heartbeat and, if it ever joined, tells the others it is gone. */
  leave(): void {
    clearInterval(this.heartbeat);
    if (this.bus && this.bus.kind !== 'memory' && this.heartbeat) this.bus.publish(this.subject, { member: this.id, gone: true });
  }
}
