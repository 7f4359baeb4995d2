// Starting and stopping carecircle in any role: all (embedded default), gateway, worker, cron, smtp.
import { once } from 'node:events';
import { createServer, type RequestListener, type Server } from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { openBus } from './bus/index.js';
import { MemoryBus } from './bus/memory.js';
import { subjects } from './bus/subjects.js';
import type { Bus } from './bus/types.js';
import { openCredentials, type Credentials } from './auth/credentials.js';
import type { Config } from './config.js';
import { startCron, type CronRole } from './cron/index.js';
import type { GatewayDeps } from './gateway/context.js';
import { createApexApp } from './gateway/apex.js';
import { createAuthHostApp, createHostApp, createHostLean } from './gateway/hosts.js';
import { leanAhead, type LeanHandler } from './gateway/leanMcp.js';
import { startInboxListener } from './inbox/smtp.js';
import type Koa from 'koa';
import { openLimiter } from './limits/index.js';
import type { Logger } from './log.js';
import { instrumentListener, startMetricsListener } from './metrics/index.js';
import { sliceSubject, type SliceContext, type SliceManifest, type Stoppable } from './slice/contract.js';
import { SLICES } from './slices.js';
import { CARE_EVENT_STREAM } from './family/careEvents.js';
import type { CareEventRecord } from './family/records.js';
import { mayRaiseAlert } from './family/alerting.js';
import { readStoreAddress, recordStoreAddress, unanswered } from './store/embedded/address.js';
import { startEmbeddedMongo, type EmbeddedMongo } from './store/embeddedMongo.js';
import { openStore, type Store } from './store/mongo.js';
import type { Timelines } from './store/timeline/port.js';
import { migrateTimelines } from './store/timeline/migrate.js';
import { announcingTimelines, openTimelines, recordsStored } from './store/timeline/timelines.js';
import { PACKAGE_ROOT } from './version.js';
import { startWorkers, type WorkerPool } from './worker/runtime.js';
import { directoryThreadCount, startWorkerThreads, type WorkerThreads } from './worker/threads.js';
import type { ThreadSliceName } from './threadSlices.js';
import { sliceHandlers } from './worker/router.js';

export { ROLES, type Role } from './roles.js';
import type { Role } from './roles.js';

export interface RunningService {
  role: Role;
  /** Listener URLs by surface, with the ports actually bound (port 0 picks a free one). */
  urls: Record<string, string>;
  bus: Bus;
  store: Store;
  /** This process's credentials and family records in memory (src/auth/credentials.ts). */
  credentials: Credentials;
  /** The records kept as timelines, in this store's shape. */
  timelines: Timelines;
  cron?: CronRole;
  /** The embedded run's worker threads, where it has any (DIRECTORY_THREADS). */
  workerThreads?: WorkerThreads;
  stop(): Promise<void>;
}

async function listen(app: { callback(): RequestListener }, host: string, port: number): Promise<Server> {
  const server = createServer(app.callback());
  server.keepAliveTimeout = 5_000;
  server.listen(port, host);
  await once(server, 'listening');
  return server;
}

function urlOf(server: Server, host: string): string {
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : 0;
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
}

async function closeServer(server: Server, graceMs: number): Promise<void> {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeIdleConnections();
  const timer = setTimeout(() => server.closeAllConnections(), graceMs);
  await closed;
  clearTimeout(timer);
}

/** What a worker thread runs: src/workerThread.ts beside this module (.js in the build). */
const THREAD_ENTRY = new URL(`./workerThread${path.extname(fileURLToPath(import.meta.url))}`, import.meta.url).href;

export async function startService(role: Role, config: Config, log: Logger): Promise<RunningService> {
  if (role === 'gateway' && !config.natsUrl)
    throw new Error('--role gateway needs NATS_URL: without NATS no worker process can reach it (use --role all for a single process)');
  if (role === 'worker' && !config.natsUrl) throw new Error('--role worker needs NATS_URL: it serves requests that gateways publish on NATS');

  const stops: (() => Promise<void>)[] = [];
  const stopAll = async () => {
    for (const stop of stops.reverse()) await stop().catch((err: unknown) => log.error({ err }, 'shutdown step failed'));
  };
  try {
    let mongoUrl = config.mongoUrl;
    let embedded: EmbeddedMongo | undefined;
    if (!mongoUrl) {
      // Two servers on one set of files would each keep its own view of them: one run per DATA_DIR.
      // Both recorded processes alive and the store answering: not a record a reused pid fakes.
      const recorded = readStoreAddress(config.dataDir);
      if (recorded.state === 'live' && !(await unanswered(recorded.address.url)))
        throw new Error(
          `carecircle is already running on DATA_DIR ${path.resolve(config.dataDir)} (process ${recorded.address.pid}): stop it first, or give this run its own DATA_DIR or a MONGO_URL`,
        );
      embedded = await startEmbeddedMongo({
        dataDir: path.resolve(config.dataDir, 'db'),
        binDir: path.resolve(config.dataDir, 'bin'),
        repoRoot: PACKAGE_ROOT,
        port: config.embeddedDbPort,
        log: (line) => log.info(line),
      });
      mongoUrl = `${embedded.url.replace(/\/$/, '')}/carecircle`;
      stops.push(() => embedded!.stop());
      // The carecircle commands (partner, deadletters) read where the store listens from here.
      const forget = recordStoreAddress(config.dataDir, { url: mongoUrl, pid: process.pid, serverPid: embedded.pid, startedAt: new Date().toISOString() });
      stops.push(async () => forget());
      log.info({ mongo: 'embedded', port: Number(new URL(mongoUrl).port) }, 'local MongoDB-compatible server started');
    }
    const slices: readonly SliceManifest[] = SLICES;
    const store = await openStore(
      mongoUrl,
      log,
      slices.flatMap((s) => (s.indexes ? [s.indexes] : [])),
    );
    stops.push(() => store.close());
    const bus = await openBus(config.natsUrl, log, undefined, { service: role === 'all' || role === 'worker', replicas: config.natsReplicas });
    stops.push(() => bus.close());
    const credentials = await openCredentials(store.db, bus, config.busNamespace, log);
    stops.push(() => credentials.stop());

    // Exact in memory for one process; in JetStream key-value where several share the NATS bus.
    const limiter = openLimiter(bus, config.busNamespace, log);
    // Each append is announced on the bus; the care stream's with those of its records that may raise
    // an alert (up to a size): the alert workers decide from them at once, without reading care
    // events back, and a batch of routine events travels as an empty list. No other stream's records
    // travel, since nothing reads them there.
    const storedSubject = subjects(config.busNamespace).recordsStored;
    const timelines = announcingTimelines(await openTimelines(store.db), (stream, records) =>
      bus.publish(
        storedSubject,
        recordsStored(stream, stream === CARE_EVENT_STREAM.name ? (records as readonly CareEventRecord[]).filter((r) => mayRaiseAlert(r)) : null),
      ),
    );
    // A store an earlier version wrote is taken into the timelines once, by a process that serves.
    if (role === 'all' || role === 'worker')
      await migrateTimelines(
        store.db,
        timelines,
        slices.flatMap((s) => s.timelines ?? []),
        log,
      );
    const ctx: SliceContext = { config, log, db: store.db, timelines, bus, limiter, credentials, clock: Date.now, slices };
    const urls: Record<string, string> = {};
    let cronRole: CronRole | undefined;
    let pool: WorkerPool | undefined;
    let workerThreads: WorkerThreads | undefined;
    if (role === 'all' || role === 'worker') {
      // The in-process bus can hand the directory to worker threads; over NATS, processes scale it.
      const threadCount = bus instanceof MemoryBus ? directoryThreadCount(config) : 0;
      const threaded: ThreadSliceName[] = threadCount ? ['directory'] : [];
      pool = startWorkers(
        bus,
        sliceHandlers(
          slices.filter((s) => !(threaded as string[]).includes(s.name)),
          ctx,
        ),
        { concurrency: config.workerConcurrency, log },
      );
      stops.push(() => pool!.stop());
      if (bus instanceof MemoryBus && threaded.length) {
        const threads = await startWorkerThreads(bus, { config, log, entry: THREAD_ENTRY, slices: threaded, count: threadCount });
        stops.push(() => threads.stop());
        workerThreads = threads;
      }
      // Durable consumers (NATS mode: the one writing partner care events) stop before the bus.
      for (const slice of slices) {
        const running: Stoppable | undefined = slice.background?.(ctx);
        if (running) stops.push(() => running.stop());
      }
    }
    if (role === 'all' || role === 'gateway') {
      const deps: GatewayDeps = { config, log, bus, store, limiter };
      const listeners: [string, Koa, number, LeanHandler?][] = [
        ['site', createHostApp('site', deps, slices), config.sitePort, createHostLean('site', deps, slices)],
        ['app', createHostApp('app', deps, slices), config.appPort],
        ['auth', createAuthHostApp(deps, slices, ctx), config.authPort],
        ['apex', createApexApp(deps), config.apexPort],
        ['pipe', createHostApp('pipe', deps, slices), config.pipePort],
      ];
      for (const [surface, koa, port, lean] of listeners) {
        // The apex answers every path but the probes alike: one route label.
        const server = await listen(leanAhead(instrumentListener(koa, surface, surface === 'apex' ? '/*' : undefined), lean), config.bindHost, port);
        urls[surface] = urlOf(server, config.bindHost);
        // Listeners close first (stops are run in reverse), so no request arrives without a worker.
        stops.push(() => closeServer(server, config.shutdownGraceMs));
      }
    }
    if (role === 'all' || role === 'smtp') {
      const inbox = await startInboxListener(config, bus, sliceSubject(config.busNamespace, 'inbox'), log, limiter);
      urls.smtp = `smtp://${config.bindHost}:${inbox.port}`;
      stops.push(() => inbox.close());
    }
    if (role === 'all' || role === 'cron') {
      const jobs = slices.flatMap((s) => s.jobs?.(ctx) ?? []);
      cronRole = startCron(store, log, jobs, config.cronLease);
      stops.push(async () => {
        await cronRole!.stop();
        await Promise.all(jobs.map((j) => j.close?.()));
      });
    }
    if (config.metricsPort !== 'off') {
      // Its own port, never a public listener's: scraped from inside the deployment only.
      const metrics = await startMetricsListener(config.bindHost, config.metricsPort, (err) => log.warn({ err }, 'metrics collection failed'));
      urls.metrics = metrics.url;
      stops.push(() => metrics.close());
    }
    log.info({ role, urls, bus: bus.kind }, 'carecircle started');
    return {
      role,
      urls,
      bus,
      store,
      credentials,
      timelines,
      ...(cronRole ? { cron: cronRole } : {}),
      ...(workerThreads ? { workerThreads } : {}),
      stop: stopAll,
    };
  } catch (err) {
    await stopAll();
    throw err;
  }
}
