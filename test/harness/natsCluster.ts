/**
 * A real nats-server cluster on loopback: three JetStream nodes (own store directories) routed to
 * each other, each on a fixed free port, so one can be killed with SIGKILL and started again on the
 * same ports and store, as a node crashes and comes back in production.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { spawnServerProcess, waitForPort, type ServerProcess } from '../../src/store/embedded/process.js';
import { freePort, natsServerBinary } from './servers.js';

export interface NatsNode {
  readonly name: string;
  readonly url: string;
  running(): boolean;
  /** SIGKILL: no shutdown, no leadership handed over. */
  kill(): Promise<void>;
  /** Start again on the same ports and store directory. */
  start(): Promise<void>;
}

export interface NatsCluster {
  nodes: NatsNode[];
  /** Every node's client URL, comma-separated (what NATS_URL takes). */
  url: string;
  /** The node leading a stream's replica group now. */
  streamLeader(stream: string): Promise<NatsNode>;
  /** How many copies of a stream the cluster keeps. */
  replicas(stream: string): Promise<number>;
  /** Until JetStream answers and every replica of `streams` is current again. */
  settled(streams: string[], timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
}

const log = (line: string) => process.stderr.write(`[nats cluster] ${line}\n`);

export async function startNatsCluster(size = 3): Promise<NatsCluster> {
  const bin = natsServerBinary();
  const ports = await Promise.all(Array.from({ length: size }, async () => ({ client: await freePort(), route: await freePort() })));
  const routes = ports.map((p) => `nats://127.0.0.1:${p.route}`).join(',');
  const baseDir = mkdtempSync(path.join(os.tmpdir(), 'carecircle-nats-cluster-'));

  const nodes = ports.map((p, i) => {
    const name = `n${i + 1}`;
    const storeDir = path.join(baseDir, name);
    const args = [
      '-a',
      '127.0.0.1',
      '-p',
      String(p.client),
      '-n',
      name,
      '-js',
      '-sd',
      storeDir,
      '--cluster_name',
      'carecircle',
      '--cluster',
      `nats://127.0.0.1:${p.route}`,
      '--routes',
      routes,
    ];
    let proc: ServerProcess | undefined;
    // A node we killed on purpose is not news: its output tail is shown only when starting fails.
    let killing = false;
    const nodeLog = (line: string) => void (killing || log(line));
    const node: NatsNode = {
      name,
      url: `nats://127.0.0.1:${p.client}`,
      running: () => proc !== undefined,
      kill: async () => {
        const gone = proc;
        proc = undefined;
        if (!gone) return;
        killing = true;
        gone.child.ref(); // started() unref'd it: keep the event loop alive until the exit is seen
        gone.child.kill('SIGKILL');
        await gone.exited;
        killing = false;
      },
      start: async () => {
        if (proc) return;
        // Its ports were ours a moment ago; a killed node's route port can linger briefly.
        for (let attempt = 1; ; attempt++) {
          const started = spawnServerProcess(bin, args, { name: `nats-server ${name}`, log: nodeLog, captureStdout: true });
          try {
            await waitForPort(p.client, { timeoutMs: 30_000, exited: started.exited, name: `nats-server ${name}` });
            started.started();
            proc = started;
            return;
          } catch (err) {
            await started.stop();
            if (attempt >= 5 || !/address already in use/i.test(started.tail())) {
              await started.fail(err as Error);
              throw err;
            }
            await sleep(500);
          }
        }
      },
    };
    return node;
  });

  const url = nodes.map((n) => n.url).join(',');
  let admin: NatsConnection | undefined;
  const stop = async () => {
    await admin?.close().catch(() => undefined);
    await Promise.all(nodes.map((n) => n.kill()));
    rmSync(baseDir, { recursive: true, force: true });
  };
  try {
    await Promise.all(nodes.map((n) => n.start()));
    admin = await connect({ servers: url.split(','), maxReconnectAttempts: -1, reconnectTimeWait: 250 });
    const cluster: NatsCluster = {
      nodes,
      url,
      streamLeader: async (stream) => {
        // Right after a node went down the group may still be electing: ask again for a while.
        const until = Date.now() + 15_000;
        for (;;) {
          let why: string;
          try {
            const info = await (await jetstreamManager(admin!, { timeout: 2_000 })).streams.info(stream);
            const node = nodes.find((n) => n.name === info.cluster?.leader && n.running());
            if (node) return node;
            why = `led by ${info.cluster?.leader ?? 'no node'}`;
          } catch (err) {
            why = (err as Error).message;
          }
          if (Date.now() > until) throw new Error(`stream ${stream} has no leader among the running nodes: ${why}`);
          await sleep(250);
        }
      },
      replicas: async (stream) => (await (await jetstreamManager(admin!)).streams.info(stream)).config.num_replicas,
      settled: async (streams, timeoutMs = 60_000) => {
        const until = Date.now() + timeoutMs;
        let last = 'JetStream not answering';
        for (;;) {
          try {
            const jsm = await jetstreamManager(admin!, { timeout: 2_000 });
            const lagging: string[] = [];
            for (const s of streams) {
              const info = await jsm.streams.info(s);
              const replicas = info.cluster?.replicas ?? [];
              if (!info.cluster?.leader) lagging.push(`${s}: no leader`);
              for (const r of replicas) if (!r.current || r.offline) lagging.push(`${s}: ${r.name} ${r.offline ? 'offline' : 'behind'}`);
              if (replicas.length + 1 < size) lagging.push(`${s}: ${replicas.length + 1} of ${size} replicas`);
            }
            if (!lagging.length) return;
            last = lagging.join('; ');
          } catch (err) {
            last = (err as Error).message;
          }
          if (Date.now() > until) throw new Error(`nats cluster did not settle within ${timeoutMs / 1000} s: ${last}`);
          await sleep(250);
        }
      },
      stop,
    };
    // JetStream answers once the nodes have elected a meta leader.
    const until = Date.now() + 60_000;
    for (;;) {
      try {
        await (await jetstreamManager(admin, { timeout: 2_000 })).getAccountInfo();
        break;
      } catch (err) {
        if (Date.now() > until) throw new Error(`JetStream never answered on the cluster: ${(err as Error).message}`);
        await sleep(250);
      }
    }
    return cluster;
  } catch (err) {
    await stop();
    throw err;
  }
}
