// How a process takes deliveries from the outbox for a lease before it sends them, so that no two
// processes send the same attempt. Two adapters, one contract (test/alerts.takes.contract.test.ts):
// - LeasedTakes: the outbox's own lease in the store (`sending`, `leaseUntil`, attempts counted at
//   the take). The single-process run without NATS.
// - ClaimedTakes: each attempt claimed in NATS key-value (src/alerts/claims.ts); the store is not
//   written. On the embedded FerretDB every update of the outbox goes through the whole collection
//   behind the ingest's inserts, and the take was most of the time between queueing and the mail.
import type { AttemptClaims } from './claims.js';
import { LEASE_MS, type AlertOutbox, type DeliveryRecord, type NewDelivery } from './outbox.js';
import type { QueuedDelivery } from './queue.js';

/** On NATS, how long the pass over the outbox leaves a due delivery to the work queue. */
export const QUEUE_GRACE_MS = 60_000;
/** How old a delivery handed over whole may be for the sender to claim it without reading it:
 *  well inside QUEUE_GRACE_MS, so no pass can have claimed its first attempt before. */
const FRESH_MS = 30_000;
/** How soon a delivery whose attempt another process holds is asked about again. */
const HELD_ELSEWHERE_RETRY_MS = 10_000;
/** Deliveries one call of ClaimedTakes.takeDue claims at most: sent one after another, they stay well inside their lease. */
const DUE_BATCH = 32;

export interface Taken {
  /** Taken now, each counted as its next attempt, held until `leaseUntil`. */
  taken: DeliveryRecord[];
  /** The rest as they are (not due, sent, dead), or, when another process holds one, `sending`
   *  with `leaseUntil` when to ask again. */
  others: DeliveryRecord[];
}

export interface DeliveryTakes {
  /** Take these deliveries, as the work queue handed them over. */
  takeMany(items: readonly QueuedDelivery[], now: Date): Promise<Taken>;
  /** Take some of the deliveries due (the pass over the outbox); none when nothing more is. */
  takeDue(now: Date, limit: number): Promise<DeliveryRecord[]>;
}

export class LeasedTakes implements DeliveryTakes {
  constructor(private readonly outbox: AlertOutbox) {}

  takeMany(items: readonly QueuedDelivery[], now: Date): Promise<Taken> {
    return this.outbox.takeMany(
      items.map((i) => i.id),
      now,
    );
  }

  /** One at a time: the pass sends each before it takes the next, so no lease runs out while it waits. */
  async takeDue(now: Date, limit: number): Promise<DeliveryRecord[]> {
    const d = limit > 0 ? await this.outbox.take(now) : null;
    return d ? [d] : [];
  }
}

export class ClaimedTakes implements DeliveryTakes {
  constructor(
    private readonly outbox: AlertOutbox,
    private readonly claims: AttemptClaims,
  ) {}

  /**
   * A delivery handed over whole, on its first delivery and moments after its fan-out, is claimed
   * as it came (nothing else can have taken its first attempt yet: the pass leaves a delivery to
   * the queue for QUEUE_GRACE_MS), so its take reads nothing from the store; any other is read first.
   */
  async takeMany(items: readonly QueuedDelivery[], now: Date): Promise<Taken> {
    const fresh = (f: NewDelivery | undefined): f is NewDelivery => !!f && now.getTime() - f.createdAt.getTime() < FRESH_MS && f.notBefore <= now;
    const whole = new Map(
      items.flatMap((i) => (fresh(i.fresh) && i.fresh._id === i.id ? [[i.id, { ...i.fresh, state: 'pending' as const, attempts: 0 }]] : [])),
    );
    const rows = [...whole.values(), ...(await this.outbox.rowsOf(items.map((i) => i.id).filter((id) => !whole.has(id))))];
    return this.claim(rows, now, now);
  }

  /** What the work queue left: deliveries due for QUEUE_GRACE_MS at least. */
  async takeDue(now: Date, limit: number): Promise<DeliveryRecord[]> {
    const dueBy = new Date(now.getTime() - QUEUE_GRACE_MS);
    return (await this.claim(await this.outbox.due(now, dueBy, Math.min(limit, DUE_BATCH)), now, dueBy)).taken;
  }

  /** The rows due by `dueBy`, or whose store lease ran out, each claimed for its next attempt. One
   *  held elsewhere (perhaps by a sender that died, whose lease ends at a time not known here) is
   *  asked about again in HELD_ELSEWHERE_RETRY_MS. */
  private async claim(rows: readonly DeliveryRecord[], now: Date, dueBy: Date): Promise<Taken> {
    const due = (d: DeliveryRecord) => (d.state === 'pending' && d.notBefore <= dueBy) || (d.state === 'sending' && !!d.leaseUntil && d.leaseUntil < now);
    const held = await this.claims.claim(rows.filter(due).map((d) => ({ id: d._id, attempt: d.attempts })));
    const leaseUntil = new Date(now.getTime() + LEASE_MS);
    const askAgain = new Date(now.getTime() + HELD_ELSEWHERE_RETRY_MS);
    return {
      taken: rows.filter((d) => held.has(d._id)).map((d) => ({ ...d, state: 'sending' as const, attempts: d.attempts + 1, leaseUntil })),
      others: rows.filter((d) => !held.has(d._id)).map((d) => (due(d) ? { ...d, state: 'sending' as const, leaseUntil: askAgain } : d)),
    };
  }
}
