// Named bus failures: callers branch on the class, never on a message string.

export class BusError extends Error {
  override name = 'BusError';
}

/** Nobody is subscribed to the subject right now (no worker running, or all went away). */
export class NoRespondersError extends BusError {
  override name = 'NoRespondersError';
  constructor(
    readonly subject: string,
    options?: ErrorOptions,
  ) {
    super(`no worker is serving ${subject}`, options);
  }
}

/** A worker took the request but did not answer before the deadline. */
export class RequestTimeoutError extends BusError {
  override name = 'RequestTimeoutError';
  constructor(
    readonly subject: string,
    readonly timeoutMs: number,
    options?: ErrorOptions,
  ) {
    super(`no reply on ${subject} within ${timeoutMs} ms`, options);
  }
}

/** The bus is closed or draining; no new requests are accepted. */
export class BusClosedError extends BusError {
  override name = 'BusClosedError';
  constructor(options?: ErrorOptions) {
    super('the bus is closed', options);
  }
}

/**
 * Why a handler gave no reply, carried on the wire so the requester answers by cause:
 * - `failed`: a fault of ours (HTTP 500);
 * - `rejected`: the request itself cannot be served, and sending it again gives the same (HTTP 400);
 * - `too_large`: the reply is larger than the bus or `MAX_REPLY_BYTES` allows (HTTP 413);
 * - `unavailable`: a dependency (database, bus) is down for now (HTTP 503 with Retry-After).
 */
export type FailureKind = 'failed' | 'rejected' | 'too_large' | 'unavailable';

/** Thrown by a handler to say why it failed; any other error travels as `failed`. */
export class HandlerFailure extends Error {
  override name = 'HandlerFailure';
  constructor(
    readonly kind: FailureKind,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/** The worker answered with an error envelope (its handler failed, for the reason in `kind`). */
export class RemoteHandlerError extends BusError {
  override name = 'RemoteHandlerError';
  constructor(
    readonly subject: string,
    message: string,
    readonly kind: FailureKind = 'failed',
  ) {
    super(message);
  }
}

/** The request cannot be put on the bus: not encodable (nested too deeply), or larger than the bus carries. */
export class RequestEncodingError extends BusError {
  override name = 'RequestEncodingError';
  constructor(
    readonly subject: string,
    readonly tooLarge: boolean,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}
