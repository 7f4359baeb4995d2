// The worker process's last line of defence: an error that escaped every handler is logged and the
// process keeps serving, instead of one request taking the process (and the next, and the next) down.
import type { Logger } from '../log.js';
import { metrics } from '../metrics/index.js';

let holders = 0;
let current: Logger | undefined;

function onException(err: unknown, origin: string): void {
  metrics.workerCrashesAvoided.inc({ origin: 'uncaught_exception' });
  current?.error({ err, origin }, 'unexpected error outside any request; still serving');
}

function onRejection(reason: unknown): void {
  metrics.workerCrashesAvoided.inc({ origin: 'unhandled_rejection' });
  current?.error({ err: reason, origin: 'unhandledRejection' }, 'unexpected error outside any request; still serving');
}

/** Install the guard while workers run in this process; the returned function removes it again. */
export function guardProcess(log: Logger): () => void {
  current = log;
  if (holders++ === 0) {
    process.on('uncaughtException', onException);
    process.on('unhandledRejection', onRejection);
  }
  let released = false;
  return () => {
    if (released) return;
    released = true;
    if (--holders === 0) {
      process.off('uncaughtException', onException);
      process.off('unhandledRejection', onRejection);
      current = undefined;
    }
  };
}
