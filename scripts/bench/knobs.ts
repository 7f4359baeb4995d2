// The benchmark's tuning knobs, read once from the environment (BENCH_*), with their defaults.

function positive(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number, not "${raw}"`);
  return value;
}

function list(name: string, fallback: number[]): number[] {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const values = raw.split(',').map((s) => Number(s.trim()));
  if (!values.length || values.some((v) => !Number.isInteger(v) || v <= 0))
    throw new Error(`${name} must be positive integers separated by commas, not "${raw}"`);
  return values;
}

export const KNOBS = {
  /** Most requests one measured load run sends (after its warm-up). */
  requests: positive('BENCH_REQUESTS', 50_000),
  /** Longest one measured load run lasts, in seconds. */
  seconds: positive('BENCH_SECONDS', 10),
  /** Connections: the directory runs at each; the workspace and ingest runs at the first. */
  concurrency: list('BENCH_CONCURRENCY', [16, 64]),
  /** Directory runs per server and concurrency, alternating servers (A B C C B A…) so drift in the machine's load weighs on all alike. */
  rounds: positive('BENCH_ROUNDS', 2),
  /** Requests each load run sends before it is measured (JIT, connections, caches). */
  warmup: positive('BENCH_WARMUP', 300),
  /** Bridge round trips each way, one at a time. */
  bridgeRounds: positive('BENCH_BRIDGE_ROUNDS', 500),
  /** Largest store size of the growth part (rows in each grown collection). */
  growthMax: positive('BENCH_GROWTH_MAX', 100_000),
  /** Calls per endpoint and size in the growth part (the first, a warm-up, is not counted). */
  growthCalls: positive('BENCH_GROWTH_CALLS', 7),
  /** Observations of the portal part's patient, and its other resources (conditions, immunizations, visits…). */
  portalObservations: positive('BENCH_PORTAL_OBSERVATIONS', 1_000),
  portalOthers: positive('BENCH_PORTAL_OTHERS', 100),
  /** Resources per page the portal part's local portal serves. */
  portalPageSize: positive('BENCH_PORTAL_PAGE', 100),
  /** Partner notes the alerts part sends, one at a time, each timed from its 202 to the alert mail. */
  alertNotes: positive('BENCH_ALERTS', 50),
  /** Within the alerts part's partner load (the ingest part's), one event in this many is a note that should alert. */
  alertEvery: Math.max(1, Math.round(positive('BENCH_ALERTS_EVERY', 20))),
  /** Families of the digests part, each one loved one and one member whose weekly digest is due. */
  digestLovedOnes: Math.max(1, Math.round(positive('BENCH_DIGEST_LOVED_ONES', 1_000))),
  /** Care events a day of each loved one's week in the digests part. */
  digestEventsPerDay: Math.max(1, Math.round(positive('BENCH_DIGEST_EVENTS_PER_DAY', 8))),
  /** Log level of the carecircle processes measured (the operator default is info). */
  logLevel: process.env.BENCH_LOG_LEVEL ?? 'info',
};
