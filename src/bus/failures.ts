// Sorting failures by cause, in one place for every surface: transient (a dependency such as the
// database or the bus cannot be reached now; the same request may succeed later: 503 with
// Retry-After) or deterministic (the same request fails the same way again: 4xx, never retried).
import { JetStreamApiError, JetStreamError } from '@nats-io/jetstream';
import { errors as nats } from '@nats-io/transport-node';
import {
  MongoError,
  MongoNetworkError,
  MongoNotConnectedError,
  MongoOperationTimeoutError,
  MongoServerClosedError,
  MongoServerSelectionError,
  MongoTopologyClosedError,
} from 'mongodb';
import { metrics } from '../metrics/index.js';
import { BusClosedError, HandlerFailure, NoRespondersError, RequestTimeoutError, type FailureKind } from './errors.js';

/** Seconds a client is told to wait after a transient failure. */
export const RETRY_AFTER_SEC = 2;

/** Driver errors the mongodb package does not export, by name. */
const TRANSIENT_DRIVER_ERRORS = new Set(['MongoWaitQueueTimeoutError', 'MongoPoolClearedError']);

/** Error labels the server or driver puts on failures worth retrying. */
const TRANSIENT_LABELS = ['RetryableWriteError', 'TransientTransactionError', 'ResetPool', 'RetryableError', 'SystemOverloadedError'];

/**
 * Server codes of a node shutting down, stepping down or unreachable (the driver's retryable
 * set): HostUnreachable, HostNotFound, NetworkTimeout, ShutdownInProgress, PrimarySteppedDown,
 * ExceededTimeLimit, SocketException, NotWritablePrimary, InterruptedAtShutdown,
 * InterruptedDueToReplStateChange, NotPrimaryNoSecondaryOk, NotPrimaryOrSecondary.
 */
const TRANSIENT_SERVER_CODES = new Set([6, 7, 89, 91, 189, 262, 9001, 10107, 11600, 11602, 13435, 13436]);

function isTransientMongo(err: unknown): boolean {
  if (!(err instanceof MongoError)) return false;
  if (
    err instanceof MongoNetworkError ||
    err instanceof MongoServerSelectionError ||
    err instanceof MongoNotConnectedError ||
    err instanceof MongoTopologyClosedError ||
    err instanceof MongoServerClosedError ||
    err instanceof MongoOperationTimeoutError ||
    TRANSIENT_DRIVER_ERRORS.has(err.name)
  )
    return true;
  if (TRANSIENT_LABELS.some((label) => err.hasErrorLabel(label))) return true;
  return typeof err.code === 'number' && TRANSIENT_SERVER_CODES.has(err.code);
}

/**
 * NATS itself (a JetStream key-value bucket or stream, as the rate limits use) cannot answer now:
 * no reply in time, nobody to answer, the connection gone, or a cluster still electing the leader
 * of a stream or of JetStream (JetStream answers "not enabled" or 503 meanwhile).
 */
function isTransientNats(err: unknown): boolean {
  if (
    err instanceof nats.TimeoutError ||
    err instanceof nats.NoRespondersError ||
    err instanceof nats.ClosedConnectionError ||
    err instanceof nats.DrainingConnectionError ||
    err instanceof nats.ConnectionError
  )
    return true;
  // Not exported by the package: known by name (and by the status code the server sent).
  if (err instanceof Error && err.name === 'JetStreamNotEnabled') return true;
  if (err instanceof JetStreamApiError) return err.status === 503;
  const code = err instanceof JetStreamError ? (err as { code?: unknown }).code : undefined;
  return code === 503 || code === 408;
}

/** A dependency cannot be reached right now: the database, the bus (no worker, a timeout, closed) or NATS JetStream. */
export function isTransient(err: unknown): boolean {
  // Follow `cause` a few steps: a wrapper (a store or bus error) keeps the original failure there.
  for (let e = err, depth = 0; e !== undefined && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    if (e instanceof HandlerFailure) return e.kind === 'unavailable';
    if (isTransientMongo(e) || isTransientNats(e)) return true;
    if (e instanceof NoRespondersError || e instanceof RequestTimeoutError || e instanceof BusClosedError) return true;
    if (typeof e !== 'object' || e === null) return false;
  }
  return false;
}

/**
 * The request itself is at fault and will fail the same way every time: a value too deep or out
 * of range for the runtime (RangeError: call stack size, invalid length or date), or text that is
 * not what it claims (SyntaxError from a parser).
 */
export function isDeterministicInput(err: unknown): boolean {
  return err instanceof RangeError || err instanceof SyntaxError;
}

/** How a handler failure travels on the bus; what is neither transient nor the input's fault is ours. */
export function failureKindOf(err: unknown): FailureKind {
  if (err instanceof HandlerFailure) return err.kind;
  if (isTransient(err)) return 'unavailable';
  if (isDeterministicInput(err)) return 'rejected';
  return 'failed';
}

/** The database failure behind `err` (following `cause`), if any. */
function databaseErrorIn(err: unknown): MongoError | undefined {
  for (let e = err, depth = 0; typeof e === 'object' && e !== null && depth < 5; e = (e as { cause?: unknown }).cause, depth++)
    if (e instanceof MongoError) return e;
  return undefined;
}

/** Count a failure in the database metric when the database caused it, by whether it is transient. */
export function countDatabaseError(err: unknown): void {
  const db = databaseErrorIn(err);
  if (db) metrics.databaseErrors.inc({ transient: String(isTransientMongo(db)) });
}
