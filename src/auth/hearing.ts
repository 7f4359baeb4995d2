// When a process may trust the credentials and records it keeps: only while it cannot have missed
// a revocation, judged from its NATS connection and its own heartbeat, at the cost of a few field reads.
import type { Bus } from '../bus/types.js';

export const HEARTBEAT_MS = 2_000;
/** A process not heard from for this long is no longer waited for (it stopped, or was killed). */
export const MEMBER_TTL_MS = 3 * HEARTBEAT_MS;

/**
 * A cache's `trustworthy` rule (one per cache: each drops what it kept on its own first read after
 * a gap). Not trusted, and so dropped: while the connection is down; once, after it dropped, since
 * core NATS does not replay what was published meanwhile and the revoker stopped waiting; and
 * while the process has not heard its own heartbeat for longer than others wait for a silent
 * process (the connection looks up but carries nothing, or the event loop stalled).
 */
export function trustRule(bus: Bus | undefined, lastEcho: () => number): () => boolean {
  if (!bus || bus.kind === 'memory') return () => true;
  let epoch = bus.epoch;
  return () => {
    if (bus.epoch !== epoch) {
      // Everything kept goes with this answer, reads in flight included: all of it may predate the gap.
      epoch = bus.epoch;
      return false;
    }
    return bus.ready() && Date.now() - lastEcho() < MEMBER_TTL_MS - HEARTBEAT_MS;
  };
}
