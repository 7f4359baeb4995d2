// New care records alert within seconds: every append to the care timeline is announced on the bus
// with the records it stored (src/service.ts), and each worker runs the record rules on those
// records at once and sends what that decided, without reading care events back (on the embedded
// store that read goes through the whole collection). An announcement without its records (an
// append too large to carry) falls back to the read of new records by `receivedAt`. One pass at a
// time per process; what is announced meanwhile is taken together by the next pass. Several
// processes deciding the same records stay exactly-once: each alert is claimed by inserting its key
// (src/alerts/outbox.ts). The minute run stays the safety net, for an announcement lost on the way.
import type { Bus } from '../bus/types.js';
import { subjects } from '../bus/subjects.js';
import { CARE_EVENT_STREAM } from '../family/careEvents.js';
import type { CareEventRecord } from '../family/records.js';
import type { Logger } from '../log.js';
import type { Stoppable } from '../slice/contract.js';
import { QUICK_SCAN_OVERLAP_MS } from './engine.js';

/** Announced records waiting for the next pass at most; past this the pass reads new records instead. */
const MAX_WAITING = 10_000;

/** What the prompt needs of the alert engine. */
export interface ReadsNewRecords {
  scanRecords(overlapMs?: number): Promise<{ read: number; decided: number }>;
  decideRecords(records: readonly CareEventRecord[]): Promise<{ decided: number }>;
  deliver(): Promise<unknown>;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const instantOf = (v: unknown): Date | null => {
  const d = typeof v === 'string' ? new Date(v) : null;
  return d && Number.isFinite(d.getTime()) ? d : null;
};

/** The care records of an announcement as JSON carried them (dates as text), or null when it carries none the rules can read. */
export function announcedCareRecords(data: unknown): CareEventRecord[] | null {
  if (!isObject(data) || !Array.isArray(data.records)) return null;
  const out: CareEventRecord[] = [];
  for (const r of data.records as unknown[]) {
    if (!isObject(r)) return null;
    const occurredAt = instantOf(r.occurredAt);
    const receivedAt = instantOf(r.receivedAt);
    const ok =
      typeof r._id === 'string' &&
      typeof r.lovedOneId === 'string' &&
      typeof r.workspaceId === 'string' &&
      typeof r.eventType === 'string' &&
      isObject(r.payload) &&
      occurredAt &&
      receivedAt;
    if (!ok) return null;
    out.push({ ...(r as unknown as CareEventRecord), occurredAt, receivedAt });
  }
  return out;
}

/**
 * Decide on new care records whenever care events are stored. `sendsItself`: the engine hands each
 * new delivery to a work queue that sends it (NATS); otherwise this process sends what it decided.
 */
export function startAlertPrompt(bus: Pick<Bus, 'subscribe'>, namespace: string, engine: ReadsNewRecords, sendsItself: boolean, log: Logger): Stoppable {
  let running: Promise<void> | null = null;
  let waiting: CareEventRecord[] = [];
  let scan = false;
  let stopped = false;
  const pass = async () => {
    while ((waiting.length || scan) && !stopped) {
      const records = waiting;
      const read = scan;
      waiting = [];
      scan = false;
      try {
        let decided = records.length ? (await engine.decideRecords(records)).decided : 0;
        // A short look back: these reads run back to back under load; the minute run looks back further.
        if (read) decided += (await engine.scanRecords(QUICK_SCAN_OVERLAP_MS)).decided;
        if (decided && !sendsItself) await engine.deliver();
      } catch (err) {
        log.warn({ err }, 'deciding on new care records for alerts failed; the minute run reads them');
      }
    }
  };
  const told = (records: CareEventRecord[] | null) => {
    if (stopped) return;
    if (records && waiting.length + records.length <= MAX_WAITING) waiting.push(...records);
    else scan = true;
    running ??= pass().finally(() => (running = null));
  };
  const sub = bus.subscribe(subjects(namespace).recordsStored, (m) => {
    if (isObject(m.data) && m.data.stream === CARE_EVENT_STREAM.name) told(announcedCareRecords(m.data));
  });
  return {
    stop: async () => {
      stopped = true;
      await sub.drain();
      await running;
    },
  };
}
