// Decisions and deliveries. An alert is decided once per (record, rule): its key is inserted, and a
// second insert of the key is a duplicate, so two sweeps or two processes never decide it twice.
// Each decision becomes one delivery per member and channel, inserted under its own key, kept in
// the store until sent: a restart finds what was pending and sends it, and never sends again what
// was marked sent. A delivery taken by a process that then died is taken again once its lease runs
// out. Failures are retried with backoff, then held as dead letters for the operator.
import { randomUUID } from 'node:crypto';
import type { Collection, Db, IndexDescription } from 'mongodb';
import { insertReporting } from '../store/timeline/port.js';
import type { AlertKind, ChannelName } from './kinds.js';
import { alertMetrics } from './metrics.js';
import { ALERT_PREFERENCES } from './preferences.js';
import { ALERT_RANGES } from './ranges.js';
import type { Candidate } from './rules.js';

export const ALERT_DECISIONS = 'alert_decisions';
export const ALERT_DELIVERIES = 'alert_deliveries';
export const ALERT_STATE = 'alert_state';

export const OUTBOX_INDEXES: Record<string, IndexDescription[]> = {
  [ALERT_DECISIONS]: [
    { key: { fannedOut: 1 }, name: 'by_fanned_out' },
    { key: { lovedOneId: 1, decidedAt: -1 }, name: 'by_loved_one' },
  ],
  [ALERT_DELIVERIES]: [
    { key: { state: 1, notBefore: 1 }, name: 'by_state_due' },
    { key: { lovedOneId: 1, createdAt: -1 }, name: 'by_loved_one' },
  ],
};

/** Attempts at most before a delivery becomes a dead letter; about 1, 2, 4 and 8 minutes apart. */
export const MAX_ATTEMPTS = 5;
/** How long a process may hold a delivery it took before another may take it (a crash mid-send). */
export const LEASE_MS = 2 * 60_000;
export const backoffMs = (attempts: number): number => Math.min(60_000 * 2 ** Math.max(0, attempts - 1), 60 * 60_000);

export interface DecisionRecord extends Omit<Candidate, 'key'> {
  _id: string;
  decidedAt: Date;
  /** Set once every member's delivery is inserted: a decision left unset is fanned out again. */
  fannedOut: boolean;
}

export interface OutgoingMessage {
  to: string;
  subject: string;
  text: string;
  html: string;
  headers: Record<string, string>;
}

/** `withdrawn`: the member turned the kind off while it waited (quiet hours, a retry). */
export type DeliveryState = 'pending' | 'sending' | 'sent' | 'dead' | 'withdrawn';

export interface DeliveryRecord {
  _id: string; // `${decisionId}|${uid}|${channel}`: one per member and channel
  decisionId: string;
  uid: string;
  lovedOneId: string;
  kind: AlertKind | 'digest';
  channel: ChannelName;
  /** Absent once sent. */
  message?: OutgoingMessage;
  /** The same alert for a channel that is not mail (web push): title, body, the app URL, a tag per kind. */
  note?: { title: string; body: string; url: string; tag: string };
  state: DeliveryState;
  attempts: number;
  /** Not sent before this instant: quiet hours, or a retry's backoff. */
  notBefore: Date;
  leaseUntil?: Date;
  /** Who took it last (`takeMany`): a take that lost a race to another process finds someone else's. */
  lease?: string;
  lastError?: string;
  sentAt?: Date;
  createdAt: Date;
}

/** A delivery as a fan-out makes it, before the outbox sets its state. */
export type NewDelivery = Omit<DeliveryRecord, 'state' | 'attempts'>;

/** The states of a taken delivery: `sending` under the store's lease, still `pending` under a claim
 *  held elsewhere (`AttemptClaims`). */
const TAKEN: DeliveryState[] = ['sending', 'pending'];

export class AlertOutbox {
  readonly decisions: Collection<DecisionRecord>;
  readonly deliveries: Collection<DeliveryRecord>;
  private readonly state: Collection<{ _id: string; value: Date }>;

  constructor(db: Db) {
    this.decisions = db.collection(ALERT_DECISIONS);
    this.deliveries = db.collection(ALERT_DELIVERIES);
    this.state = db.collection(ALERT_STATE);
  }

  /** `decide` for many candidates, with one unordered insert: the keys decided now (a key decided
   *  before, or given twice, is decided once). `fannedOut`: their deliveries are already queued. */
  async decideMany(candidates: readonly Candidate[], now: Date, opts: { fannedOut?: boolean } = {}): Promise<Set<string>> {
    const { stored } = await insertReporting(
      this.decisions,
      candidates.map(({ key, ...rest }) => ({ _id: key, ...rest, decidedAt: now, fannedOut: opts.fannedOut === true })),
    );
    const kindOf = new Map(candidates.map((c) => [c.key, c.kind]));
    for (const key of stored) alertMetrics.decided.inc({ kind: kindOf.get(key)! });
    return new Set(stored);
  }

  /**
   * Alert decisions whose deliveries may not all be inserted yet (a crash between the two writes).
   * Never a digest's: it is one member's mail, which the digest run composes again, not an alert
   * to fan out to everyone who wants its first kind right away.
   */
  unfanned(limit = 200): Promise<DecisionRecord[]> {
    return this.decisions
      .find({ fannedOut: false, _id: { $not: /^digest:/ } })
      .limit(limit)
      .toArray();
  }

  /** Which of these decisions were made already (`fannedOut`: and their deliveries all queued),
   *  from one read. A hint for skipping work: `decide` stays the claim. */
  async decided(keys: readonly string[], opts: { fannedOut?: true } = {}): Promise<Set<string>> {
    if (!keys.length) return new Set();
    const rows = await this.decisions.find({ _id: { $in: [...keys] }, ...(opts.fannedOut ? { fannedOut: true } : {}) }, { projection: { _id: 1 } }).toArray();
    return new Set(rows.map((r) => r._id));
  }

  /** Mark decisions fanned out, with one update (through the whole collection on the embedded
   *  store: the fan-outs of this version write their decisions fanned out instead). */
  async fannedOutMany(decisionIds: readonly string[]): Promise<void> {
    if (decisionIds.length) await this.decisions.updateMany({ _id: { $in: [...decisionIds] } }, { $set: { fannedOut: true } });
  }

  /** Insert deliveries with one unordered insert: the ids inserted now (one that exists, queued by a
   *  fan-out before, stays as it is). */
  async enqueueMany(ds: readonly NewDelivery[]): Promise<Set<string>> {
    const { stored } = await insertReporting(
      this.deliveries,
      ds.map((d) => ({ ...d, state: 'pending' as const, attempts: 0 })),
    );
    return new Set(stored);
  }

  /** Take the next delivery due, for LEASE_MS: pending and due, or taken by a process whose lease ran out. */
  take(now: Date): Promise<DeliveryRecord | null> {
    return this.deliveries.findOneAndUpdate(
      {
        $or: [
          { state: 'pending', notBefore: { $lte: now } },
          { state: 'sending', leaseUntil: { $lt: now } },
        ],
      },
      { $set: { state: 'sending', leaseUntil: new Date(now.getTime() + LEASE_MS) }, $inc: { attempts: 1 } },
      { sort: { notBefore: 1 }, returnDocument: 'after' },
    );
  }

  /** These deliveries as they are, from one read. */
  rowsOf(ids: readonly string[]): Promise<DeliveryRecord[]> {
    return ids.length ? this.deliveries.find({ _id: { $in: [...ids] } }).toArray() : Promise.resolve([]);
  }

  /** Deliveries due since `dueBy` at the latest (pending), or whose lease ran out, oldest first: what
   *  a pass over the outbox sends when something else takes them (`AttemptClaims`). */
  due(now: Date, dueBy: Date, limit: number): Promise<DeliveryRecord[]> {
    return this.deliveries
      .find({
        $or: [
          { state: 'pending', notBefore: { $lte: dueBy } },
          { state: 'sending', leaseUntil: { $lt: now } },
        ],
      })
      .sort({ notBefore: 1 })
      .limit(limit)
      .toArray();
  }

  /**
   * Take these deliveries, as `take` would each: one update marks those due as taken under a lease
   * of its own, and one read returns them all, `taken` (those carrying that lease) and the `others`
   * as they are (not due, taken by another process, sent, dead). On the embedded store each of the
   * two goes through the collection once for the whole batch, where a take and a mark for each
   * delivery went through it twice per delivery; and of two processes whose updates crossed, each
   * takes only what carries its own lease.
   */
  async takeMany(ids: readonly string[], now: Date): Promise<{ taken: DeliveryRecord[]; others: DeliveryRecord[] }> {
    if (!ids.length) return { taken: [], others: [] };
    const lease = randomUUID();
    await this.deliveries.updateMany(
      {
        _id: { $in: [...ids] },
        $or: [
          { state: 'pending', notBefore: { $lte: now } },
          { state: 'sending', leaseUntil: { $lt: now } },
        ],
      },
      { $set: { state: 'sending', leaseUntil: new Date(now.getTime() + LEASE_MS), lease }, $inc: { attempts: 1 } },
    );
    const rows = await this.deliveries.find({ _id: { $in: [...ids] } }).toArray();
    return { taken: rows.filter((d) => d.lease === lease), others: rows.filter((d) => d.lease !== lease) };
  }

  /** Mark deliveries sent, with one update. Once sent, the words (which may tell of someone's
   *  health) are not kept: only that it went. */
  async sentMany(ds: readonly DeliveryRecord[], now: Date): Promise<void> {
    if (!ds.length) return;
    await this.deliveries.updateMany(
      { _id: { $in: ds.map((d) => d._id) }, state: { $in: TAKEN } },
      { $set: { state: 'sent', sentAt: now }, $unset: { leaseUntil: '', lease: '', lastError: '', message: '', note: '' } },
    );
    for (const d of ds) alertMetrics.sent.inc({ channel: d.channel });
  }

  /** Not sent after all: the member no longer wants this kind right away. The words go too. */
  async withdraw(d: DeliveryRecord, now: Date): Promise<void> {
    await this.deliveries.updateOne(
      { _id: d._id, state: { $in: TAKEN } },
      { $set: { state: 'withdrawn', sentAt: now }, $unset: { leaseUntil: '', message: '', note: '' } },
    );
  }

  /** A failed attempt: retried after a backoff, or a dead letter after MAX_ATTEMPTS. */
  async failed(d: DeliveryRecord, error: string, now: Date): Promise<'retry' | 'dead'> {
    const dead = d.attempts >= MAX_ATTEMPTS;
    await this.deliveries.updateOne(
      { _id: d._id, state: { $in: TAKEN } },
      {
        // The attempts as the take counted them: the store's own lease counted them there, a claim
        // (`AttemptClaims`) counts them here.
        $set: {
          state: dead ? 'dead' : 'pending',
          attempts: d.attempts,
          lastError: error.slice(0, 500),
          notBefore: new Date(now.getTime() + backoffMs(d.attempts)),
        },
        $unset: { leaseUntil: '' },
      },
    );
    (dead ? alertMetrics.deadLettered : alertMetrics.failed).inc({ channel: d.channel });
    return dead ? 'dead' : 'retry';
  }

  /** Pending, failing and dead deliveries of a loved one, newest first (the operator's view). */
  unsent(lovedOneId: string, limit = 100): Promise<DeliveryRecord[]> {
    return this.deliveries
      .find({ lovedOneId, state: { $in: ['pending', 'sending', 'dead'] } })
      .sort({ createdAt: -1 })
      .limit(limit)
      .toArray();
  }

  /** Every dead letter, newest first. */
  dead(limit = 100): Promise<DeliveryRecord[]> {
    return this.deliveries.find({ state: 'dead' }).sort({ createdAt: -1 }).limit(limit).toArray();
  }

  /** A dead letter back in the queue, its attempts counted afresh; false when there was none. */
  async retry(id: string, now: Date): Promise<boolean> {
    const r = await this.deliveries.updateOne({ _id: id, state: 'dead' }, { $set: { state: 'pending', attempts: 0, notBefore: now } });
    return r.modifiedCount === 1;
  }

  /** Forget everything about loved ones that are gone and members who left: their preferences,
   *  ranges, decisions and deliveries (what is pending is not sent). The counts removed. */
  async forgetGone(db: Db, lovedOnesLeft: (ids: string[]) => Promise<Set<string>>, membersLeft: (keys: string[]) => Promise<Set<string>>): Promise<number> {
    let removed = 0;
    const collections = [this.decisions, this.deliveries, db.collection(ALERT_PREFERENCES), db.collection(ALERT_RANGES)] as Collection<{
      lovedOneId: string;
    }>[];
    const ids = new Set<string>();
    for (const c of collections) for (const id of (await c.distinct('lovedOneId')) as string[]) ids.add(id);
    const live = await lovedOnesLeft([...ids]);
    const gone = [...ids].filter((id) => !live.has(id));
    if (gone.length) for (const c of collections) removed += (await c.deleteMany({ lovedOneId: { $in: gone } })).deletedCount;
    // A member who left gets nothing more, and what was kept about them goes.
    const prefs = db.collection<{ _id: string; uid: string; lovedOneId: string; workspaceId?: string }>(ALERT_PREFERENCES);
    const pairs = await prefs.find({}, { projection: { uid: 1, lovedOneId: 1 } }).toArray();
    const stillMembers = await membersLeft(pairs.map((p) => `${p.uid}:${p.lovedOneId}`));
    const left = pairs.filter((p) => !stillMembers.has(`${p.uid}:${p.lovedOneId}`));
    if (left.length) {
      removed += (await prefs.deleteMany({ _id: { $in: left.map((p) => p._id) } })).deletedCount;
      removed += (await this.deliveries.deleteMany({ uid: { $in: [...new Set(left.map((p) => p.uid))] }, state: { $ne: 'sent' } })).deletedCount;
    }
    return removed;
  }

  async mark(name: string): Promise<Date | null> {
    return (await this.state.findOne({ _id: name }))?.value ?? null;
  }

  /** Only ever forward: a slower scan finishing after a faster one leaves the later mark. */
  async setMark(name: string, value: Date): Promise<void> {
    await this.state.updateOne({ _id: name }, { $max: { value } }, { upsert: true });
  }
}
