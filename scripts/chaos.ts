// The chaos run at length (`npm run chaos`): three rounds of killing a worker with the cron leader,
// a gateway, the NATS node leading the ingest stream and the database, under steady ingest (with
// notes that alert by mail) and MCP load; exits 1 on any lost or duplicated event, and on any alert
// mail lost or doubled. CHAOS_ROUNDS, CHAOS_EVENTS_PER_SECOND, CHAOS_MCP_PER_SECOND,
// CHAOS_CALM_MS and CHAOS_DB_OUTAGE_MS tune it; CHAOS_LOG_DIR keeps every process's log lines there.
import { chaosLine, runChaos } from '../test/harness/chaos.js';

const knob = (name: string, fallback: number): number => {
  const raw = process.env[name];
  const value = raw === undefined || raw === '' ? fallback : Number(raw);
  if (!Number.isFinite(value) || value < 0) {
    process.stderr.write(`${name}=${raw}: must be a number of 0 or more\n`);
    process.exit(2);
  }
  return value;
};

const counts = await runChaos({
  rounds: knob('CHAOS_ROUNDS', 3),
  eventsPerSecond: knob('CHAOS_EVENTS_PER_SECOND', 15),
  mcpPerSecond: knob('CHAOS_MCP_PER_SECOND', 5),
  calmMs: knob('CHAOS_CALM_MS', 8_000),
  dbOutageMs: knob('CHAOS_DB_OUTAGE_MS', 5_000),
  ...(process.env.CHAOS_LOG_DIR ? { logDir: process.env.CHAOS_LOG_DIR } : {}),
});
const { faults, ...figures } = counts;
process.stdout.write(`${faults.map((f) => `  ${f}`).join('\n')}\n${JSON.stringify(figures, null, 2)}\n${chaosLine(counts)}\n`);
const alertsOnce = counts.alerts.due > 0 && counts.alerts.lost === 0 && counts.alerts.doubled === 0 && counts.alerts.stray === 0;
process.exit(counts.lost === 0 && counts.duplicated === 0 && counts.crashed.length === 0 && alertsOnce ? 0 : 1);
