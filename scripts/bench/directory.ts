// Part (a): the directory endpoint's tools/call search_care_resources, three ways side by side:
// carecircle embedded (one process, in-process bus), gateway → NATS → worker in separate
// processes, and the official SDK's stateless server calling the same handler.
import { randomBytes } from 'node:crypto';
import type { Infra, Watched } from './infra.js';
import { loadConfig } from '../../src/config.js';
import { directoryThreadCount } from '../../src/worker/threads.js';
import { KNOBS } from './knobs.js';
import { combineRuns, cpuCell, cpuTotal, problems, runLoad, type Measured } from './load.js';
import { carecircleEnv, forkReady, startCarecircle, stopAll, type Child } from './procs.js';
import { MCP_HEADERS, searchBodies } from './queries.js';
import { finding, fixed, heading, note, progress, rate, ratio, table } from './report.js';

interface Target {
  label: string;
  url: string;
  watched: Watched[];
  /** Whether the target uses the store at all (the SDK server does not). */
  store: boolean;
}

/** One search sent to every target: they must answer it alike, or the comparison means nothing. */
async function sameAnswers(targets: Target[], body: string): Promise<void> {
  const answers = await Promise.all(
    targets.map(async (t) => {
      const res = await fetch(t.url, { method: 'POST', headers: MCP_HEADERS, body });
      const json = (await res.json()) as { result?: { structuredContent?: unknown } };
      if (res.status !== 200 || !json.result?.structuredContent) throw new Error(`${t.label} answered ${res.status}: ${JSON.stringify(json).slice(0, 300)}`);
      return JSON.stringify(json.result.structuredContent);
    }),
  );
  if (new Set(answers).size !== 1) throw new Error(`the targets answer the same search differently: ${answers.map((a) => a.slice(0, 200)).join(' | ')}`);
}

export async function benchDirectory(infra: Infra): Promise<void> {
  heading('(a) Directory: tools/call search_care_resources');
  const children: Child[] = [];
  const cleanups: (() => void)[] = [];
  try {
    progress('directory: starting carecircle embedded, gateway + worker over NATS, and the SDK server…');
    const embeddedEnv = await carecircleEnv(infra.database('dir_embedded'));
    const natsEnv = await carecircleEnv(infra.database('dir_nats'), { NATS_URL: infra.natsUrl, BUS_NAMESPACE: `bench${randomBytes(4).toString('hex')}` });
    cleanups.push(embeddedEnv.cleanup, natsEnv.cleanup);
    const embedded = await startCarecircle('carecircle', 'all', embeddedEnv.env);
    children.push(embedded);
    // The gateway first: if it has to move its listeners, the worker starts with the URLs it took.
    const gateway = await startCarecircle('gateway', 'gateway', natsEnv.env);
    children.push(gateway);
    const worker = await startCarecircle('worker', 'worker', natsEnv.env);
    children.push(worker);
    const sdk = await forkReady('SDK server', 'sdkServer.ts', [], process.env);
    children.push(sdk);

    const targets: Target[] = [
      { label: 'official SDK, stateless (new server + transport per request)', url: sdk.urls.mcp!, watched: [sdk], store: false },
      { label: 'carecircle embedded (one process, in-process bus)', url: `${embedded.urls.site}/api/mcp`, watched: [embedded, infra.store], store: true },
      { label: 'carecircle gateway → NATS → worker', url: `${gateway.urls.site}/api/mcp`, watched: [gateway, worker, infra.nats, infra.store], store: true },
    ];
    const bodies = searchBodies();
    await sameAnswers(targets, bodies[0]!);
    progress(`directory: ${bodies.length} distinct searches; all three targets answer them alike`);

    const rows: (string | number)[][] = [];
    const clientMs: number[] = [];
    for (const connections of KNOBS.concurrency) {
      const runs: Measured[][] = targets.map(() => []);
      for (let round = 0; round < KNOBS.rounds; round++) {
        const order = round % 2 === 0 ? [0, 1, 2] : [2, 1, 0];
        for (const i of order) {
          const target = targets[i]!;
          const m = await runLoad(
            {
              kind: 'http',
              url: target.url,
              headers: MCP_HEADERS,
              bodies,
              expect: 200,
              connections,
              warmup: Math.ceil(KNOBS.warmup / KNOBS.rounds),
              maxRequests: Math.ceil(KNOBS.requests / KNOBS.rounds),
              maxSeconds: KNOBS.seconds / KNOBS.rounds,
            },
            target.watched,
            target.store ? { storeCommands: infra.storeCommands } : {},
          );
          progress(`directory c=${connections} ${target.label}: ${rate(m.perSecond)} req/s, p50 ${fixed(m.p50)} ms, p99 ${fixed(m.p99)} ms`);
          if (m.clientMs !== undefined) clientMs.push(m.clientMs);
          runs[i]!.push(m);
        }
      }
      const results = runs.map(combineRuns);
      const sdkResult = results[0]!;
      const sdkCpu = cpuTotal(sdkResult.cpu);
      results.forEach((m, i) => {
        const cpu = cpuTotal(m.cpu);
        rows.push([
          targets[i]!.label,
          connections,
          rate(m.perSecond),
          fixed(m.p50),
          fixed(m.p99),
          ratio(m.perSecond / sdkResult.perSecond),
          ratio(m.p99 / sdkResult.p99),
          cpuCell(m.cpu),
          cpu && sdkCpu ? ratio(sdkCpu / cpu) : '–',
          fixed(m.storeCommands),
          problems(m),
        ]);
        if (i === 0) return;
        const short = i === 1 ? 'embedded' : 'over NATS';
        const meets = connections === KNOBS.concurrency[0] ? m.perSecond >= 3 * sdkResult.perSecond && m.p99 <= sdkResult.p99 : undefined;
        finding({
          part: 'directory',
          what: `${short} vs SDK server, c=${connections}: req/s (p99; requests per CPU second)`,
          value: `${ratio(m.perSecond / sdkResult.perSecond)} (${ratio(m.p99 / sdkResult.p99)}; ${cpu && sdkCpu ? ratio(sdkCpu / cpu) : '–'})`,
          ...(meets === undefined ? {} : { target: '≥ 3× req/s, p99 ≤ 1×', meets }),
        });
        if (connections === KNOBS.concurrency[0] && m.storeCommands !== undefined)
          finding({
            part: 'directory',
            what: `${short}: store commands per request`,
            value: fixed(m.storeCommands),
            target: '0',
            meets: m.storeCommands < 0.005,
          });
      });
    }
    table(
      [
        'server',
        'conns',
        'req/s',
        'p50 ms',
        'p99 ms',
        'req/s vs SDK',
        'p99 vs SDK',
        'CPU ms per request (total = by process)',
        'requests per CPU second vs SDK',
        'store commands per request',
        'unexpected',
      ],
      rows,
    );
    note(
      `Each server and concurrency: ${KNOBS.rounds} runs alternating with the other servers, each of ${Math.ceil(KNOBS.warmup / KNOBS.rounds)} warm-up requests, then up to ${Math.ceil(KNOBS.requests / KNOBS.rounds)} requests or ${KNOBS.seconds / KNOBS.rounds} s, cycling through ${bodies.length} distinct searches in the same order for every server; rates are over all runs, latencies their weighted mean. ` +
        `The carecircle rate limit stays on (at a limit that never refuses). carecircle embedded runs with DIRECTORY_THREADS=auto: ${directoryThreadCount(loadConfig({}))} worker thread(s) for the directory on this machine. The load generator used ${fixed(clientMs.length ? clientMs.reduce((a, b) => a + b, 0) / clientMs.length : undefined, 3)} ms of CPU per request.`,
    );
  } finally {
    await stopAll(children);
    for (const cleanup of cleanups) cleanup();
  }
}
