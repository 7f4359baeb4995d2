// Choosing the limiter from the bus: shared key-value state where the bus has it (NATS), else memory.
import type { Bus } from '../bus/types.js';
import type { Logger } from '../log.js';
import { KvLimiter } from './kvLimiter.js';
import type { Clock, Limiter } from './limiter.js';
import { MemoryLimiter } from './memory.js';

/** The key-value bucket holding the rate-limit state of the deployment with this bus namespace. */
export const rateBucketName = (namespace: string): string => `cc_rate_limits${namespace ? `_${namespace.replace(/[^A-Za-z0-9_-]/g, '_')}` : ''}`;

/** Every process on a NATS bus shares the buckets; the in-process bus is one process, so memory is exact. */
export function openLimiter(bus: Bus, namespace: string, log: Logger, clock: Clock = Date.now): Limiter {
  const kv = bus.kv;
  if (!kv) return new MemoryLimiter(clock);
  const name = rateBucketName(namespace);
  const open = async () => {
    const bucket = await kv.bucket({ name });
    if (!bucket.expires)
      log.warn({ bucket: name }, 'this nats-server has no per-message TTLs (2.11 and later have them): rate-limit entries stay until purged');
    return bucket;
  };
  return new KvLimiter(open, clock);
}
