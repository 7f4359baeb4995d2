// How `carecircle partner` tells the running processes of a change it wrote: over NATS it waits for
// NATS as long as it takes (the change must reach every process), saying so every few seconds.
import { setTimeout as sleep } from 'node:timers/promises';
import type { Credentials } from '../auth/credentials.js';
import type { Bus } from '../bus/types.js';
import type { Announce, IssuedSecret } from './records.js';

/** Between progress lines while the command waits for NATS. */
const PROGRESS_EVERY_MS = 5_000;
/** NATS connected but silent this long counts as waiting for it (an answer takes milliseconds). */
const SILENT_NATS_MS = 1_000;

export interface Announcing {
  /** The command's NATS connection; absent without NATS_URL. */
  bus?: Bus;
  /** The command's credentials: over NATS, its place on the member list. */
  credentials: Credentials;
  /** NATS_URL as it may be printed (no user or password). */
  shownUrl?: string;
  /** A secret the change issued, as soon as the store has it and before anything waits. */
  issued?(institutionId: string, secret: IssuedSecret): void;
  /** Once, when the command starts waiting for NATS. */
  waiting?(institutionId: string, secret: IssuedSecret | undefined): void;
}

/** What holds for a process the change may not have been sent to (the command stopped while NATS
 *  was away): whatever a process keeps it read at most 5 minutes earlier (src/auth/credentials.ts). */
export const NOT_HEARD =
  'A running process that did not hear of it may go on using what it read of this institution before the change for up to 5 minutes; after that every process reads it again.';

/** What holds for a process that was sent the change and did not confirm it (src/auth/hearing.ts):
 *  cut off, it trusts nothing it kept and forgets it all once back; still connected, it is bounded
 *  by its own heartbeat and the 5 minutes. */
export const UNCONFIRMED =
  'A process cut off from NATS stops using what it read of this institution at once if its connection drops, otherwise at most 4 s after it last heard its own heartbeat (sent every 2 s), and reads it again once it is back. ' +
  'A process that stayed connected but did not answer (its event loop stalled, say) may use it until the change reaches it or 4 s pass without its heartbeat, and at most 5 minutes after it read it.';

export const STOPPED_WAITING = `stopped before every running process heard of the change. The change is saved. ${NOT_HEARD}`;

/** PartnerStore's announcement for the command; Ctrl-C while it waits exits 130 with what holds. */
export function announcing(o: Announcing): Announce {
  return async (id, secret) => {
    if (secret) o.issued?.(id, secret);
    const { bus, credentials } = o;
    if (!bus) return credentials.changed('institution', [id]);
    const started = Date.now();
    let phase: 'nats' | 'acks' = 'nats';
    let phaseSince = started;
    let told = 0;
    const tell = () => {
      const now = Date.now();
      const stuck = !bus.ready() || (phase === 'nats' && now - phaseSince >= SILENT_NATS_MS);
      if (!stuck || now - told < PROGRESS_EVERY_MS) return;
      if (!told) o.waiting?.(id, secret);
      told = now;
      process.stderr.write(
        `waiting for NATS at ${o.shownUrl ?? 'NATS_URL'} to announce the change to the running processes (saved already; ${Math.round((now - started) / 1000)} s) …\n`,
      );
    };
    const stopped = (signal: NodeJS.Signals) => {
      process.stderr.write(`carecircle partner: ${STOPPED_WAITING}\n`);
      process.exit(signal === 'SIGINT' ? 130 : 143);
    };
    const ticker = setInterval(tell, 250);
    process.on('SIGINT', stopped).on('SIGTERM', stopped);
    try {
      for (let back = false; ; back = true) {
        phase = 'nats';
        phaseSince = Date.now();
        try {
          // NATS answers first: a flush while it is away fails once the client dials again.
          await bus.flush();
          // After a wait the processes last heard from may be stale: hear them again before counting.
          if (back) await credentials.rejoin();
        } catch {
          await sleep(250);
          continue;
        }
        phase = 'acks';
        let dropped = false;
        const watch = setInterval(() => void (bus.ready() || (dropped = true)), 100);
        try {
          credentials.lastReach = undefined;
          await credentials.changed('institution', [id]);
        } catch (err) {
          if (!dropped && bus.ready()) throw err;
        } finally {
          clearInterval(watch);
        }
        // Announcing again is harmless (a process forgets the same record twice): do so whenever
        // NATS went away while some process had not yet said it heard.
        const reach = credentials.lastReach;
        if (reach && (!dropped || !reach.silent)) return;
      }
    } finally {
      clearInterval(ticker);
      process.off('SIGINT', stopped).off('SIGTERM', stopped);
    }
  };
}
