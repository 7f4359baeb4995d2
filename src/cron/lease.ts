// A leader lease in MongoDB: one holder at a time, taken over only after it expires. Each
// renewal or takeover is a versioned write (store/versioned.ts), so two processes never both lead.
import type { Db } from 'mongodb';
import type { Clock } from '../limits/limiter.js';
import { VersionedStore } from '../store/versioned.js';

interface Term {
  holder: string;
  expiresAt: number;
}

/** The collection of leases (the cron leader's among them). */
export const LEASES = 'leases';

export class Lease {
  private readonly terms: VersionedStore<Term>;

  constructor(
    db: Db,
    readonly name: string,
    readonly holder: string,
    private readonly ttlMs: number,
    private readonly clock: Clock = Date.now,
  ) {
    this.terms = new VersionedStore<Term>(db, LEASES);
  }

  /**
   * Take or renew the lease; true while this holder leads. Jobs that fall due at the same minute
   * ask at once: they share one write, else all but one would lose the race to their own holder.
   */
  acquire(): Promise<boolean> {
    this.asking ??= this.tryAcquire().finally(() => (this.asking = null));
    return this.asking;
  }

  private asking: Promise<boolean> | null = null;

  private async tryAcquire(): Promise<boolean> {
    const now = this.clock();
    const current = await this.terms.latest(this.name);
    if (current && current.state.holder !== this.holder && current.state.expiresAt > now) return false;
    return this.terms.tryWrite(this.name, (current?.v ?? 0) + 1, { holder: this.holder, expiresAt: now + this.ttlMs }, now);
  }

  /** Give the lease up early (on shutdown) so another process need not wait for expiry. */
  async release(): Promise<void> {
    const now = this.clock();
    const current = await this.terms.latest(this.name);
    if (current?.state.holder === this.holder) await this.terms.tryWrite(this.name, current.v + 1, { holder: '', expiresAt: 0 }, now);
  }
}
