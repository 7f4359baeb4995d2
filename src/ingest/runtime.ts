// Wiring the ingest slice into a process: its worker handlers, its durable consumer (NATS mode)
// and its cron sweeps. service.ts calls these three and nothing else of the slice.
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
import { IngestKeys } from './dedupe.js';
import { FamilyShares } from './familyShare.js';
import { DAY_MS, pipeHandlers } from './handler.js';
import { familyShareLinkHandlers } from './linkHandler.js';
import { ingestStream, MongoSink, StreamSink } from './stream.js';
import { CareEventWriter } from './writer.js';

/** The pipe host's handler and the app host's family-share link handler. */
export function ingestWorkerHandlers(config: Config, log: Logger, db: Db, bus: Bus, limiter: Limiter): RouteHandlers {
  const names = subjects(config.busNamespace);
  const partners = new PartnerStore(db, new SecretBox(resolveDataKey(config, log)));
  const shares = new FamilyShares(db);
  const writer = new CareEventWriter(db, shares);
  const sink = bus.durable ? new StreamSink(bus.durable, ingestStream(config.busNamespace, names.ingestEvents), config.ingestAckWaitMs) : new MongoSink(writer, new DeadLetters(db), log.child({ component: 'ingest-writer' }));
  return {
    // The `carecircle partner` command announces its changes over NATS; the in-process bus of an
    // embedded run is out of its reach, so there the institution is read fresh.
    ...pipeHandlers({ config, db, partners, shares, writer, sink, limiter, keepInstitutions: bus.kind !== 'memory' }),
    ...familyShareLinkHandlers({ db, appOrigin: new URL(config.appUrl).origin, inboxDomain: config.inboxDomain, shares, limiter, callerOf: (headers) => sessionCaller(db, headers) }),
  };
}

/** The durable consumer writing care events; only on a bus with durable streams (embedded runs write on accept). */
export function startIngestWriter(config: Config, log: Logger, db: Db, bus: Bus): IngestConsumer | undefined {
  if (!bus.durable) return undefined;
  const writer = new CareEventWriter(db, new FamilyShares(db));
  return startIngestConsumer(bus.durable, ingestStream(config.busNamespace, subjects(config.busNamespace).ingestEvents), writer, new DeadLetters(db), log.child({ component: 'ingest-consumer' }), {
    // Messages wait in flight to be written together: a larger batch spreads a loved one's
    // timeline write (a dozen commands however many events it takes) over more events.
    concurrency: Math.min(config.workerConcurrency * 4, 256),
    ackWaitMs: config.ingestAckWaitMs,
    maxDeliveries: config.ingestMaxDeliveries,
  });
}

/** De-duplication keys older than the retention, and link codes past their expiry. */
export function ingestSweepJobs(config: Config, db: Db): SweepJob[] {
  const keys = new IngestKeys(db);
  const shares = new FamilyShares(db);
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
