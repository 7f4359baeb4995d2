/**
 * The chaos run: carecircle as operators deploy it (two gateways, two workers, a cron process) on a
 * three-node NATS cluster with every stream replicated three times and a MongoDB-compatible server,
 * under steady signed ingest and MCP load, while a worker, a gateway, the node leading the ingest
 * stream and the database are killed and brought back in turn. Then it counts, from the store,
 * what the partner was told was accepted against what was stored. Shared by test/chaos.test.ts
 * (bounded) and scripts/chaos.ts (`npm run chaos`, longer).
 */
import { passThroughCredentials } from '../../src/auth/credentials.js';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { MongoClient, type Db } from 'mongodb';
import { NatsBus } from '../../src/bus/nats.js';
import { subjects } from '../../src/bus/subjects.js';
import { loadConfig } from '../../src/config.js';
import { DeadLetters } from '../../src/ingest/deadLetters.js';
import { ingestKeysBucketName } from '../../src/ingest/kvClaims.js';
import { ingestStream } from '../../src/ingest/stream.js';
import { KeyStore } from '../../src/keys/keys.js';
import { rateBucketName } from '../../src/limits/index.js';
import { createLogger } from '../../src/log.js';
import { PartnerClient, RETRY_DELAYS_MS } from '../../src/partner/client.js';
import { ensureFerretDbBinary, startFerretDb } from '../../src/store/embedded/ferretdb.js';
import type { StartedServer } from '../../src/store/embedded/process.js';
import { careEvents, family, onboard, shareWith, TEST_DATA_KEY, visit } from '../ingest.fixtures.js';
import { startNatsCluster, type NatsCluster } from './natsCluster.js';
import { startRole, type RoleProcess } from './processes.js';
import { ferretDbBinDir, freePort, repoRoot } from './servers.js';

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
}

export const chaosLine = (c: ChaosCounts): string =>
  `chaos: sent ${c.sent}, accepted ${c.accepted}, stored ${c.stored}, lost ${c.lost}, duplicated ${c.duplicated}`;

const NAMESPACE = 'chaos';

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
    // Servers: the NATS cluster and a database of our own, on a port it keeps across restarts.
    const [cluster, bin, dbPort] = await Promise.all([startNatsCluster(3), ensureFerretDbBinary({ binDir: ferretDbBinDir, repoRoot, log: say }), freePort()]);
    cleanup.push(() => cluster.stop());
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
    add('cron', {}, /carecircle started/);
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

    const calm = () => sleep(opts.calmMs);
    for (let round = 1; round <= opts.rounds; round++) {
      await calm();
      fault(`round ${round}: SIGKILL ${workers[0]!.name}`);
      await kill(workers[0]!);
      await start(workers[0]!);
      fault(`${workers[0]!.name} back`);

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

    return { ...(await count(store, partner.institutionId, sent)), mcp: load.mcp, answers: load.answers, replicas, failovers, crashed, faults };
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
  const sent: Sent = { accepted: new Map(), all: [], notAccepted: {}, retries: 0 };
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

  const sendOne = async (id: string) => {
    sent.all.push(id);
    const r = await client.sendEvent({ ...visit({ ...deps.partner }, 'chaos-client'), source_event_id: id });
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
    every(deps.opts.eventsPerSecond, (n) => sendOne(`chaos-${n}`), sends),
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

/** Until the ingest consumer has nothing pending or unacknowledged (NATS may still be settling). */
async function drained(bus: NatsBus, cluster: NatsCluster, s: { stream: string; durable: string }, timeoutMs = 120_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  let last = '';
  for (;;) {
    try {
      const state = await bus.durable.consumerState(s.stream, s.durable);
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
): Promise<Omit<ChaosCounts, 'mcp' | 'answers' | 'replicas' | 'failovers' | 'crashed' | 'faults'>> {
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
  };
}
