// The daily and weekly digest mail: the counts of the period, then the weekly_care_summary's own
// record of it (one wording for the assistant's summary and the family's mail), appointments
// ahead and open tasks.
import type { Db } from 'mongodb';
import { groupOf, isDoseNotGiven } from '../family/careEventTypes.js';
import { PORTAL_COLLECTIONS, type ConnectionRecord } from '../portal/connections.js';
import { APPOINTMENTS, TASKS, type AppointmentRecord, type TaskRecord } from '../family/plans.js';
import type { LovedOneRecord, WorkspaceStore } from '../family/records.js';
import type { ZoneWords } from '../workspace/careReader.js';
import { careSummary } from '../workspace/prompts.js';
import { composeMail } from './compose.js';
import { ALERT_KINDS, type AlertKind } from './kinds.js';
import type { AlertOutbox, OutgoingMessage } from './outbox.js';

export type DigestPeriod = 'daily' | 'weekly';
const DAYS: Record<DigestPeriod, number> = { daily: 1, weekly: 7 };

export interface DigestCounts {
  dosesGiven: number;
  dosesMissed: number;
  readings: number;
  visits: number;
  notes: number;
  mail: number;
  appointmentsAhead: number;
  openTasks: number;
}

export interface DigestInput {
  period: DigestPeriod;
  to: string;
  lovedOne: LovedOneRecord;
  /** The kinds this member gets in this digest (the unsubscribe link turns off the first). */
  kinds: AlertKind[];
  words: ZoneWords;
  now: Date;
  store: WorkspaceStore;
  /** What the pass read about every loved one it composes for (digestReads). */
  reads: DigestReads;
  appUrl: string;
  unsubscribe: (what: DigestPeriod) => Promise<string>;
}

/** The longest period a digest covers: the reads of a pass cover it, and each digest takes its own part. */
const LONGEST_MS = Math.max(...Object.values(DAYS)) * 86_400_000;

/** What the digests of one pass need besides each loved one's care record, read for all of them at
 *  once: on the embedded store a read by anything but `_id` goes through the whole collection, so a
 *  pass reads each collection once, not once per loved one. */
export interface DigestReads {
  /** Missed doses nobody recorded (their decisions' instants), from the longest period's start to now. */
  unrecorded: Map<string, Date[]>;
  /** Open and taken tasks, soonest due first, at most 100. */
  openTasks: Map<string, TaskRecord[]>;
  /** Portal connections that need someone in the family to sign in again. */
  signIn: Map<string, string[]>;
  /** Appointments from now to the longest period ahead, soonest first (careSummary's `between`). */
  appointments: Map<string, AppointmentRecord[]>;
}

/** Open tasks a digest lists at most. */
const OPEN_TASKS = 100;

const grouped = <T extends { lovedOneId: string }>(rows: T[], most = Infinity): Map<string, T[]> => {
  const by = new Map<string, T[]>();
  for (const r of rows) {
    const list = by.get(r.lovedOneId) ?? [];
    if (list.length < most) list.push(r);
    by.set(r.lovedOneId, list);
  }
  return by;
};

/** One read per collection for every loved one a pass composes digests for (see DigestReads). */
export async function digestReads(db: Db, outbox: AlertOutbox, lovedOneIds: readonly string[], now: Date): Promise<DigestReads> {
  const ids = { $in: [...lovedOneIds] };
  const [unrecorded, tasks, signIn, appointments] = await Promise.all([
    outbox.decisions
      .find(
        { lovedOneId: ids, kind: 'missed_dose', unrecorded: true, at: { $gte: new Date(now.getTime() - LONGEST_MS), $lt: now } },
        { projection: { lovedOneId: 1, at: 1 } },
      )
      .toArray(),
    db
      .collection<TaskRecord>(TASKS)
      .find({ lovedOneId: ids, state: { $in: ['open', 'taken'] } })
      .sort({ due: 1 })
      .toArray(),
    db
      .collection<Pick<ConnectionRecord, '_id' | 'name' | 'status' | 'lovedOneId'>>(PORTAL_COLLECTIONS.connections)
      .find({ lovedOneId: ids, status: 'needs_sign_in' }, { projection: { name: 1, lovedOneId: 1 } })
      .toArray(),
    db
      .collection<AppointmentRecord>(APPOINTMENTS)
      .find({ lovedOneId: ids, start: { $gte: now, $lt: new Date(now.getTime() + LONGEST_MS) } })
      .sort({ start: 1 })
      .toArray(),
  ]);
  const at = new Map<string, Date[]>();
  for (const d of unrecorded) at.set(d.lovedOneId, [...(at.get(d.lovedOneId) ?? []), d.at]);
  const names = new Map<string, string[]>();
  for (const c of signIn) names.set(c.lovedOneId, [...(names.get(c.lovedOneId) ?? []), c.name]);
  return { unrecorded: at, openTasks: grouped(tasks, OPEN_TASKS), signIn: names, appointments: grouped(appointments) };
}

/** The period's counts: doses given; doses missed or refused (as recorded, and those nobody recorded
 *  past their grace); readings; visits; notes; mail; appointments ahead; open tasks. */
export function countsLine(c: DigestCounts): string {
  return [
    `Doses given: ${c.dosesGiven}`,
    `doses missed or refused: ${c.dosesMissed}`,
    `readings: ${c.readings}`,
    `visits: ${c.visits}`,
    `notes: ${c.notes}`,
    `inbox mail: ${c.mail}`,
    `appointments ahead: ${c.appointmentsAhead}`,
    `open tasks: ${c.openTasks}`,
  ].join(', ');
}

export async function digestMail(i: DigestInput): Promise<OutgoingMessage> {
  const since = new Date(i.now.getTime() - DAYS[i.period] * 86_400_000);
  const id = i.lovedOne._id;
  // The appointments ahead as PlansStore.between gives them, from what the pass read.
  const plans = {
    between: async (_: string, from: Date, to: Date, limit = 200) =>
      (i.reads.appointments.get(id) ?? []).filter((a) => a.start >= from && a.start < to).slice(0, limit),
  };
  const summary = await careSummary(i.store, plans, i.lovedOne, i.words, since, i.now);
  const unrecorded = (i.reads.unrecorded.get(id) ?? []).filter((at) => at >= since && at < i.now).length;
  const openTasks = i.reads.openTasks.get(id) ?? [];
  const signIn = (i.reads.signIn.get(id) ?? []).map((name) => ({ name }));
  const ev = summary.events.filter((e) => !e.supersededBy);
  const counts: DigestCounts = {
    dosesGiven: ev.filter((e) => e.eventType === 'med_administered').length,
    dosesMissed: ev.filter((e) => isDoseNotGiven(e.eventType)).length + unrecorded,
    readings: ev.filter((e) => groupOf(e.eventType) === 'vitals').length,
    visits: ev.filter((e) => e.eventType === 'visit_started').length,
    notes: ev.filter((e) => groupOf(e.eventType) === 'notes').length,
    mail: ev.filter((e) => groupOf(e.eventType) === 'mail').length,
    appointmentsAhead: summary.appointments.filter((a) => a.status !== 'cancelled' && a.start > i.now).length,
    openTasks: openTasks.length,
  };
  const title = i.period === 'daily' ? 'today' : 'this week';
  return composeMail({
    to: i.to,
    subject: `${i.lovedOne.firstName}: your ${i.period} care digest`,
    paragraphs: [
      `${countsLine(counts)}.`,
      ...summary.record.split('\n\n'),
      ...(unrecorded ? [`Doses nobody recorded as given past their grace period: ${unrecorded}.`] : []),
      ...(summary.planned.trim() ? summary.planned.trim().split('\n\n') : []),
      ...signIn.map(
        (c) => `${c.name}'s portal needs someone in the family to sign in again before carecircle can read ${i.lovedOne.firstName}'s records from it.`,
      ),
      ...(openTasks.length ? [`Open tasks (${openTasks.length}): ${openTasks.map((t) => `${t.title} (due ${i.words.day(t.due)})`).join('; ')}.`] : []),
      `What ${title} brought for ${i.lovedOne.firstName}, as your alert settings ask (${i.kinds.map((k) => ALERT_KINDS[k].label.toLowerCase()).join('; ')}).`,
    ],
    link: { href: `${i.appUrl}/care/${encodeURIComponent(i.lovedOne._id)}`, text: `See ${i.lovedOne.firstName}'s care in carecircle` },
    unsubscribe: { href: await i.unsubscribe(i.period), text: `Stop this ${i.period} digest about ${i.lovedOne.firstName}` },
  });
}
