/**
 * The chaos run: carecircle as operators deploy it (two gateways, two workers, two cron processes)
 * on a three-node NATS cluster with every stream replicated three times and a MongoDB-compatible
 * server, under steady signed ingest (one note in five mentioning a fall, which mails two members
 * right away) and MCP load, while a worker, the cron leader, a gateway, the node leading the ingest
 * stream and the database are killed and brought back in turn. Then it counts, from the store,
 * what the partner was told was accepted against what was stored, and, from an SMTP server, the
 * alert mails due against those received. Shared by test/chaos.test.ts (bounded) and
 * scripts/chaos.ts (`npm run chaos`, longer).
 */
import { alertMessageId } from '../../src/alerts/channels.js';
import { KIND_NAMES, type AlertKind, type DeliveryMode } from '../../src/alerts/kinds.js';
import { ALERT_DECISIONS, ALERT_DELIVERIES } from '../../src/alerts/outbox.js';
import { PreferenceStore } from '../../src/alerts/preferences.js';
import { alertStream } from '../../src/alerts/queue.js';
import { passThroughCredentials, type Credentials } from '../../src/auth/credentials.js';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { MongoClient, type Db } from 'mongodb';
import { NatsBus } from '../../src/bus/nats.js';
import { subjects } from '../../src/bus/subjects.js';
import { loadConfig, type Config } from '../../src/config.js';
import { LEASES } from '../../src/cron/lease.js';
import { WorkspaceStore } from '../../src/family/records.js';
import { DeadLetters } from '../../src/ingest/deadLetters.js';
import { ingestKeysBucketName } from '../../src/ingest/kvClaims.js';
import { ingestBacklog, ingestStream, type IngestStream } from '../../src/ingest/stream.js';
import { KeyStore } from '../../src/keys/keys.js';
import { rateBucketName } from '../../src/limits/index.js';
import { createLogger } from '../../src/log.js';
import { PartnerClient, RETRY_DELAYS_MS } from '../../src/partner/client.js';
import { ensureFerretDbBinary, startFerretDb } from '../../src/store/embedded/ferretdb.js';
import type { StartedServer } from '../../src/store/embedded/process.js';
import { openTimelines } from '../../src/store/timeline/timelines.js';
import { VersionedStore } from '../../src/store/versioned.js';
import { careEvents, family, onboard, shareWith, TEST_DATA_KEY, visit } from '../ingest.fixtures.js';
import { startNatsCluster, type NatsCluster } from './natsCluster.js';
import { startRole, type RoleProcess } from './processes.js';
import { ferretDbBinDir, freePort, repoRoot } from './servers.js';
import { startSmtpSink, type SmtpSink } from './smtpSink.js';

export interface ChaosOptions {
  /** Signed events a second, spread over both gateways. */
  eventsPerSecond: number;
  /** MCP calls a second (the public directory and the workspace endpoint in turn). */
  mcpPerSecond: number;
  /** Load before each fault, and with the leading NATS node down. */
  calmMs: number;
  /** How long the database stays down. */
  dbOutageMs: number;
  /** Rounds of the four faults. */
  rounds: number;
  log?: (line: string) => void;
  /** Where to write each role process's log lines when the run ends (one file per process). */
  logDir?: string;
}

export interface ChaosCounts {
  /** Distinct events the partner sent (each with its own id, retried under it). */
  sent: number;
  /** Events answered 202 at least once. */
  accepted: number;
  /** Accepted events found in the store: care events, or dead letters (`deadLettered` of them). */
  stored: number;
  /** Accepted events found nowhere. */
  lost: number;
  /** Extra copies of any event sent, accepted or not. */
  duplicated: number;
  deadLettered: number;
  /** Stored although the partner never got a 202 (it gave up or was refused): not lost, not extra. */
  storedUnaccepted: number;
  /** Why events were not accepted, by the partner client's stop rule. */
  notAccepted: Record<string, number>;
  /** Event attempts beyond the first (503, 429, connection refused…). */
  retries: number;
  /** MCP answers by status ("net" when the gateway could not be reached). */
  mcp: Record<string, number>;
  /** Every answer (event attempts and MCP calls) by what was happening: phase → "surface status" → count. */
  answers: Record<string, Record<string, number>>;
  /** Copies the cluster keeps of each stream carecircle created (the ingest stream, the rate-limit bucket). */
  replicas: Record<string, number>;
  /** Each kill of the node leading the ingest stream: "n2 → n3" when another node took over the lead. */
  failovers: string[];
  /** Role processes that exited without being killed. */
  crashed: string[];
  faults: string[];
  alerts: AlertCounts;
  /** Each kill of the cron leader: "cron 1 (pid …) → cron 2 (pid …) after N s" once another cron process holds the lease, and how often the alerts job ran since. */
  cronLeaders: string[];
}

export interface AlertCounts {
  /** Accepted notes that mention a fall × the members who want such alerts right away. */
  due: number;
  /** Distinct (note, member) pairs the SMTP server received a mail for. */
  delivered: number;
  /** Mails beyond the first for one note and member that a mail program would not fold: another Message-ID. */
  doubled: number;
  /** Mails beyond the first for one note and member under the same Message-ID (sent again after a crash mid-send). */
  resent: number;
  /** Due minus delivered, once the outbox drained (or the wait for it ran out). */
  lost: number;
  /** Deliveries of the run's family that ended as dead letters. */
  deadLettered: number;
  /** Mails that are none of the expected alerts. */
  stray: number;
  /** How the wait for the outbox ended ("drained in N s", or what was left). */
  drain: string;
}

export const chaosLine = (c: ChaosCounts): string =>
  `chaos: sent ${c.sent}, accepted ${c.accepted}, stored ${c.stored}, lost ${c.lost}, duplicated ${c.duplicated}; ` +
  `alerts: due ${c.alerts.due}, delivered ${c.alerts.delivered}, doubled ${c.alerts.doubled}, lost ${c.alerts.lost}` +
  (c.alerts.resent ? ` (${c.alerts.resent} resent under the same Message-ID)` : '') +
  (c.alerts.deadLettered ? `, dead-lettered ${c.alerts.deadLettered}` : '');

const NAMESPACE = 'chaos';
/** One partner event in this many is a note that mentions a fall. */
const ALERT_EVERY = 5;
/** How long to wait, once the load stops, for every due alert mail (the minute run is the safety net, so over a minute). */
const ALERT_DRAIN_MS = 150_000;

interface Role {
  name: string;
  env: Record<string, string>;
  ready: RegExp;
  /** Set once started. */
  proc?: RoleProcess;
  killed: boolean;
}

export async function runChaos(opts: ChaosOptions): Promise<ChaosCounts> {
  const say = opts.log ?? ((line: string) => process.stderr.write(`[chaos] ${line}\n`));
  const t0 = Date.now();
  const at = () => `${((Date.now() - t0) / 1000).toFixed(1)} s`;
  const faults: string[] = [];
  const phase = { now: 'start' };
  const fault = (what: string) => {
    phase.now = what;
    faults.push(`${at()} ${what}`);
    say(`${at()} ${what}`);
  };
  const cleanup: (() => Promise<unknown>)[] = [];
  const roles: Role[] = [];
  const crashed: string[] = [];
  const finished: { name: string; lines: string[] }[] = [];

  try {
    // Servers: the NATS cluster, a database of our own on a port it keeps across restarts, the mail relay.
    const [cluster, bin, dbPort, smtp] = await Promise.all([
      startNatsCluster(3),
      ensureFerretDbBinary({ binDir: ferretDbBinDir, repoRoot, log: say }),
      freePort(),
      startSmtpSink(),
    ]);
    cleanup.push(() => cluster.stop());
    cleanup.push(() => smtp.close());
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'carecircle-chaos-db-'));
    cleanup.push(async () => rmSync(dataDir, { recursive: true, force: true }));
    let db: StartedServer | undefined = await startFerretDb({ bin, dataDir, port: dbPort, log: say });
    cleanup.push(() => db?.stop() ?? Promise.resolve());
    const mongoUrl = `mongodb://127.0.0.1:${dbPort}/carecircle_chaos`;
    say(`${at()} nats cluster ${cluster.url}, database ${mongoUrl}`);

    const env = {
      NATS_URL: cluster.url,
      NATS_REPLICAS: '3',
      MONGO_URL: mongoUrl,
      BUS_NAMESPACE: NAMESPACE,
      DATA_KEY: TEST_DATA_KEY,
      LOG_LEVEL: 'info',
      // Short waits so a killed process's work moves on within the run.
      BUS_TIMEOUT_MS: '3000',
      GATEWAY_RETRY_WINDOW_MS: '6000',
      INGEST_ACK_WAIT_MS: '3000',
      SHUTDOWN_GRACE_MS: '2000',
      SMTP_URL: smtp.url,
      // A dead cron leader's lease runs out within the run, so the other cron process takes over.
      CRON_LEASE: '10s',
      RATE_INGEST_PER_MIN: '1000000',
      RATE_DIRECTORY_MCP_PER_MIN: '1000000',
      RATE_SANDBOX_MCP_PER_MIN: '1000000',
      RATE_MCP_KEY_PER_MIN: '1000000',
    };
    const start = (role: Role) => {
      role.killed = false;
      const proc = startRole(role.name.replace(/ .*/, ''), role.env);
      role.proc = proc;
      finished.push({ name: role.name, lines: proc.lines });
      proc.child.once('exit', (code, signal) => {
        if (!role.killed) crashed.push(`${role.name} exited (${code ?? signal}); last line: ${proc.lines.at(-1) ?? 'none'}`);
      });
      // Generous: on a busy machine a process takes a while to compile and connect.
      return role.proc.waitFor(role.ready, 180_000);
    };
    const add = (name: string, extra: Record<string, string>, ready: RegExp): Role => {
      const role: Role = { name, env: { ...env, ...extra }, ready, killed: false };
      roles.push(role);
      return role;
    };
    const gatewayEnv = async () => ({
      SITE_PORT: String(await freePort()),
      APP_PORT: String(await freePort()),
      AUTH_PORT: String(await freePort()),
      PIPE_PORT: String(await freePort()),
      APEX_PORT: String(await freePort()),
    });
    const workers = [add('worker 1', {}, /ingest consumer started/), add('worker 2', {}, /ingest consumer started/)];
    const gateways = [add('gateway 1', await gatewayEnv(), /carecircle started/), add('gateway 2', await gatewayEnv(), /carecircle started/)];
    const crons = [add('cron 1', {}, /carecircle started/), add('cron 2', {}, /carecircle started/)];
    cleanup.push(() => Promise.all(roles.map((r) => ((r.killed = true), r.proc?.kill('SIGKILL')))));
    await Promise.all(roles.map(start));
    const kill = async (role: Role) => {
      role.killed = true;
      await role.proc?.kill('SIGKILL');
    };
    const url = (g: Role, surface: Surface) => `http://127.0.0.1:${g.env[`${surface}_PORT`]}`;
    say(`${at()} roles up: ${roles.map((r) => r.name).join(', ')}`);

    // The family, the partner and the link between them, as the service itself makes them.
    const config = loadConfig({ NODE_ENV: 'test', LOG_LEVEL: 'silent', BUS_NAMESPACE: NAMESPACE, DATA_KEY: TEST_DATA_KEY });
    const bus = await NatsBus.connect(cluster.url, createLogger('silent'), 'carecircle-chaos');
    cleanup.push(() => bus.close());
    const mongo = new MongoClient(mongoUrl, { serverSelectionTimeoutMS: 5_000 });
    cleanup.push(() => mongo.close());
    const store: Db = mongo.db();
    // A handle of the test's own: nothing kept, and the roles under test run in other processes.
    const credentials = passThroughCredentials(store);
    const partner = await onboard(store, credentials);
    const fam = await family(store, credentials, config);
    const members = await alertedMembers(store, credentials, config, fam);
    await shareWith({ urls: { pipe: url(gateways[0]!, 'PIPE') }, bus, config }, partner, 'chaos-client', fam);
    const apiKey = (await new KeyStore(store, credentials).mint(fam.uid, 'chaos')).plaintext;
    const stream = ingestStream(NAMESPACE, subjects(NAMESPACE).ingestEvents);
    const streams = [stream.stream, `KV_${rateBucketName(NAMESPACE)}`, `KV_${ingestKeysBucketName(NAMESPACE)}`];
    await cluster.settled(streams);
    const replicas: Record<string, number> = {};
    for (const s of streams) replicas[s] = await cluster.replicas(s);
    const failovers: string[] = [];

    // Load: a partner sending events with its retry rule through whichever gateway answers, and
    // MCP callers, both open-loop at a fixed rate so faults pile work up as they would.
    const load = startLoad({ urls: (surface) => gateways.map((g) => url(g, surface)), partner, lovedOneId: fam.lovedOneId, apiKey, opts, phase });
    const mails = () => `${smtp.received.length} alert mails so far`;
    const cronKills: { name: string; at: number }[] = [];

    const calm = () => sleep(opts.calmMs);
    for (let round = 1; round <= opts.rounds; round++) {
      await calm();
      // The worker and the safety net at once: the cron leader's minute run is what sends what a
      // dead worker left half done. It stays down until the other cron process holds the lease.
      const cronLeader = await leaderOf(store, crons);
      const dead = `${cronLeader.name} (pid ${cronLeader.proc?.child.pid})`;
      fault(`round ${round}: SIGKILL ${workers[0]!.name} and ${dead}, holder of the cron lease (${mails()})`);
      const killedAt = Date.now();
      await Promise.all([kill(workers[0]!), kill(cronLeader)]);
      await Promise.all([
        start(workers[0]!).then(() => fault(`${workers[0]!.name} back (${mails()})`)),
        leaderOf(store, crons, 60_000).then(
          async (next) => {
            cronKills.push({
              name: `${dead} → ${next.name} (pid ${next.proc?.child.pid}) after ${((Date.now() - killedAt) / 1000).toFixed(1)} s`,
              at: killedAt,
            });
            fault(`${next.name} holds the cron lease`);
            await start(cronLeader);
            fault(`${cronLeader.name} back`);
          },
          async (err: Error) => {
            cronKills.push({ name: `${dead} → none (${err.message})`, at: killedAt });
            await start(cronLeader);
          },
        ),
      ]);

      await calm();
      fault(`SIGKILL ${gateways[0]!.name}`);
      await kill(gateways[0]!);
      await start(gateways[0]!);
      fault(`${gateways[0]!.name} back`);

      await calm();
      const leader = await cluster.streamLeader(stream.stream);
      fault(`SIGKILL nats node ${leader.name}, leader of ${stream.stream}`);
      await leader.kill();
      await calm();
      failovers.push(
        `${leader.name} → ${await cluster.streamLeader(stream.stream).then(
          (n) => n.name,
          (err: Error) => `none (${err.message})`,
        )}`,
      );
      await leader.start();
      await cluster.settled([stream.stream]);
      fault(`nats node ${leader.name} back, now led by ${(await cluster.streamLeader(stream.stream)).name}`);

      await calm();
      fault(`SIGKILL database for ${opts.dbOutageMs / 1000} s`);
      process.kill(db.pid, 'SIGKILL');
      await db.stop();
      db = undefined;
      await sleep(opts.dbOutageMs);
      db = await startFerretDb({ bin, dataDir, port: dbPort, log: say });
      fault('database back');
      // Second round on: the other worker and gateway take their turn.
      workers.reverse();
      gateways.reverse();
    }
    await calm();
    fault('load stopped; waiting for every send to finish');
    const sent = await load.stop();
    await drained(bus, cluster, stream);
    fault('ingest stream drained');
    const counted = await count(store, partner.institutionId, sent);
    const scope: AlertScope = { institutionId: partner.institutionId, sent, members, appUrl: config.appUrl, lovedOneId: fam.lovedOneId };
    const drain = await alertsDrained(store, bus, smtp, scope);
    fault(`alert outbox ${drain}`);
    const alerts = { ...(await countAlerts(store, smtp, scope)), drain };
    const cronLeaders = cronKills.map((k) => `${k.name}; the alerts job ran ${alertRunsSince(finished, k.at)} times since`);
    const { alerting: _alerting, ...figures } = counted;

    return { ...figures, alerts, cronLeaders, mcp: load.mcp, answers: load.answers, replicas, failovers, crashed, faults };
  } finally {
    if (opts.logDir) {
      mkdirSync(opts.logDir, { recursive: true });
      finished.forEach((p, i) =>
        writeFileSync(path.join(opts.logDir!, `${String(i).padStart(2, '0')}-${p.name.replace(/ /g, '-')}.log`), `${p.lines.join('\n')}\n`),
      );
    }
    for (const c of cleanup.reverse()) await c().catch((err: unknown) => say(`cleanup: ${(err as Error).message}`));
  }
}

interface Sent {
  /** Partner event id → every event_id a 202 carried for it. */
  accepted: Map<string, Set<string>>;
  all: string[];
  /** Partner event ids of the notes that mention a fall. */
  alerting: Set<string>;
  notAccepted: Record<string, number>;
  retries: number;
}

type Surface = 'PIPE' | 'SITE' | 'APP';

interface LoadDeps {
  /** Both gateways' base URLs for a surface, as they are now. */
  urls: (surface: Surface) => string[];
  partner: { institutionId: string; secret: string; secretId: string };
  lovedOneId: string;
  apiKey: string;
  opts: ChaosOptions;
  /** What is happening now, to file each answer under. */
  phase: { now: string };
}

function startLoad(deps: LoadDeps) {
  let running = true;
  let turn = 0;
  // A load balancer without health checks: each attempt goes to the next gateway in turn.
  const next = (surface: Surface) => {
    const urls = deps.urls(surface);
    return urls[turn++ % urls.length]!;
  };
  const sent: Sent = { accepted: new Map(), all: [], alerting: new Set(), notAccepted: {}, retries: 0 };
  const client = new PartnerClient({
    baseUrl: 'http://pipe.invalid',
    institutionId: deps.partner.institutionId,
    secret: deps.partner.secret,
    fetch: (input, init) => fetch(String(input).replace('http://pipe.invalid', next('PIPE')), init),
    // The documented rule (1, 2, 4… 32 s), at a quarter of the waits so the run stays short.
    retryDelaysMs: RETRY_DELAYS_MS.map((ms) => ms / 4),
    giveUpAfterMs: 120_000,
    onAttempt: (a) => {
      if (a.attempt > 1) sent.retries++;
      note(`ingest ${a.status ?? 'net'}`);
    },
  });
  const sends: Promise<void>[] = [];
  const mcp: Record<string, number> = {};
  const answers: Record<string, Record<string, number>> = {};
  const note = (what: string) => {
    const byPhase = (answers[deps.phase.now] ??= {});
    byPhase[what] = (byPhase[what] ?? 0) + 1;
  };
  const mcpCalls: Promise<void>[] = [];

  const sendOne = async (id: string, alerting: boolean) => {
    sent.all.push(id);
    if (alerting) sent.alerting.add(id);
    const event = visit({ ...deps.partner }, 'chaos-client');
    const note = { event_type: 'note_added', payload: { caregiver_id: 'cg-12', note_text: 'She fell in the hallway; the caregiver helped her up.' } };
    const r = await client.sendEvent({ ...event, ...(alerting ? note : {}), source_event_id: id });
    if (r.ok && r.eventId) {
      const ids = sent.accepted.get(id) ?? new Set<string>();
      ids.add(r.eventId);
      sent.accepted.set(id, ids);
    } else sent.notAccepted[`${r.rule}${r.status ? ` ${r.status}` : ''}`] = (sent.notAccepted[`${r.rule}${r.status ? ` ${r.status}` : ''}`] ?? 0) + 1;
  };
  const callMcp = async (n: number) => {
    const directory = n % 2 === 0;
    const body = directory
      ? { jsonrpc: '2.0', id: n, method: 'tools/call', params: { name: 'search_care_resources', arguments: { query: 'respite care', limit: 3 } } }
      : { jsonrpc: '2.0', id: n, method: 'tools/call', params: { name: 'list_care_events', arguments: { lovedOneId: deps.lovedOneId } } };
    let key: string;
    try {
      const res = await fetch(`${next(directory ? 'SITE' : 'APP')}/api/mcp`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...(directory ? {} : { authorization: `Bearer ${deps.apiKey}` }),
        },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(30_000),
      });
      await res.text();
      key = String(res.status);
    } catch {
      key = 'net';
    }
    mcp[key] = (mcp[key] ?? 0) + 1;
    note(`mcp ${directory ? 'directory' : 'workspace'} ${key}`);
  };

  const every = (perSecond: number, fn: (n: number) => Promise<void>, into: Promise<void>[]) =>
    (async () => {
      const started = Date.now();
      for (let n = 0; running; n++) {
        into.push(fn(n));
        const due = started + ((n + 1) * 1000) / perSecond;
        await sleep(Math.max(0, due - Date.now()));
      }
    })();
  const loops = [
    every(deps.opts.eventsPerSecond, (n) => sendOne(`chaos-${n}`, n % ALERT_EVERY === 0), sends),
    ...(deps.opts.mcpPerSecond > 0 ? [every(deps.opts.mcpPerSecond, callMcp, mcpCalls)] : []),
  ];

  return {
    mcp,
    answers,
    stop: async (): Promise<Sent> => {
      running = false;
      await Promise.all(loops);
      await Promise.all([...sends, ...mcpCalls]);
      return sent;
    },
  };
}

/** How many times a cron process finished the `alerts` job after `since` (its log lines). */
const alertRunsSince = (processes: { name: string; lines: string[] }[], since: number): number =>
  processes
    .filter((p) => p.name.startsWith('cron'))
    .flatMap((p) => p.lines)
    .filter((line) => {
      try {
        const l = JSON.parse(line) as { msg?: string; job?: string; time?: number };
        return l.msg === 'sweep done' && l.job === 'alerts' && (l.time ?? 0) > since;
      } catch {
        return false;
      }
    }).length;

/** Until both ingest lanes have nothing pending or unacknowledged (NATS may still be settling). */
async function drained(bus: NatsBus, cluster: NatsCluster, s: IngestStream, timeoutMs = 120_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  let last = '';
  for (;;) {
    try {
      const state = await ingestBacklog(bus.durable, s);
      if (state.pending === 0 && state.ackPending === 0) return;
      last = `${state.pending} pending, ${state.ackPending} unacknowledged`;
    } catch (err) {
      last = (err as Error).message;
    }
    if (Date.now() > until)
      throw new Error(
        `ingest consumer not drained after ${timeoutMs / 1000} s: ${last} (nodes ${cluster.nodes.map((n) => `${n.name} ${n.running() ? 'up' : 'down'}`).join(', ')})`,
      );
    await sleep(250);
  }
}

async function count(
  store: Db,
  institutionId: string,
  sent: Sent,
): Promise<Omit<ChaosCounts, 'mcp' | 'answers' | 'replicas' | 'failovers' | 'crashed' | 'faults' | 'alerts' | 'cronLeaders'> & { alerting: number }> {
  const rows = await careEvents(store).find({ institutionId }).project<{ _id: string; sourceEventId?: string }>({ _id: 1, sourceEventId: 1 }).toArray();
  const dead = await new DeadLetters(store).rows.find({ institutionId }).toArray();
  // Copies per partner id, wherever they ended up.
  const copies = new Map<string, string[]>();
  const keep = (sourceId: string | undefined, eventId: string) => {
    const key = sourceId ?? `(no id) ${eventId}`;
    copies.set(key, [...(copies.get(key) ?? []), eventId]);
  };
  for (const r of rows) keep(r.sourceEventId, r._id);
  for (const d of dead) keep((JSON.parse(d.event) as { sourceEventId?: string }).sourceEventId, d._id);
  const deadIds = new Set(dead.map((d) => d._id));

  let stored = 0;
  let lost = 0;
  let deadLettered = 0;
  let duplicated = 0;
  for (const [id, eventIds] of sent.accepted) {
    const found = copies.get(id) ?? [];
    // Every 202 for one partner id must name the one event that was stored.
    if (found.length && [...eventIds].every((e) => found.includes(e))) stored++;
    else lost++;
    if (found.some((e) => deadIds.has(e))) deadLettered++;
  }
  for (const eventIds of copies.values()) duplicated += Math.max(0, eventIds.length - 1);
  const storedUnaccepted = [...copies.keys()].filter((id) => !sent.accepted.has(id)).length;
  return {
    sent: sent.all.length,
    accepted: sent.accepted.size,
    stored,
    lost,
    duplicated,
    deadLettered,
    storedUnaccepted,
    notAccepted: sent.notAccepted,
    retries: sent.retries,
    alerting: [...sent.alerting].filter((id) => sent.accepted.has(id)).length,
  };
}

/**
 * The family's owner and a second member, each wanting notes that mention a fall right away (and
 * nothing else, so every mail the relay gets is one of those), without quiet hours. Their uids.
 */
async function alertedMembers(
  store: Db,
  credentials: Credentials,
  config: Config,
  fam: { uid: string; workspaceId: string; lovedOneId: string },
): Promise<string[]> {
  const uid = `u-chaos-${randomBytes(4).toString('hex')}`;
  const workspace = new WorkspaceStore(store, credentials, config.inboxDomain, await openTimelines(store));
  await workspace.upsertUser({ uid, email: `${uid}@example.com` });
  await workspace.addMember(fam.workspaceId, { uid, email: `${uid}@example.com` }, 'family_member');
  const modes = Object.fromEntries(KIND_NAMES.map((k) => [k, k === 'flagged_note' ? 'now' : 'never'])) as Record<AlertKind, DeliveryMode>;
  const preferences = new PreferenceStore(store);
  for (const member of [fam.uid, uid]) await preferences.set(member, fam.lovedOneId, { modes, quiet: null, zone: 'UTC', digestDay: 'sun', digestHour: 18 });
  return [fam.uid, uid];
}

/** The cron process holding the lease now (each asks for it every few seconds; the wait covers a takeover). */
async function leaderOf(store: Db, crons: Role[], waitMs = 30_000): Promise<Role> {
  const leases = new VersionedStore<{ holder: string; expiresAt: number }>(store, LEASES);
  const until = Date.now() + waitMs;
  for (;;) {
    const term = (await leases.latest('cron-leader'))?.state;
    const pid = term && term.expiresAt > Date.now() ? Number(term.holder.split('-')[0]) : undefined;
    const role = crons.find((r) => !r.killed && r.proc?.child.pid === pid);
    if (role) return role;
    if (Date.now() >= until)
      throw new Error(`no running cron process holds the lease: ${term ? `last held by pid ${term.holder.split('-')[0]}` : 'never taken'}`);
    await sleep(250);
  }
}

/** The Message-ID of a mail as the relay received it. */
const messageIdOf = (data: string): string | undefined => /^message-id:\s*(<[^>]+>)/im.exec(data.split('\r\n\r\n')[0]!.replace(/\r\n[ \t]+/g, ' '))?.[1];

interface AlertScope {
  institutionId: string;
  sent: Sent;
  /** The members who want the alerts right away. */
  members: string[];
  appUrl: string;
  lovedOneId: string;
}

/**
 * The alert mails the relay received against those due. Each mail names its delivery in its
 * Message-ID (`flagged_note:<event id>|<member>|email`, src/alerts/channels.ts): the stored care
 * event gives the partner's id of the note, so a note stored twice would show as two Message-IDs.
 */
async function countAlerts(store: Db, smtp: SmtpSink, scope: AlertScope): Promise<Omit<AlertCounts, 'drain'>> {
  const rows = await careEvents(store)
    .find({ institutionId: scope.institutionId, sourceEventId: { $in: [...scope.sent.alerting] } })
    .project<{ _id: string; sourceEventId: string }>({ _id: 1, sourceEventId: 1 })
    .toArray();
  const expected = new Map<string, string>();
  for (const r of rows)
    for (const uid of scope.members) expected.set(alertMessageId(`flagged_note:${r._id}|${uid}|email`, scope.appUrl), `${r.sourceEventId}|${uid}`);
  const byPair = new Map<string, { ids: Set<string>; mails: number }>();
  let stray = 0;
  for (const mail of smtp.received) {
    const id = messageIdOf(mail.data);
    const pair = id === undefined ? undefined : expected.get(id);
    if (!id || !pair) {
      stray++;
      continue;
    }
    const seen = byPair.get(pair) ?? { ids: new Set<string>(), mails: 0 };
    seen.ids.add(id);
    seen.mails++;
    byPair.set(pair, seen);
  }
  const dueNotes = [...scope.sent.alerting].filter((id) => scope.sent.accepted.has(id));
  let delivered = 0;
  for (const note of dueNotes) for (const uid of scope.members) if (byPair.has(`${note}|${uid}`)) delivered++;
  let doubled = 0;
  let resent = 0;
  for (const { ids, mails } of byPair.values()) {
    doubled += ids.size - 1;
    resent += mails - ids.size;
  }
  const due = dueNotes.length * scope.members.length;
  const deadLettered = await store.collection(ALERT_DELIVERIES).countDocuments({ lovedOneId: scope.lovedOneId, state: 'dead' });
  return { due, delivered, doubled, resent, lost: due - delivered, deadLettered, stray };
}

/**
 * Until every due alert mail arrived and the outbox is at rest: no delivery pending or being sent,
 * no decision left to fan out, nothing on the `alert-sender` queue. Bounded: what a killed
 * process left is picked up by the queue's redelivery or the cron leader's minute run, so the wait
 * is over a minute; after it, what is missing is lost. How it ended, in words.
 */
async function alertsDrained(store: Db, bus: NatsBus, smtp: SmtpSink, scope: AlertScope, timeoutMs = ALERT_DRAIN_MS): Promise<string> {
  const started = Date.now();
  const { stream, consumer } = alertStream(NAMESPACE);
  let last = '';
  for (;;) {
    try {
      const [open, unfanned, queue, tally] = await Promise.all([
        store.collection(ALERT_DELIVERIES).countDocuments({ lovedOneId: scope.lovedOneId, state: { $in: ['pending', 'sending'] } }),
        store.collection(ALERT_DECISIONS).countDocuments({ lovedOneId: scope.lovedOneId, fannedOut: false }),
        bus.durable.consumerState(stream.name, consumer.durable),
        countAlerts(store, smtp, scope),
      ]);
      if (open === 0 && unfanned === 0 && queue.pending === 0 && queue.ackPending === 0 && tally.lost === 0)
        return `drained in ${((Date.now() - started) / 1000).toFixed(1)} s`;
      last = `${open} deliveries pending or sending, ${unfanned} decisions not fanned out, ${queue.pending + queue.ackPending} queued, ${tally.lost} mails missing`;
    } catch (err) {
      last = (err as Error).message;
    }
    if (Date.now() - started > timeoutMs) return `not drained after ${timeoutMs / 1000} s: ${last}`;
    await sleep(500);
  }
}
