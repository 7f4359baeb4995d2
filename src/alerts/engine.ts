// The alerts at work: new care records read as they arrive (a watermark on `receivedAt`, so none
// is missed across a restart), the scheduled rules run for what did not happen, each alert decided
// once, fanned out to the members who want it right away, and the outbox sent. Run by the cron
// leader; every step is safe to run again, in any process.
import { setTimeout as sleep } from 'node:timers/promises';
import type { Db } from 'mongodb';
import type { Credentials } from '../auth/credentials.js';
import type { Config } from '../config.js';
import { CARE_EVENTS, listCareEvents } from '../family/careEvents.js';
import { dayIn, weekdayOf } from '../family/medSchedule.js';
import { MEDICATIONS, scheduledOf, type MedicationVersion } from '../family/medications.js';
import { APPOINTMENTS, TASKS, type AppointmentRecord, type TaskRecord } from '../family/plans.js';
import { WORKSPACE_COLLECTIONS, WorkspaceStore, type CareEventRecord, type LovedOneRecord, type MemberRecord, type UserRecord } from '../family/records.js';
import type { Logger } from '../log.js';
import type { Timelines } from '../store/timeline/port.js';
import { wordsIn, type ZoneWords } from '../workspace/careReader.js';
import type { Channel } from './channels.js';
import type { AttemptClaims } from './claims.js';
import type { DeliveryQueue, QueuedDelivery, Settled } from './queue.js';
import { ClaimedTakes, LeasedTakes, type DeliveryTakes } from './takes.js';
import { GroupCommit } from '../ingest/fresh.js';
import { alertMail } from './compose.js';
import { digestMail, digestReads, type DigestPeriod, type DigestReads } from './digest.js';
import { ALERT_KINDS, KIND_NAMES, type AlertKind } from './kinds.js';
import { UnsubscribeLinks } from './links.js';
import { AlertOutbox, backoffMs, LEASE_MS, type DecisionRecord, type DeliveryRecord, type NewDelivery } from './outbox.js';
import { PreferenceStore, quietUntil, type AlertPreferences } from './preferences.js';
import { RangeStore } from './ranges.js';
import { appointmentsTomorrow, missedDoses, recordRules, unclaimedTasks, type Candidate } from './rules.js';

/** Records that arrive out of order (a slow writer) are read again this far back; their decisions dedupe. */
const SCAN_OVERLAP_MS = 10 * 60_000;
/** The read on store goes back only this far: it runs back to back under load, and a record stored
 *  later than this after its `receivedAt` is read by the minute run, whose overlap is the long one. */
export const QUICK_SCAN_OVERLAP_MS = 5_000;
/** On the first run, records this old are still read. */
const FIRST_SCAN_MS = 24 * 3_600_000;
const SCAN_BATCH = 500;
/** Deliveries one run sends at most; the next run takes the rest. */
const DELIVERIES_PER_RUN = 500;
/** Marking a delivery sent stops being retried this long before its lease ends (src/alerts/outbox.ts). */
const MARK_SENT_MARGIN_MS = 30_000;
/** Digests whose decisions, and what they need besides the care record, are read at once. */
const DIGESTS_PER_CHUNK = 500;
/** Digests composed at once: each waits on a read of its care record. */
const DIGEST_CONCURRENCY = 8;

/** The family's vital-sign ranges, by loved one, as the record rules read them. */
type RangesByLovedOne = Map<string, Awaited<ReturnType<RangeStore['of']>>>;

interface DueDigest {
  lovedOne: LovedOneRecord;
  member: MemberRecord;
  period: DigestPeriod;
  kinds: AlertKind[];
  zone: string;
  key: string;
}

type WorkspaceMember = { member: MemberRecord; user: Pick<UserRecord, '_id' | 'timeZone'> | null };

export interface AlertDeps {
  config: Config;
  db: Db;
  credentials: Credentials;
  timelines: Timelines;
  log: Logger;
  clock: () => number;
  channels: readonly Channel[];
  /** On NATS: the JetStream work queue each new delivery is published to (src/alerts/queue.ts). */
  queue?: DeliveryQueue;
  /** On NATS: who sends which attempt, held in key-value instead of by a write to the outbox (src/alerts/claims.ts). */
  claims?: AttemptClaims;
}

export class AlertEngine {
  readonly outbox: AlertOutbox;
  readonly preferences: PreferenceStore;
  readonly ranges: RangeStore;
  readonly links: UnsubscribeLinks;
  private readonly store: WorkspaceStore;
  /** How deliveries are taken before they are sent: claims in NATS key-value, or the store's lease. */
  private readonly takes: DeliveryTakes;
  /** Deliveries sent and not yet marked so: whatever the sender's batches sent meanwhile, marked with one update. */
  private readonly marks = new GroupCommit<DeliveryRecord, void>(async (ds) => {
    await this.markSent(ds);
    return ds.map(() => undefined);
  }, 512);

  constructor(private readonly d: AlertDeps) {
    this.outbox = new AlertOutbox(d.db);
    this.takes = d.claims ? new ClaimedTakes(this.outbox, d.claims) : new LeasedTakes(this.outbox);
    this.preferences = new PreferenceStore(d.db);
    this.ranges = new RangeStore(d.db);
    this.links = new UnsubscribeLinks(d.db, d.config, d.clock);
    this.store = new WorkspaceStore(d.db, d.credentials, d.config.inboxDomain, d.timelines);
  }

  private now = () => new Date(this.d.clock());

  /**
   * Read the care records that arrived since the last scan and decide what they raise. Safe to run
   * in several processes at once: each decision is claimed by its insert, every scan reads from the
   * mark minus the overlap (a record another scan is still reading is read again, never skipped),
   * and the mark only moves forward, to a record a scan that read everything before it has read.
   * The minute run reads with the long overlap, so what a quick read's short one missed is read then.
   */
  async scanRecords(overlapMs = SCAN_OVERLAP_MS): Promise<{ read: number; decided: number }> {
    const now = this.now();
    const mark = (await this.outbox.mark('scan')) ?? new Date(now.getTime() - FIRST_SCAN_MS);
    let from = new Date(mark.getTime() - overlapMs);
    let read = 0;
    let decided = 0;
    let latest = mark;
    const ranges: RangesByLovedOne = new Map();
    for (;;) {
      const batch = await this.d.db
        .collection<CareEventRecord>(CARE_EVENTS)
        .find({ receivedAt: { $gte: from } })
        .sort({ receivedAt: 1, _id: 1 })
        .limit(SCAN_BATCH)
        .toArray();
      decided += await this.decideOn(batch, ranges, now);
      for (const e of batch) if (e.receivedAt > latest) latest = e.receivedAt;
      read += batch.length;
      if (batch.length < SCAN_BATCH) break;
      // Records sharing the last instant are read again: their decisions are already claimed.
      const last = batch.at(-1)!.receivedAt;
      if (last.getTime() === from.getTime()) break;
      from = last;
    }
    await this.outbox.setMark('scan', latest);
    return { read, decided };
  }

  /**
   * Decide what records just stored raise, from the records themselves (as announced on the bus):
   * no read of care events, so its cost does not grow with the collection. The scan watermark is
   * left alone: the minute run still reads everything with its long look-back, and the decision
   * keys make the second look harmless.
   */
  async decideRecords(records: readonly CareEventRecord[]): Promise<{ decided: number }> {
    return { decided: await this.decideOn(records, new Map(), this.now()) };
  }

  /** The record rules on these records, each loved one's ranges read once into `ranges`; how many alerts were decided now. */
  private async decideOn(records: readonly CareEventRecord[], ranges: RangesByLovedOne, now: Date): Promise<number> {
    for (const e of records) if (!ranges.has(e.lovedOneId)) ranges.set(e.lovedOneId, await this.ranges.of(e.lovedOneId));
    return this.decideAll(
      records.flatMap((e) => recordRules(e, ranges.get(e.lovedOneId)!)),
      now,
    );
  }

  /** The rules about what did not happen: doses past their grace, tasks nobody took, appointments tomorrow. */
  async sweepSchedules(): Promise<{ decided: number }> {
    const now = this.now();
    let decided = 0;
    const medications = await this.d.db.collection<MedicationVersion>(MEDICATIONS).find({}).sort({ medicationId: 1, version: -1 }).toArray();
    const latest = new Map<string, MedicationVersion>();
    const added = new Map<string, Date>();
    for (const v of medications) {
      if (!latest.has(v.medicationId)) latest.set(v.medicationId, v);
      added.set(v.medicationId, v.at);
    }
    const byLovedOne = new Map<string, MedicationVersion[]>();
    for (const v of latest.values()) if (v.status === 'active') byLovedOne.set(v.lovedOneId, [...(byLovedOne.get(v.lovedOneId) ?? []), v]);
    for (const [lovedOneId, meds] of byLovedOne) {
      const lovedOne = await this.lovedOne(lovedOneId);
      if (!lovedOne) continue;
      const { events } = await listCareEvents(this.d.timelines, lovedOneId, { since: new Date(now.getTime() - 3 * 86_400_000), limit: 1000 });
      // A dose that fell due before the medication was listed was never expected of anyone.
      const candidates = missedDoses(lovedOne, meds.map(scheduledOf), events, now).filter((c) => {
        const medicationId = c.key.split(':')[1]!;
        return c.at >= (added.get(medicationId) ?? now);
      });
      decided += await this.decideAll(candidates, now);
    }
    const appointments = await this.d.db
      .collection<AppointmentRecord>(APPOINTMENTS)
      .find({ status: 'scheduled', start: { $gte: now, $lt: new Date(now.getTime() + 2 * 86_400_000) } })
      .toArray();
    for (const a of appointments) {
      const lovedOne = await this.lovedOne(a.lovedOneId);
      if (lovedOne) decided += await this.decideAll(appointmentsTomorrow(lovedOne, [a], a.timeZone, now), now);
    }
    const tasks = await this.d.db
      .collection<TaskRecord>(TASKS)
      .find({ state: 'open', due: { $gte: new Date(now.getTime() - 86_400_000), $lt: new Date(now.getTime() + 86_400_000) } })
      .toArray();
    for (const t of tasks) {
      const lovedOne = await this.lovedOne(t.lovedOneId);
      if (lovedOne) decided += await this.decideAll(unclaimedTasks(lovedOne, [t], now), now);
    }
    return { decided };
  }

  private lovedOne(id: string): Promise<LovedOneRecord | null> {
    return this.d.db.collection<LovedOneRecord>(WORKSPACE_COLLECTIONS.lovedOnes).findOne({ _id: id });
  }

  /** Decide each candidate once and fan out the ones decided now; how many were. */
  async decideAll(candidates: Candidate[], now: Date): Promise<number> {
    if (!candidates.length) return 0;
    // Most candidates of a read were decided before (the look-back reads them again every minute):
    // one read finds those, where an insert refused for each made the minute run slowest under load.
    const known = await this.outbox.decided(candidates.map((c) => c.key));
    const open = [...new Map(candidates.filter((c) => !known.has(c.key)).map((c) => [c.key, c])).values()];
    if (!open.length) return 0;
    // The deliveries first, then the decisions, already marked fanned out: on the embedded store an
    // insert costs little and an update goes through the whole collection. Each delivery's key
    // makes a second fan-out of the same decision (another process, a crash before the decision
    // was written and the minute run's look-back) queue nothing twice, and the decision's key
    // still counts it once. One write each for the whole batch: each waits behind the ingest's
    // batch writes, so a burst of alerting records pays that wait a few times, not once per alert.
    await this.fanOut(open.map(({ key, ...c }) => ({ ...c, _id: key, decidedAt: now, fannedOut: false })));
    return (await this.outbox.decideMany(open, now, { fannedOut: true })).size;
  }

  /** Alert decisions whose fan-out a crash interrupted, written by an earlier version that decided
   *  before it fanned out (a digest's is redone by `queueDigests`). */
  async fanOutPending(): Promise<number> {
    const left = await this.outbox.unfanned();
    await this.fanOut(left);
    await this.outbox.fannedOutMany(left.map((d) => d._id));
    return left.length;
  }

  /**
   * One delivery per member who wants the kind right away, per channel; held past their quiet hours
   * unless urgent. The loved ones, members and preferences of every decision are read once, and the
   * deliveries inserted with one write (one that exists stays as it was).
   */
  private async fanOut(decisions: readonly DecisionRecord[]): Promise<void> {
    if (!decisions.length) return;
    const now = this.now();
    const lovedOnes = new Map(
      (
        await this.d.db
          .collection<LovedOneRecord>(WORKSPACE_COLLECTIONS.lovedOnes)
          .find({ _id: { $in: [...new Set(decisions.map((d) => d.lovedOneId))] } })
          .toArray()
      ).map((l) => [l._id, l]),
    );
    const membersBy = await this.membersOf([...new Set(decisions.filter((d) => lovedOnes.has(d.lovedOneId)).map((d) => d.workspaceId))]);
    const preferencesOf = await this.preferences.ofLovedOnes([...lovedOnes.keys()]);
    const reached = new Map<string, Promise<boolean>>();
    const reaches = (channel: Channel, uid: string) => {
      const key = `${channel.name}|${uid}`;
      let r = reached.get(key);
      if (!r) reached.set(key, (r = channel.reaches ? channel.reaches(uid) : Promise.resolve(true)));
      return r;
    };
    const deliveries: NewDelivery[] = [];
    for (const decision of decisions) {
      const lovedOne = lovedOnes.get(decision.lovedOneId);
      if (!lovedOne) continue;
      for (const { member, user } of membersBy.get(decision.workspaceId) ?? []) {
        const prefs = preferencesOf(member.uid, lovedOne._id, user?.timeZone);
        if (prefs.modes[decision.kind] !== 'now') continue;
        const notBefore = (ALERT_KINDS[decision.kind].urgent ? null : quietUntil(prefs, now)) ?? now;
        const unsubscribe = await this.links.url({ uid: member.uid, lovedOneId: lovedOne._id, kind: decision.kind });
        const message = alertMail(member.email, lovedOne.firstName, decision.kind, decision.what, this.d.config.appUrl, decision.path, unsubscribe);
        for (const channel of this.d.channels) {
          if (!(await reaches(channel, member.uid))) continue;
          deliveries.push({
            _id: `${decision._id}|${member.uid}|${channel.name}`,
            decisionId: decision._id,
            uid: member.uid,
            lovedOneId: lovedOne._id,
            kind: decision.kind,
            channel: channel.name,
            message,
            note: { title: message.subject, body: `${decision.what}.`, url: `${this.d.config.appUrl}${decision.path}`, tag: decision.kind },
            notBefore,
            createdAt: now,
          });
        }
      }
    }
    const inserted = await this.outbox.enqueueMany(deliveries);
    // Each delivery again on the work queue, inserted now or before (a fan-out a crash cut short).
    await this.publish(deliveries, inserted);
  }

  /** A workspace's members, each with the one thing of their account the alerts use: their time zone. */
  private async members(workspaceId: string): Promise<WorkspaceMember[]> {
    return (await this.membersOf([workspaceId])).get(workspaceId) ?? [];
  }

  /** The members of several workspaces, by workspace, from one read of members and one of their accounts. */
  private async membersOf(workspaceIds: readonly string[]): Promise<Map<string, WorkspaceMember[]>> {
    const members = await this.d.db
      .collection<MemberRecord>(WORKSPACE_COLLECTIONS.members)
      .find(workspaceIds.length === 1 ? { workspaceId: workspaceIds[0]! } : { workspaceId: { $in: [...workspaceIds] } })
      .toArray();
    const users = members.length
      ? await this.d.db
          .collection<UserRecord>(WORKSPACE_COLLECTIONS.users)
          .find({ _id: { $in: [...new Set(members.map((m) => m.uid))] } }, { projection: { timeZone: 1 } })
          .toArray()
      : [];
    const byUid = new Map(users.map((u) => [u._id, u]));
    const byWorkspace = new Map<string, WorkspaceMember[]>();
    for (const member of members)
      byWorkspace.set(member.workspaceId, [...(byWorkspace.get(member.workspaceId) ?? []), { member, user: byUid.get(member.uid) ?? null }]);
    return byWorkspace;
  }

  /**
   * Daily and weekly digests due now, at each member's chosen hour in their zone, once per period.
   * Members and preferences are read once for every loved one, then, a chunk of digests at a time,
   * which of them were decided before and what they need besides each care record (on the
   * embedded store a read by anything but `_id` goes through the whole collection: one read for
   * all, not one per loved one), and each chunk is decided, composed and queued together (queueChunk).
   */
  async queueDigests(): Promise<{ queued: number }> {
    const now = this.now();
    const lovedOnes = await this.d.db.collection<LovedOneRecord>(WORKSPACE_COLLECTIONS.lovedOnes).find({ sandbox: false }).toArray();
    if (!lovedOnes.length) return { queued: 0 };
    const membersBy = await this.membersOf([...new Set(lovedOnes.map((l) => l.workspaceId))]);
    const preferencesOf = await this.preferences.ofLovedOnes(lovedOnes.map((l) => l._id));
    const hours = new Map<string, Intl.DateTimeFormat>();
    const hourIn = (zone: string) => {
      let f = hours.get(zone);
      if (!f) hours.set(zone, (f = new Intl.DateTimeFormat('en-GB', { timeZone: zone, hour: '2-digit', hourCycle: 'h23' })));
      return Number(f.format(now));
    };
    const words = new Map<string, ZoneWords>();
    const due: DueDigest[] = [];
    for (const lovedOne of lovedOnes)
      for (const { member, user } of membersBy.get(lovedOne.workspaceId) ?? []) {
        const prefs = preferencesOf(member.uid, lovedOne._id, user?.timeZone);
        if (hourIn(prefs.zone) < prefs.digestHour) continue;
        const today = dayIn(prefs.zone, now);
        const periods: DigestPeriod[] = [];
        if (KIND_NAMES.some((k) => prefs.modes[k] === 'daily')) periods.push('daily');
        if (KIND_NAMES.some((k) => prefs.modes[k] === 'weekly') && weekdayOf(today) === prefs.digestDay) periods.push('weekly');
        for (const period of periods)
          due.push({
            lovedOne,
            member,
            period,
            kinds: KIND_NAMES.filter((k) => prefs.modes[k] === period),
            zone: prefs.zone,
            key: `digest:${period}:${member.uid}:${lovedOne._id}:${today}`,
          });
      }
    let queued = 0;
    for (let from = 0; from < due.length; from += DIGESTS_PER_CHUNK) {
      const chunk = due.slice(from, from + DIGESTS_PER_CHUNK);
      // After the digest hour every run finds the day's digests decided: one read, and nothing more.
      const decidedBefore = await this.outbox.decided(
        chunk.map((d) => d.key),
        { fannedOut: true },
      );
      const open = chunk.filter((d) => !decidedBefore.has(d.key));
      if (!open.length) continue;
      const reads = await digestReads(this.d.db, this.outbox, [...new Set(open.map((d) => d.lovedOne._id))], now);
      queued += await this.queueChunk(open, reads, words, now);
    }
    return { queued };
  }

  /**
   * Queue a chunk's open digests and decide them, with one write of each kind: the deliveries in one
   * insert, then the decisions in one, written already fanned out (as the alerts' fan-out does: an
   * update on the embedded store goes through the whole collection). A run that died between the
   * two leaves its digests undecided: the next run composes them again, and the deliveries' keys
   * make that queue nothing twice. How many were queued now.
   */
  private async queueChunk(open: DueDigest[], reads: DigestReads, words: Map<string, ZoneWords>, now: Date): Promise<number> {
    const channels = this.d.channels.filter((c) => c.name === 'email');
    const deliveries: NewDelivery[] = new Array(open.length);
    // A few at once: each waits on its care record's read, and the store's cores and the engine's
    // composing overlap; one after another the pass took as long as both added up.
    let next = 0;
    const lane = async () => {
      while (next < open.length) {
        const n = next++;
        deliveries[n] = await this.composeDigest(open[n]!, reads, words, now);
      }
    };
    await Promise.all(Array.from({ length: Math.min(DIGEST_CONCURRENCY, open.length) }, lane));
    const all = channels.flatMap((channel) => deliveries.map((d) => ({ ...d, _id: `${d.decisionId}|${d.uid}|${channel.name}`, channel: channel.name })));
    const inserted = await this.outbox.enqueueMany(all);
    // By id only: a digest is no alert to hurry, and its mail is long.
    await this.publish(all, new Set());
    const candidates = open.map(({ lovedOne, period, kinds, key }) => ({
      key,
      kind: kinds[0]!,
      lovedOneId: lovedOne._id,
      workspaceId: lovedOne.workspaceId,
      what: `${period} digest`,
      path: `/care/${encodeURIComponent(lovedOne._id)}`,
      at: now,
    }));
    const decided = await this.outbox.decideMany(candidates, now, { fannedOut: true });
    // Decided before and never marked (a run of an earlier version that died before queueing them):
    // queued now, so marked now.
    const left = open.filter((d) => !decided.has(d.key)).map((d) => d.key);
    if (left.length) await this.outbox.fannedOutMany(left);
    return new Set(all.filter((d) => inserted.has(d._id)).map((d) => d.decisionId)).size;
  }

  /** One digest's delivery, composed (its channel set by the caller). */
  private async composeDigest(
    { lovedOne, member, period, kinds, zone, key }: DueDigest,
    reads: DigestReads,
    words: Map<string, ZoneWords>,
    now: Date,
  ): Promise<NewDelivery> {
    let zoneWords = words.get(zone);
    if (!zoneWords) words.set(zone, (zoneWords = wordsIn(zone)));
    const message = await digestMail({
      period,
      to: member.email,
      lovedOne,
      kinds,
      words: zoneWords,
      now,
      store: this.store,
      reads,
      appUrl: this.d.config.appUrl,
      unsubscribe: (what) => this.links.url({ uid: member.uid, lovedOneId: lovedOne._id, kind: what }),
    });
    return {
      _id: `${key}|${member.uid}|email`,
      decisionId: key,
      uid: member.uid,
      lovedOneId: lovedOne._id,
      kind: 'digest',
      channel: 'email',
      message,
      notBefore: now,
      createdAt: now,
    };
  }

  /**
   * On NATS, hand each delivery to the work queue; a failed publish is sent by the next pass. A
   * delivery `inserted` by this fan-out goes whole, so that the sender need not read it back: one
   * queued before (a fan-out that a crash cut short, done again) may have been sent meanwhile, and
   * goes by its id only.
   */
  private async publish(deliveries: readonly NewDelivery[], inserted: ReadonlySet<string>): Promise<void> {
    const queue = this.d.queue;
    if (!queue) return;
    await Promise.all(
      deliveries.map((d) =>
        queue
          .publish({ id: d._id, lovedOneId: d.lovedOneId, ...(inserted.has(d._id) ? { fresh: d } : {}) })
          .catch((err: unknown) => this.d.log.warn({ err, delivery: d._id }, 'alert delivery not queued; the next pass sends it')),
      ),
    );
  }

  /**
   * Send the deliveries a work queue handed this process together: taken (src/alerts/takes.ts) while the
   * members' preferences are read (the queue's messages name each delivery's loved one), and each
   * sent through its channel. Resolves once they are sent, with, for each item in
   * order, when it is settled: sent and marked so (the marks of every batch sent meanwhile go in
   * one update, so the next batch need not wait for them), dead, or nothing left to do; or to be
   * tried again after a while.
   */
  async deliverMany(items: readonly QueuedDelivery[]): Promise<{ done: Promise<Settled> }[]> {
    const now = this.now();
    const ids = items.map((i) => i.id);
    const named = [...new Set(items.flatMap((i) => (i.lovedOneId ? [i.lovedOneId] : [])))];
    const [took, prefsOfNamed] = await Promise.all([this.takes.takeMany(items, now), this.preferences.ofLovedOnes(named)]);
    const taken = new Map(took.taken.map((d) => [d._id, d]));
    const rows = new Map(took.others.map((d) => [d._id, d]));
    // A message queued by an earlier version names no loved one: theirs are read now.
    const unnamed = [...new Set([...taken.values()].map((d) => d.lovedOneId))].filter((l) => !named.includes(l));
    const prefs = unnamed.length ? await this.preferences.ofLovedOnes([...named, ...unnamed]) : prefsOfNamed;
    const outcomes = new Map<string, Awaited<ReturnType<AlertEngine['sendOnly']>>>();
    await Promise.all([...taken.values()].map(async (d) => outcomes.set(d._id, await this.sendOnly(d, prefs(d.uid, d.lovedOneId)))));
    const sent = [...taken.values()].filter((d) => outcomes.get(d._id) === 'sent');
    const marks = this.marks.submitAll(sent);
    const marked = new Map(sent.map((d, i) => [d._id, marks[i]!]));
    return ids.map((id) => {
      const d = taken.get(id);
      const mark = marked.get(id);
      if (mark) return { done: mark.then(() => ({ settled: true }) as const) };
      if (d) return { done: Promise.resolve(outcomes.get(id) === 'retry' ? { settled: false, retryInMs: backoffMs(d.attempts) } : { settled: true }) };
      const row = rows.get(id);
      if (!row || row.state === 'sent' || row.state === 'dead' || row.state === 'withdrawn') return { done: Promise.resolve({ settled: true }) };
      // Not due yet (quiet hours, a backoff) or taken by another process: ask again then.
      const until = row.state === 'pending' ? row.notBefore.getTime() : (row.leaseUntil?.getTime() ?? now.getTime());
      return { done: Promise.resolve({ settled: false, retryInMs: Math.max(1_000, until - now.getTime()) }) };
    });
  }

  private async send(d: DeliveryRecord): Promise<'sent' | 'retry' | 'dead' | 'withdrawn'> {
    const outcome = await this.sendOnly(d, await this.preferences.of(d.uid, d.lovedOneId));
    if (outcome === 'sent') await this.markSent([d]);
    return outcome;
  }

  /** Through its channel, unless the member turned the kind off meanwhile; a failure is recorded, a
   *  success is left for the caller to mark sent. */
  private async sendOnly(d: DeliveryRecord, prefs: AlertPreferences): Promise<'sent' | 'retry' | 'dead' | 'withdrawn'> {
    const channel = this.d.channels.find((c) => c.name === d.channel);
    // A member who turned the kind off (an unsubscribe link, Settings) while it waited gets nothing.
    if (d.kind !== 'digest' && prefs.modes[d.kind] !== 'now') {
      await this.outbox.withdraw(d, this.now());
      return 'withdrawn';
    }
    try {
      if (!channel) throw new Error(`no ${d.channel} channel in this process`);
      await channel.send(d);
    } catch (err) {
      const outcome = await this.outbox.failed(d, errorText(err), this.now());
      this.d.log.warn({ delivery: d._id, attempt: d.attempts, outcome, error: errorText(err) }, 'alert delivery failed');
      return outcome;
    }
    return 'sent';
  }

  /**
   * The channel took it: a store that fails to record that now (down for a moment) is no failure
   * to send, which would send it again after the backoff. Asked again while the lease holds the
   * delivery; past that, the error is thrown and the delivery goes again once its lease runs out.
   */
  private async markSent(ds: readonly DeliveryRecord[]): Promise<void> {
    if (!ds.length) return;
    const held = Math.min(...ds.map((d) => (d.leaseUntil ? d.leaseUntil.getTime() - this.d.clock() : LEASE_MS))) - MARK_SENT_MARGIN_MS;
    const until = Date.now() + held;
    for (let wait = 250; ; wait = Math.min(wait * 2, 4_000)) {
      try {
        await this.outbox.sentMany(ds, this.now());
        return;
      } catch (err) {
        if (Date.now() + wait > until) throw err;
        this.d.log.warn({ deliveries: ds.map((d) => d._id), error: errorText(err) }, 'alert sent but not yet marked sent; asking the store again');
        await sleep(wait);
      }
    }
  }

  /** Send what is due, through each delivery's channel; a failure is retried later or dead-lettered. */
  async deliver(limit = DELIVERIES_PER_RUN): Promise<{ sent: number; failed: number; dead: number }> {
    const counts = { sent: 0, failed: 0, dead: 0 };
    for (let n = 0; n < limit;) {
      const batch = await this.takes.takeDue(this.now(), limit - n);
      if (!batch.length) break;
      n += batch.length;
      for (const d of batch) {
        const outcome = await this.send(d);
        if (outcome === 'sent') counts.sent++;
        else if (outcome === 'dead') counts.dead++;
        else if (outcome === 'retry') counts.failed++;
      }
    }
    return counts;
  }

  /** Forget loved ones removed and members who left (src/alerts/outbox.ts, forgetGone). */
  forgetGone(): Promise<number> {
    const lovedOnes = this.d.db.collection<LovedOneRecord>(WORKSPACE_COLLECTIONS.lovedOnes);
    const workspacesOf = async (ids: string[]) =>
      new Map((await lovedOnes.find({ _id: { $in: ids } }, { projection: { workspaceId: 1 } }).toArray()).map((l) => [l._id, l.workspaceId]));
    return this.outbox.forgetGone(
      this.d.db,
      async (ids) => new Set((await workspacesOf(ids)).keys()),
      async (pairs) => {
        const split = pairs.map((p) => ({ key: p, uid: p.slice(0, p.lastIndexOf(':')), lovedOneId: p.slice(p.lastIndexOf(':') + 1) }));
        const ws = await workspacesOf([...new Set(split.map((p) => p.lovedOneId))]);
        const memberIds = split.flatMap((p) => (ws.has(p.lovedOneId) ? [`${ws.get(p.lovedOneId)}:${p.uid}`] : []));
        const found = new Set(
          (
            await this.d.db
              .collection<MemberRecord>(WORKSPACE_COLLECTIONS.members)
              .find({ _id: { $in: memberIds } }, { projection: { _id: 1 } })
              .toArray()
          ).map((m) => m._id),
        );
        return new Set(split.filter((p) => found.has(`${ws.get(p.lovedOneId)}:${p.uid}`)).map((p) => p.key));
      },
    );
  }

  /** Let go of the channels' connections (the SMTP pool), once nothing is sent any more. */
  close(): Promise<void> {
    for (const c of this.d.channels) c.close?.();
    return Promise.resolve();
  }

  /** One run of the whole cycle: what a cron tick does. */
  async run(): Promise<Record<string, number>> {
    const forgotten = await this.forgetGone();
    const scanned = await this.scanRecords();
    const swept = await this.sweepSchedules();
    const refanned = await this.fanOutPending();
    const digests = await this.queueDigests();
    const sent = await this.deliver();
    return { read: scanned.read, decided: scanned.decided + swept.decided, refanned, digests: digests.queued, forgotten, ...sent };
  }
}

const errorText = (err: unknown): string => {
  const e = err as { responseCode?: unknown; code?: unknown; name?: unknown; message?: unknown };
  const parts = [
    typeof e.name === 'string' ? e.name : 'Error',
    typeof e.code === 'string' ? e.code : '',
    typeof e.responseCode === 'number' ? `SMTP ${e.responseCode}` : '',
  ];
  // The message of our own "no channel" error is safe; an SMTP server's text may quote the address.
  if (!e.responseCode && !e.code && typeof e.message === 'string' && e.message.startsWith('no ')) parts.push(e.message);
  return parts.filter(Boolean).join(' ');
};
