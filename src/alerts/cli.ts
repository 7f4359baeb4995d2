// `carecircle alerts …`: the operator's view of the alert outbox: a loved one's deliveries not yet
// sent (pending, retrying or dead), every dead letter, one put back in the queue, and the local
// outbox where an embedded run without SMTP_URL keeps its mail.
import { parseArgs } from 'node:util';
import { pino } from 'pino';
import type { Config } from '../config.js';
import { WORKSPACE_COLLECTIONS, type LovedOneRecord } from '../family/records.js';
import { REDACT_PATHS } from '../log.js';
import { openPartnerStore } from '../partner/cli.js';
import { LOCAL_OUTBOX, type LocalMail } from './channels.js';
import { AlertOutbox, type DeliveryRecord } from './outbox.js';

export const ALERTS_USAGE = `usage:
  carecircle alerts <loved one>                 deliveries not yet sent for a loved one (its id, or its name when one matches)
  carecircle alerts dead [--limit <n>]          deliveries given up after every retry failed (dead letters), newest first
  carecircle alerts retry <delivery_id>         put a dead letter back in the queue, its attempts counted afresh
  carecircle alerts outbox [--limit <n>]        mail kept on this machine when SMTP_URL is empty, newest first
Add --json for machine-readable output. Connects like the service: MONGO_URL; without it, to the
store of the carecircle running on DATA_DIR (npm start).`;

const row = (d: DeliveryRecord) => ({
  delivery_id: d._id,
  state: d.state === 'pending' && d.lastError ? 'failed' : d.state,
  kind: d.kind,
  channel: d.channel,
  attempts: d.attempts,
  not_before: d.notBefore.toISOString(),
  created_at: d.createdAt.toISOString(),
  ...(d.lastError ? { last_error: d.lastError } : {}),
});

/** Run one `alerts` subcommand; returns the exit code. */
export async function alertsCommand(args: string[], config: Config): Promise<number> {
  const out = (s: string) => process.stdout.write(`${s}\n`);
  let parsed;
  try {
    parsed = parseArgs({ args, allowPositionals: true, options: { json: { type: 'boolean' }, limit: { type: 'string' } } });
  } catch (err) {
    process.stderr.write(`carecircle alerts: ${err instanceof Error ? err.message : String(err)}\n${ALERTS_USAGE}\n`);
    return 2;
  }
  const [first, second] = parsed.positionals;
  if (!first || first === 'help') {
    out(ALERTS_USAGE);
    return first ? 0 : 2;
  }
  if (first === 'retry' && !second) {
    process.stderr.write(`carecircle alerts: retry needs <delivery_id>\n${ALERTS_USAGE}\n`);
    return 2;
  }
  const json = parsed.values.json === true;
  const limit = Number(parsed.values.limit ?? 100) || 100;
  const log = pino({ name: 'carecircle', level: 'warn', redact: { paths: REDACT_PATHS, censor: '[redacted]' } }, pino.destination(2));
  const { store, stop } = await openPartnerStore(config, log);
  try {
    const outbox = new AlertOutbox(store.db);
    const print = (rows: DeliveryRecord[], none: string) => {
      const shown = rows.map(row);
      if (json) out(JSON.stringify(shown));
      else if (!shown.length) out(none);
      else
        for (const r of shown)
          out(
            `${r.delivery_id}  ${r.state}  ${r.kind}  ${r.channel}  attempts ${r.attempts}  not before ${r.not_before}${r.last_error ? `  ${r.last_error}` : ''}`,
          );
    };
    if (first === 'dead') {
      print(await outbox.dead(limit), 'no dead letters');
      return 0;
    }
    if (first === 'retry') {
      const ok = await outbox.retry(second!, new Date());
      if (!ok) process.stderr.write(`carecircle alerts: no dead letter ${second}\n`);
      else out(json ? JSON.stringify({ delivery_id: second, queued: true }) : `${second} queued again`);
      return ok ? 0 : 1;
    }
    if (first === 'outbox') {
      const mails = await store.db.collection<LocalMail>(LOCAL_OUTBOX).find().sort({ at: -1 }).limit(limit).toArray();
      if (json) out(JSON.stringify(mails.map((m) => ({ id: m._id, at: m.at.toISOString(), to: m.to, subject: m.subject, text: m.text, headers: m.headers }))));
      else if (!mails.length) out('the local outbox is empty');
      else for (const m of mails) out(`--- ${m.at.toISOString()}  to ${m.to}\nSubject: ${m.subject}\n\n${m.text}\n`);
      return 0;
    }
    const lovedOnes = store.db.collection<LovedOneRecord>(WORKSPACE_COLLECTIONS.lovedOnes);
    let lovedOne = await lovedOnes.findOne({ _id: first });
    if (!lovedOne) {
      const named = await lovedOnes
        .find({ $or: [{ displayName: first }, { firstName: first }] })
        .limit(2)
        .toArray();
      if (named.length > 1) {
        process.stderr.write(`carecircle alerts: more than one loved one is called "${first}"; give the id\n`);
        return 1;
      }
      lovedOne = named[0] ?? null;
    }
    if (!lovedOne) {
      process.stderr.write(`carecircle alerts: no loved one "${first}"\n`);
      return 1;
    }
    print(await outbox.unsent(lovedOne._id, limit), `nothing waiting for ${lovedOne._id}`);
    return 0;
  } finally {
    await stop();
  }
}
