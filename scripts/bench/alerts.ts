// Part (alerts): how fast an alert goes out over NATS. Partner notes that mention a fall, one at a
// time, from each note's 202 to the moment a local SMTP server accepts the alert mail: the path
// through JetStream, the worker that stores the note, the announcement on the bus, the read of new
// records, the delivery work queue and the SMTP relay.
import { randomBytes } from 'node:crypto';
import { MongoClient } from 'mongodb';
import { passThroughCredentials } from '../../src/auth/credentials.js';
import { FamilyShares } from '../../src/ingest/familyShare.js';
import { PartnerStore } from '../../src/partner/records.js';
import { parseDataKey, SecretBox } from '../../src/partner/secretBox.js';
import { signBody } from '../../src/partner/signature.js';
import { databaseName } from '../../src/store/mongo.js';
import { startSmtpSink } from '../../test/harness/smtpSink.js';
import { signUpFamily } from './family.js';
import type { Infra } from './infra.js';
import { KNOBS } from './knobs.js';
import { carecircleEnv, startCarecircle, stopAll, type Child } from './procs.js';
import { finding, fixed, heading, note, progress, table } from './report.js';

const NOTES = KNOBS.alertNotes;
/** Longer than this, a note counts as lost (the minute run would have sent it by then). */
const WAIT_MS = 90_000;

const percentile = (sorted: number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;

export async function benchAlerts(infra: Infra): Promise<void> {
  heading('(alerts) A partner note that should alert: 202 → mail accepted by the SMTP server, over NATS');
  const smtp = await startSmtpSink();
  const { env, cleanup } = await carecircleEnv(infra.database('alerts'), {
    NATS_URL: infra.natsUrl,
    BUS_NAMESPACE: `bench${randomBytes(4).toString('hex')}`,
    SMTP_URL: smtp.url,
  });
  const client = await new MongoClient(env.MONGO_URL!).connect();
  const children: Child[] = [];
  try {
    progress('alerts: starting carecircle (NATS), a family and a partner agency…');
    const service = await startCarecircle('carecircle', 'all', env);
    children.push(service);
    const db = client.db(databaseName(env.MONGO_URL!));
    const family = await signUpFamily(service.urls.app!, env);
    const credentials = passThroughCredentials(db);
    const partners = new PartnerStore(db, new SecretBox(parseDataKey(env.DATA_KEY!)), credentials);
    const { institution, secret } = await partners.create({ name: 'Bench Home Care', id: 'bench-home' });
    const shares = new FamilyShares(db, credentials);
    const { linkCode } = await shares.enable(institution._id, 'client-bench');
    await shares.link(linkCode!.code, { lovedOneId: family.lovedOneId, workspaceId: family.workspaceId, uid: family.uid });

    // Each accepted mail wakes the waiter of the note it follows.
    let wake: (() => void) | undefined;
    const accepted: number[] = [];
    const count = smtp.received.length;
    const seen = setInterval(() => {
      while (smtp.received.length - count > accepted.length) accepted.push(performance.now());
      if (accepted.length && wake) wake();
    }, 1);
    const latencies: number[] = [];
    let lost = 0;
    try {
      for (let n = 0; n < NOTES; n++) {
        const body = JSON.stringify({
          institution_id: institution._id,
          subject_ref: 'client-bench',
          event_type: 'note_added',
          occurred_at: new Date().toISOString(),
          payload: { caregiver_id: 'cg-1', note_text: `Round ${n}: she fell in the hallway.` },
          source_event_id: `alert-bench-${n}`,
        });
        const before = accepted.length;
        const res = await fetch(`${service.urls.pipe}/pipe/v1/events`, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'x-pipe-institution': institution._id,
            'x-pipe-timestamp': new Date().toISOString(),
            'x-pipe-signature': signBody(secret.value, body),
          },
          body,
        });
        const at202 = performance.now();
        if (res.status !== 202) throw new Error(`note ${n} answered ${res.status}: ${await res.text()}`);
        const mailed = await new Promise<boolean>((resolve) => {
          const timer = setTimeout(() => resolve(false), WAIT_MS);
          wake = () => {
            if (accepted.length > before) {
              clearTimeout(timer);
              resolve(true);
            }
          };
        });
        wake = undefined;
        if (mailed) latencies.push(accepted[before]! - at202);
        else lost++;
      }
    } finally {
      clearInterval(seen);
    }
    const sorted = [...latencies].sort((a, b) => a - b);
    const p50 = sorted.length ? percentile(sorted, 50) : NaN;
    const p99 = sorted.length ? percentile(sorted, 99) : NaN;
    progress(`alerts: p50 ${fixed(p50, 0)} ms, p99 ${fixed(p99, 0)} ms over ${sorted.length} notes`);
    table(
      ['path', 'notes', 'p50 ms', 'p99 ms', 'max ms', 'lost'],
      [['NATS: partner note mentioning a fall, 202 → alert mail accepted by SMTP', sorted.length, fixed(p50, 0), fixed(p99, 0), fixed(sorted.at(-1), 0), lost]],
    );
    note(
      `${NOTES} notes (BENCH_ALERTS), one at a time, each to one family member who gets falls right away; one carecircle process (all roles) on NATS, ` +
        `the SMTP server a local smtp-server in the bench process (its acceptance polled every millisecond).`,
    );
    finding({ part: 'alerts', what: '202 → SMTP accepted, p99 (NATS)', value: `${fixed(p99, 0)} ms`, target: '≤ 2000 ms', meets: lost === 0 && p99 <= 2000 });
  } finally {
    await stopAll(children);
    await client.close();
    await smtp.close();
    cleanup();
  }
}
