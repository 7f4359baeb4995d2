// The daily and weekly digest mail: the counts of the period, then the weekly_care_summary's own
// record of it (one wording for the assistant's summary and the family's mail), appointments
// ahead and open tasks.
import type { Db } from 'mongodb';
import { groupOf, isDoseNotGiven } from '../family/careEventTypes.js';
import { PORTAL_COLLECTIONS, type ConnectionRecord } from '../portal/connections.js';
import type { PlansStore } from '../family/plans.js';
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
  plans: PlansStore;
  outbox: AlertOutbox;
  /** Where the loved one's portal connections are: one that needs signing in again is said in every digest until it is. */
  db: Db;
  appUrl: string;
  unsubscribe: (what: DigestPeriod) => Promise<string>;
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
  const summary = await careSummary(i.store, i.plans, i.lovedOne, i.words, since, i.now);
  const [unrecorded, openTasks, signIn] = await Promise.all([
    i.outbox.decisions.countDocuments({ lovedOneId: i.lovedOne._id, kind: 'missed_dose', unrecorded: true, at: { $gte: since, $lt: i.now } }),
    i.plans.openTasks(i.lovedOne._id, 100),
    i.db
      .collection<Pick<ConnectionRecord, '_id' | 'name' | 'status' | 'lovedOneId'>>(PORTAL_COLLECTIONS.connections)
      .find({ lovedOneId: i.lovedOne._id, status: 'needs_sign_in' }, { projection: { name: 1 } })
      .toArray(),
  ]);
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
