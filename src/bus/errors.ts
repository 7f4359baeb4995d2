// Named bus failures: callers branch on the class, never on a message string.

export class BusError extends Error {
  override name = 'BusError';
}

/** Nobody is subscribed to the subject right now (no worker running, or all went away). */
export class NoRespondersError extends BusError {
  override name = 'NoRespondersError';
  constructor(readonly subject: string, options?: ErrorOptions) {
    super(`no worker is serving ${subject}`, options);
  }
}

/** A worker took the request but did not answer before the deadline. */
export class RequestTimeoutError extends BusError {
  override name = 'RequestTimeoutError';
  constructor(readonly subject: string, readonly timeoutMs: number, options?: ErrorOptions) {
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

/** The worker answered with an error envelope (its handler failed). */
export class RemoteHandlerError extends BusError {
  override name = 'RemoteHandlerError';
  constructor(readonly subject: string, message: string) {
    super(message);
  }
}
