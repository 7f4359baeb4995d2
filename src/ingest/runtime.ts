// Wiring the ingest slice into a process: its worker handlers, its durable consumer (NATS mode)
// and its cron sweeps. service.ts calls these three and nothing else of the slice.
import type { Credentials } from '../auth/credentials.js';
import type { Db } from 'mongodb';
import { subjects } from '../bus/subjects.js';
import type { Bus } from '../bus/types.js';
import type { Config } from '../config.js';
import type { Limiter } from '../limits/limiter.js';
import type { Logger } from '../log.js';
import { PartnerStore } from '../partner/records.js';
import { resolveDataKey, SecretBox } from '../partner/secretBox.js';
import { sessionCaller } from '../auth/sessions.js';
import type { RouteHandlers, SweepJob } from '../slice/contract.js';
import { startIngestConsumer, type IngestConsumer } from './consumer.js';
import { DeadLetters } from './deadLetters.js';
import { IngestKeys, StoreClaims, type KeyClaims } from './dedupe.js';
import { FamilyShares } from './familyShare.js';
import { DAY_MS, pipeHandlers } from './handler.js';
import { ingestKeysBucketName, KvClaims } from './kvClaims.js';
import { familyShareLinkHandlers } from './linkHandler.js';
import { ingestStream, MongoSink, StreamSink } from './stream.js';
import { CareEventWriter } from './writer.js';
import type { Timelines } from '../store/timeline/port.js';

/** Care events a worker's consumer writes together at most (twice that in flight), and the bytes
 *  in flight at most: events are about a kilobyte; 32 MB still holds a hundred of the largest
 *  (256 KB bodies). */
export const INGEST_BATCH = 500;
export const INGEST_IN_FLIGHT_BYTES = 32 * 1024 * 1024;

/** The pipe host's handler and the app host's family-share link handler. */
export function ingestWorkerHandlers(
  config: Config,
  log: Logger,
  db: Db,
  credentials: Credentials,
  timelines: Timelines,
  bus: Bus,
  limiter: Limiter,
): RouteHandlers {
  const names = subjects(config.busNamespace);
  const partners = new PartnerStore(db, new SecretBox(resolveDataKey(config, log)), credentials);
  const shares = new FamilyShares(db, credentials);
  const writer = new CareEventWriter(timelines, shares);
  // With NATS the de-duplication keys are claimed in key-value, so a 202 waits on no store write.
  const claims: KeyClaims = bus.kv
    ? new KvClaims(
        bus.kv,
        ingestKeysBucketName(config.busNamespace),
        config.ingestDedupeDays * DAY_MS,
        new IngestKeys(db),
        log.child({ component: 'ingest-keys' }),
      )
    : new StoreClaims(new IngestKeys(db));
  const sink = bus.durable
    ? new StreamSink(bus.durable, ingestStream(config.busNamespace, names.ingestEvents), config.ingestAckWaitMs)
    : new MongoSink(writer, new DeadLetters(db), log.child({ component: 'ingest-writer' }));
  return {
    // The `carecircle partner` command announces its changes over NATS; the in-process bus of an
    // embedded run is out of its reach, so there the institution is read fresh.
    ...pipeHandlers({ config, db, credentials, partners, shares, writer, sink, limiter, claims, keepInstitutions: bus.kind !== 'memory' }),
    ...familyShareLinkHandlers({
      db,
      credentials,
      timelines,
      inboxDomain: config.inboxDomain,
      shares,
      limiter,
      linksPerHour: config.rateFamilyShareLinkPerHour,
      callerOf: (headers) => sessionCaller(db, credentials, headers),
    }),
  };
}

/** The durable consumer writing care events; only on a bus with durable streams (embedded runs write on accept). */
export function startIngestWriter(config: Config, log: Logger, db: Db, credentials: Credentials, timelines: Timelines, bus: Bus): IngestConsumer | undefined {
  if (!bus.durable) return undefined;
  const writer = new CareEventWriter(timelines, new FamilyShares(db, credentials));
  return startIngestConsumer(
    bus.durable,
    ingestStream(config.busNamespace, subjects(config.busNamespace).ingestEvents),
    writer,
    new DeadLetters(db),
    log.child({ component: 'ingest-consumer' }),
    {
      // Messages wait in flight to be written together: a larger batch spreads a loved one's timeline
      // write (a few inserts however many events it takes) over more events. Twice a batch is in
      // flight; JetStream's own limit of unacknowledged messages per consumer is 1,000.
      concurrency: Math.min(config.workerConcurrency * 8, INGEST_BATCH),
      maxBytes: INGEST_IN_FLIGHT_BYTES,
      ackWaitMs: config.ingestAckWaitMs,
      maxDeliveries: config.ingestMaxDeliveries,
    },
  );
}

/** De-duplication keys older than the retention, and link codes past their expiry. */
export function ingestSweepJobs(config: Config, db: Db, credentials: Credentials): SweepJob[] {
  const keys = new IngestKeys(db);
  const shares = new FamilyShares(db, credentials);
  return [
    {
      name: 'ingest-keys',
      schedule: '23 * * * *',
      run: async () => ({
        keys: await keys.sweep(new Date(Date.now() - config.ingestDedupeDays * DAY_MS)),
        linkCodes: await shares.sweepCodes(),
      }),
    },
  ];
}
