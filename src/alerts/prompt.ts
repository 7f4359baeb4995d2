// New care records alert within seconds: every append to the care timeline is announced on the bus
// (src/service.ts), and each worker reads the new records at once and sends what that decided. One
// read at a time per process, and one more right after when told again meanwhile, so a burst of
// records costs two reads, not one per record. Several processes reading at once stay exactly-once:
// each alert is claimed by inserting its key (src/alerts/outbox.ts). The minute run stays the
// safety net, for an announcement lost on the way and a record stored late after its `receivedAt`.
import type { Bus } from '../bus/types.js';
import { subjects } from '../bus/subjects.js';
import { CARE_EVENT_STREAM } from '../family/careEvents.js';
import type { Logger } from '../log.js';
import type { Stoppable } from '../slice/contract.js';
import { QUICK_SCAN_OVERLAP_MS } from './engine.js';

/** What the prompt needs of the alert engine. */
export interface ReadsNewRecords {
  scanRecords(overlapMs?: number): Promise<{ read: number; decided: number }>;
  deliver(): Promise<unknown>;
}

/**
 * Read new records whenever care events are stored. `sendsItself`: the engine hands each new
 * delivery to a work queue that sends it (NATS); otherwise this process sends what it decided.
 */
export function startAlertPrompt(bus: Pick<Bus, 'subscribe'>, namespace: string, engine: ReadsNewRecords, sendsItself: boolean, log: Logger): Stoppable {
  let running: Promise<void> | null = null;
  let again = false;
  let stopped = false;
  const pass = async () => {
    do {
      again = false;
      try {
        // A short look back: these reads run back to back under load; the minute run looks back further.
        const { decided } = await engine.scanRecords(QUICK_SCAN_OVERLAP_MS);
        if (decided && !sendsItself) await engine.deliver();
      } catch (err) {
        log.warn({ err }, 'reading new care records for alerts failed; the minute run reads them');
      }
    } while (again && !stopped);
  };
  const told = () => {
    if (stopped) return;
    if (running) {
      again = true;
      return;
    }
    running = pass().finally(() => (running = null));
  };
  const sub = bus.subscribe(subjects(namespace).recordsStored, (m) => {
    if ((m.data as { stream?: unknown } | null)?.stream === CARE_EVENT_STREAM.name) told();
  });
  return {
    stop: async () => {
      stopped = true;
      await sub.drain();
      await running;
    },
  };
}
