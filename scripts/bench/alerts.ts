// Part (alerts): how fast an alert goes out over NATS. Partner notes that mention a fall, from each
// note's 202 to the moment a local SMTP server accepts the alert mail: the path through JetStream,
// the worker that stores the note, the announcement on the bus, the read of new records, the
// delivery work queue and the SMTP relay. First one note at a time, then within the ingest part's
// partner load (the same connections and bounds), one event in BENCH_ALERTS_EVERY a note that
// should alert.
import { randomBytes } from 'node:crypto';
import { connect } from '@nats-io/transport-node';
import { subjects } from '../../src/bus/subjects.js';
import { signBody } from '../../src/partner/signature.js';
import { startSmtpSink, type SmtpSink } from '../../test/harness/smtpSink.js';
import { ingestBounds } from './ingest.js';
import type { Infra } from './infra.js';
import { KNOBS } from './knobs.js';
import { problems, runLoad, type Measured } from './load.js';
import { startPartnerDeployment, type PartnerDeployment } from './procs.js';
import { finding, fixed, heading, note, progress, rate, table } from './report.js';

/** Longer than this, a note counts as lost (the minute run would have sent it by then). */
const WAIT_MS = 90_000;

const percentile = (sorted: number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
/** Now, on the epoch's scale with sub-millisecond precision: comparable with the load generator's instants. */
const instant = () => performance.timeOrigin + performance.now();

/** The mails the SMTP server accepted, each with the instant it was seen (polled every millisecond) and the alert's event it is about. */
function watchMails(smtp: SmtpSink) {
  const seen: { at: number; event: string | undefined }[] = [];
  const waiters = new Set<() => void>();
  const timer = setInterval(() => {
    if (smtp.received.length === seen.length) return;
    const at = instant();
    while (seen.length < smtp.received.length) {
      // The delivery's Message-ID is made from its key: flagged_note:<event id>|<member>|email.
      seen.push({ at, event: /^Message-ID:\s*<flagged_note\.(evt_[A-Za-z0-9]+)\./im.exec(smtp.received[seen.length]!.data)?.[1] });
    }
    for (const wake of waiters) wake();
  }, 1);
  /** Resolves true once `done()` holds, false after `ms`. */
  const until = (done: () => boolean, ms = WAIT_MS) =>
    new Promise<boolean>((resolve) => {
      if (done()) return resolve(true);
      const check = () => {
        if (!done()) return;
        clearTimeout(timeout);
        waiters.delete(check);
        resolve(true);
      };
      const timeout = setTimeout(() => (waiters.delete(check), resolve(false)), ms);
      waiters.add(check);
    });
  return { seen, until, stop: () => clearInterval(timer) };
}

type Mails = ReturnType<typeof watchMails>;

interface Timed {
  latencies: number[];
  lost: number;
  /** From each mailed note's 202 to its delivery's creation (the record stored, announced, read, decided and fanned out). */
  queued?: number[];
  /** From each mailed note's 202 to the announcement of its record stored (the ingest path: gateway, JetStream, the consumer's write). */
  stored?: number[];
  /** From that announcement to the delivery's creation (the decision from the announced record and the fan-out). */
  storedToQueued?: number[];
}

/** Watches the deployment's announcements of stored care records (`cc.records.stored` on its
 *  namespace) for the notes of one load, keeping the instant each was first announced: the moment
 *  the consumer's write returned, give or take the bus, with no read of the store (a poll of
 *  `care_events` is a scan of its own on FerretDB, and loaded the very path it timed). */
async function watchStored(d: PartnerDeployment, tag: string) {
  const seenAt = new Map<string, number>();
  const nc = await connect({ servers: d.env.NATS_URL! });
  const sub = nc.subscribe(subjects(d.env.BUS_NAMESPACE ?? '').recordsStored, {
    callback: (err, m) => {
      if (err) return;
      const at = instant();
      const records = (m.json() as { records?: { sourceEventId?: string }[] }).records ?? [];
      for (const r of records) if (r.sourceEventId?.startsWith(`${tag}-`) && !seenAt.has(r.sourceEventId)) seenAt.set(r.sourceEventId, at);
    },
  });
  await nc.flush();
  return {
    seenAt,
    stop: async () => {
      sub.unsubscribe();
      await nc.drain();
    },
  };
}

/** `NOTES` notes, one at a time, each timed from its 202 to its mail. */
async function oneAtATime(d: PartnerDeployment, mails: Mails): Promise<Timed> {
  const latencies: number[] = [];
  let lost = 0;
  for (let n = 0; n < KNOBS.alertNotes; n++) {
    const body = JSON.stringify({
      institution_id: d.institutionId,
      subject_ref: 'client-bench',
      event_type: 'note_added',
      occurred_at: new Date().toISOString(),
      payload: { caregiver_id: 'cg-1', note_text: `Round ${n}: she fell in the hallway.` },
      source_event_id: `alert-bench-${n}`,
    });
    const before = mails.seen.length;
    const res = await fetch(`${d.service.urls.pipe}/pipe/v1/events`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-pipe-institution': d.institutionId,
        'x-pipe-timestamp': new Date().toISOString(),
        'x-pipe-signature': signBody(d.secret, body),
      },
      body,
    });
    const at202 = instant();
    if (res.status !== 202) throw new Error(`note ${n} answered ${res.status}: ${await res.text()}`);
    if (await mails.until(() => mails.seen.length > before)) latencies.push(mails.seen[before]!.at - at202);
    else lost++;
  }
  return { latencies, lost };
}

/** The ingest part's partner load with alerting notes among the events, each note timed from its 202 to its mail. */
async function atIngestRate(infra: Infra, d: PartnerDeployment, mails: Mails): Promise<Timed & { load: Measured }> {
  // One member gets falls right away: one mail per note.
  const mailsFor = (notes: number) => {
    const from = mails.seen.length;
    return mails.until(() => mails.seen.length - from >= notes);
  };
  let measuredFrom = mails.seen.length;
  const tag = `alerts-${randomBytes(4).toString('hex')}`;
  const storedWatch = await watchStored(d, tag);
  const load = await runLoad(
    {
      kind: 'ingest',
      url: `${d.service.urls.pipe}/pipe/v1/events`,
      institutionId: d.institutionId,
      secret: d.secret,
      subjectRef: 'client-bench',
      tag,
      alertEvery: KNOBS.alertEvery,
      ...ingestBounds(),
    },
    [d.service, infra.nats, infra.store],
    {
      // Measure from a drained path: every warm-up alert mailed first.
      afterWarmup: async (warm) => {
        const left = measuredFrom + (warm.alerting?.length ?? 0) - mails.seen.length;
        if (left > 0 && !(await mailsFor(left))) progress(`alerts: warm-up alerts not all mailed within ${WAIT_MS / 1000} s; measuring anyway`);
        measuredFrom = mails.seen.length;
      },
      storeCommands: infra.storeCommands,
    },
  );
  const notes = load.alerting ?? [];
  const left = measuredFrom + notes.length - mails.seen.length;
  if (left > 0) await mailsFor(left);
  await storedWatch.stop();
  // The mail names the stored event (its Message-ID is made from the decision's key); the store maps the partner's id to it.
  const stored = await d.db
    .collection<{ _id: string; sourceEventId?: string }>('care_events')
    .find({ lovedOneId: d.family.lovedOneId, sourceEventId: { $in: notes.map((n) => n.sourceEventId) } }, { projection: { sourceEventId: 1 } })
    .toArray();
  const eventOf = new Map(stored.map((e) => [e.sourceEventId, e._id]));
  const mailedAt = new Map<string, number>();
  for (const m of mails.seen) if (m.event !== undefined && !mailedAt.has(m.event)) mailedAt.set(m.event, m.at);
  const mailedNotes = notes.flatMap((n) => {
    const event = eventOf.get(n.sourceEventId);
    const at = mailedAt.get(event ?? '');
    return event === undefined || at === undefined ? [] : [{ ...n, event, mailed: at }];
  });
  // Where the time goes: a delivery is created when its alert is fanned out, after the read of new records decided it.
  const deliveries = await d.db
    .collection<{ _id: string; decisionId: string; createdAt: Date }>('alert_deliveries')
    .find({ decisionId: { $in: mailedNotes.map((n) => `flagged_note:${n.event}`) } }, { projection: { decisionId: 1, createdAt: 1 } })
    .toArray();
  const queuedAt = new Map(deliveries.map((x) => [x.decisionId, x.createdAt.getTime()]));
  const split = mailedNotes.flatMap((n) => {
    const queued = queuedAt.get(`flagged_note:${n.event}`);
    const stored = storedWatch.seenAt.get(n.sourceEventId);
    return queued === undefined || stored === undefined ? [] : [{ stored: stored - n.at, storedToQueued: queued - stored }];
  });
  return {
    stored: split.map((x) => x.stored),
    storedToQueued: split.map((x) => x.storedToQueued),
    latencies: mailedNotes.map((n) => n.mailed - n.at),
    lost: notes.length - mailedNotes.length,
    queued: mailedNotes.flatMap((n) => {
      const at = queuedAt.get(`flagged_note:${n.event}`);
      return at === undefined ? [] : [at - n.at];
    }),
    load,
  };
}

const row = (what: string, t: Timed, eventsPerSecond: string, unexpected = '') => {
  const sorted = [...t.latencies].sort((a, b) => a - b);
  const p50 = sorted.length ? percentile(sorted, 50) : NaN;
  const p99 = sorted.length ? percentile(sorted, 99) : NaN;
  const split = (xs: number[] | undefined) => {
    const s = [...(xs ?? [])].sort((a, b) => a - b);
    return s.length ? `${fixed(percentile(s, 50), 0)} / ${fixed(percentile(s, 99), 0)}` : '';
  };
  return {
    p50,
    p99,
    cells: [
      what,
      sorted.length,
      eventsPerSecond,
      fixed(p50, 0),
      fixed(p99, 0),
      fixed(sorted.at(-1), 0),
      split(t.stored),
      split(t.storedToQueued),
      split(t.queued),
      t.lost,
      unexpected,
    ],
  };
};

export async function benchAlerts(infra: Infra): Promise<void> {
  heading('(alerts) A partner note that should alert: 202 → mail accepted by the SMTP server, over NATS');
  const smtp = await startSmtpSink();
  const mails = watchMails(smtp);
  let d: PartnerDeployment | undefined;
  try {
    progress('alerts: starting carecircle (NATS), a family and a partner agency…');
    d = await startPartnerDeployment(infra.database('alerts'), {
      NATS_URL: infra.natsUrl,
      BUS_NAMESPACE: `bench${randomBytes(4).toString('hex')}`,
      SMTP_URL: smtp.url,
    });
    const single = row('NATS: one note at a time', await oneAtATime(d, mails), '');
    progress(`alerts one at a time: p50 ${fixed(single.p50, 0)} ms, p99 ${fixed(single.p99, 0)} ms`);
    const bounds = ingestBounds();
    progress(`alerts: the ingest load (${bounds.connections} connections), one event in ${KNOBS.alertEvery} a note that should alert…`);
    const loaded = await atIngestRate(infra, d, mails);
    const underLoad = row(
      `NATS: within the ingest load (c=${bounds.connections}, one event in ${KNOBS.alertEvery} a fall note)`,
      loaded,
      rate(loaded.load.perSecond),
      problems(loaded.load),
    );
    progress(
      `alerts at the ingest rate: ${rate(loaded.load.perSecond)} events/s, p50 ${fixed(underLoad.p50, 0)} ms, p99 ${fixed(underLoad.p99, 0)} ms; p50 / p99 202 → stored ${underLoad.cells[6]}, stored → queued ${underLoad.cells[7]}, 202 → queued ${underLoad.cells[8]}`,
    );
    table(
      [
        'partner note mentioning a fall, 202 → alert mail accepted by SMTP',
        'notes',
        'events/s',
        'p50 ms',
        'p99 ms',
        'max ms',
        '202 → stored, p50 / p99 ms',
        'stored → queued, p50 / p99 ms',
        '202 → queued, p50 / p99 ms',
        'lost',
        'unexpected',
      ],
      [single.cells, underLoad.cells],
    );
    note(
      `One carecircle process (all roles) on NATS; each note to one family member who gets falls right away; the SMTP server a local smtp-server in the bench process ` +
        `(its acceptance polled every millisecond). One at a time: ${KNOBS.alertNotes} notes (BENCH_ALERTS). Within the load: the ingest part's partner load ` +
        `(${bounds.connections} connections, up to ${bounds.maxRequests} events or ${bounds.maxSeconds} s after ${bounds.warmup} warm-up events, whose alerts are mailed before measuring), ` +
        `one event in ${KNOBS.alertEvery} (BENCH_ALERTS_EVERY) a note that should alert, the rest visits; each note timed from its own 202 to its own mail (matched by the mail's Message-ID). ` +
        `"202 → delivery queued" ends at the delivery's createdAt (the engine's clock when it fanned the alert out): the ingest path, the announcement, the read of new records and the decision; the rest is the delivery work queue and the relay. ` +
        `"202 → stored" ends when the bench, subscribed to the deployment's announcements of stored care records on NATS, receives the note's record (the consumer's write returned, plus the bus); "stored → queued" runs from there to the delivery's createdAt (the decision from the announced record and the fan-out). ` +
        `A note whose mail does not come within ${WAIT_MS / 1000} s counts as lost.`,
    );
    finding({
      part: 'alerts',
      what: `202 → SMTP accepted, p99, at the ingest rate (NATS, ${rate(loaded.load.perSecond)} events/s)`,
      value: `${fixed(underLoad.p99, 0)} ms`,
      target: '≤ 2000 ms',
      meets: loaded.lost === 0 && underLoad.p99 <= 2000,
    });
    finding({ part: 'alerts', what: '202 → SMTP accepted, p99, one note at a time (NATS)', value: `${fixed(single.p99, 0)} ms` });
  } finally {
    mails.stop();
    await d?.stop();
    await smtp.close();
  }
}
