// Publishes made during one turn of the event loop, sent to NATS together: the client writes to its
// socket once per microtask checkpoint, and each HTTP request (or each reply) used to be one; a write
// to the server, which does its delivery work in the sender's system call, was the largest single
// cost of a gateway and a worker per request.

/** Sends queued until the event loop has handled every socket that was ready (setImmediate). */
export class Outbox {
  private queued: (() => void)[] = [];
  private scheduled = false;

  /** `send` runs later in this turn of the event loop; it must catch its own failures. */
  add(send: () => void): void {
    this.queued.push(send);
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(this.flush);
    }
  }

  /** Send everything queued now (the connection is about to drain, say). */
  readonly flush = (): void => {
    this.scheduled = false;
    const sends = this.queued;
    if (!sends.length) return;
    this.queued = [];
    for (const send of sends) send();
  };
}
