// Choosing the bus: NATS when NATS_URL is set, otherwise the in-process bus.
import type { Logger } from '../log.js';
import { MemoryBus } from './memory.js';
import { NatsBus } from './nats.js';
import type { Bus } from './types.js';

/** `service`: this process serves requests, as endpoints of a NATS service (`nats micro`).
 *  `replicas`: copies a NATS cluster keeps of each stream and key-value bucket the bus creates. */
export async function openBus(natsUrl: string | undefined, log: Logger, name?: string, opts: { service?: boolean; replicas?: number } = {}): Promise<Bus> {
  return natsUrl ? NatsBus.connect(natsUrl, log, name, opts) : new MemoryBus();
}
