// Choosing the bus: NATS when NATS_URL is set, otherwise the in-process bus.
import type { Logger } from '../log.js';
import { MemoryBus } from './memory.js';
import { NatsBus } from './nats.js';
import type { Bus } from './types.js';

export async function openBus(natsUrl: string | undefined, log: Logger, name?: string): Promise<Bus> {
  return natsUrl ? NatsBus.connect(natsUrl, log, name) : new MemoryBus();
}
