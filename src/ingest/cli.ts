// `carecircle deadletters …`: the operator's view of accepted events the database refused, and the
// two ways out of the dead-letter store: replay through the normal path, or drop.
import { passThroughCredentials } from '../auth/credentials.js';
import { createInterface } from 'node:readline/promises';
import { parseArgs } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Db } from 'mongodb';
import { pino } from 'pino';
import { openBus } from '../bus/index.js';
import { subjects } from '../bus/subjects.js';
import type { Config } from '../config.js';
import { careEventStored } from '../family/records.js';
import { REDACT_PATHS, type Logger } from '../log.js';
import { openPartnerStore } from '../partner/cli.js';
import { DeadLetters, queuedEventOf, type DeadLetterRecord } from './deadLetters.js';
import { FamilyShares } from './familyShare.js';
import { ensureIngestStream, ingestStream } from './stream.js';
import { CareEventWriter } from './writer.js';
import { openTimelines } from '../store/timeline/timelines.js';

export const DEADLETTERS_USAGE = `usage:
  carecircle deadletters list [--limit <n>]            newest first: id, when, institution, event type, error class
  carecircle deadletters show <event_id>               one dead letter: the event as accepted, the error, attempts
  carecircle deadletters replay <event_id> [--wait <s>] store it through the normal path; removed once stored
  carecircle deadletters drop <event_id> [--yes]       delete it for good (asks first unless --yes)
Add --json for machine-readable output. Connects like the service: MONGO_URL, NATS_URL; without
MONGO_URL, to the store of the carecircle running on DATA_DIR (npm start).`;

class UsageError extends Error {}

const stderrLogger = (): Logger => pino({ name: 'carecircle', level: 'warn', redact: { paths: REDACT_PATHS, censor: '[redacted]' } }, pino.destination(2));

const summary = (r: DeadLetterRecord) => ({
  event_id: r._id,
  dead_lettered_at: r.deadLetteredAt.toISOString(),
  institution_id: r.institutionId,
  subject_ref: r.subjectRef,
  event_type: r.eventType,
  error_class: r.error.class,
  attempts: r.attempts,
});

const detail = (r: DeadLetterRecord) => ({
  ...summary(r),
  origin: r.origin,
  received_at: r.receivedAt.toISOString(),
  first_dead_lettered_at: r.firstDeadLetteredAt.toISOString(),
  error: r.error.message,
  event: queuedEventOf(r),
});

/**
 * The operator's answer on stdin: yes, anything else, or none at all when stdin ends first (a closed
 * or /dev/null stdin, a script, a cron job). Without the close, the question would wait for ever.
 */
async function confirmed(question: string): Promise<'yes' | 'no' | 'no_answer'> {
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  const ended = new AbortController();
  rl.once('close', () => ended.abort());
  try {
    return /^y(es)?$/i.test((await rl.question(question, { signal: ended.signal })).trim()) ? 'yes' : 'no';
  } catch (err) {
    if (ended.signal.aborted) return 'no_answer';
    throw err;
  } finally {
    rl.close();
  }
}

/**
 * Replay: on NATS, published to the ingest stream like an accepted event (under a fresh message id,
 * or the stream's duplicate window would swallow it) and stored by the workers' consumer; embedded,
 * written here by the same writer. Stored means a care event with the event id exists.
 */
async function replay(r: DeadLetterRecord, config: Config, db: Db, log: Logger, waitMs: number): Promise<'stored' | 'not_stored' | 'dropped'> {
  const e = queuedEventOf(r);
  if (config.natsUrl) {
    const bus = await openBus(config.natsUrl, log, 'carecircle-deadletters', { replicas: config.natsReplicas });
    try {
      const s = ingestStream(config.busNamespace, subjects(config.busNamespace).ingestEvents);
      await ensureIngestStream(bus.durable!, s, config.ingestAckWaitMs);
      await bus.durable!.publish(s.subject, e, { msgId: `${e.eventId}.replay.${Date.now()}` });
    } finally {
      await bus.close();
    }
    for (const until = Date.now() + waitMs; Date.now() < until; await sleep(100)) if (await careEventStored(db, e.eventId)) return 'stored';
    return 'not_stored';
  }
  try {
    const outcome = await new CareEventWriter(await openTimelines(db), new FamilyShares(db, passThroughCredentials(db))).write(e);
    return outcome === 'dropped' ? 'dropped' : 'stored';
  } catch (err) {
    log.warn({ eventId: e.eventId, errorClass: err instanceof Error ? err.name : typeof err }, 'replay refused by the database');
    return 'not_stored';
  }
}

/** Run one `deadletters` subcommand; returns the exit code. */
export async function deadlettersCommand(args: string[], config: Config): Promise<number> {
  const out = (s: string) => process.stdout.write(`${s}\n`);
  const [command, ...rest] = args;
  if (!command || command === 'help' || command === '--help') {
    out(DEADLETTERS_USAGE);
    return command ? 0 : 2;
  }
  let parsed;
  try {
    parsed = parseArgs({
      args: rest,
      allowPositionals: true,
      options: { json: { type: 'boolean' }, yes: { type: 'boolean' }, limit: { type: 'string' }, wait: { type: 'string' } },
    });
    if (!['list', 'show', 'replay', 'drop'].includes(command)) throw new UsageError(`unknown deadletters command "${command}"`);
    if (command !== 'list' && !parsed.positionals[0]) throw new UsageError(`${command} needs <event_id>`);
  } catch (err) {
    process.stderr.write(`carecircle deadletters: ${err instanceof Error ? err.message : String(err)}\n${DEADLETTERS_USAGE}\n`);
    return 2;
  }
  const { values, positionals } = parsed;
  const json = values.json === true;
  const log = stderrLogger();
  const { store, stop } = await openPartnerStore(config, log);
  try {
    const letters = new DeadLetters(store.db);
    if (command === 'list') {
      const rows = (await letters.list(Number(values.limit ?? 100) || 100)).map(summary);
      if (json) out(JSON.stringify(rows));
      else if (!rows.length) out('no dead letters');
      else for (const r of rows) out(`${r.event_id}  ${r.dead_lettered_at}  ${r.institution_id}  ${r.event_type}  ${r.error_class}  attempts ${r.attempts}`);
      return 0;
    }
    const id = positionals[0]!;
    const record = await letters.get(id);
    if (!record) {
      process.stderr.write(`carecircle deadletters: no dead letter ${id}\n`);
      return 1;
    }
    if (command === 'show') {
      out(json ? JSON.stringify(detail(record)) : JSON.stringify(detail(record), null, 2));
      return 0;
    }
    if (command === 'drop') {
      const answer = values.yes ? 'yes' : await confirmed(`Drop dead letter ${id} (${record.eventType} from ${record.institutionId}) for good? [y/N] `);
      if (answer === 'no_answer') {
        process.stderr.write('\ncarecircle deadletters: no answer on stdin (it ended first); not dropped. Pass --yes to drop without asking\n');
        return 2;
      }
      if (answer === 'no') {
        process.stderr.write('not dropped\n');
        return 1;
      }
      await letters.remove(id);
      out(json ? JSON.stringify({ event_id: id, dropped: true }) : `${id} dropped`);
      return 0;
    }
    const outcome = await replay(record, config, store.db, log, Number(values.wait ?? 30) * 1000 || 30_000);
    if (outcome === 'stored') await letters.remove(id);
    out(
      json
        ? JSON.stringify({ event_id: id, outcome })
        : outcome === 'stored'
          ? `${id} stored; dead letter removed`
          : outcome === 'dropped'
            ? `${id} not stored: family-share for its subject was turned off, re-linked or purged since it was accepted; dead letter kept (drop it)`
            : `${id} not stored; dead letter kept`,
    );
    return outcome === 'stored' ? 0 : 1;
  } finally {
    await stop();
  }
}
