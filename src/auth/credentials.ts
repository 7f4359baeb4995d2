// A process's credentials (API keys, sessions, OAuth grants and token revocations) and the family
// records a request re-derives access from, served from memory, with a change that reaches every
// process before the changing request returns: the writer writes the store first, then tells every
// process over the bus and waits for each one's acknowledgement. Built once per process by the role
// wiring and handed to the slices in their SliceContext; the parts are the two caches
// (credentialCache.ts), the member list (membership.ts) and the protocol (revocations.ts).
import type { Db } from 'mongodb';
import type { Bus, Subscription } from '../bus/types.js';
import type { Logger } from '../log.js';
import { CredentialCache, RECORD_KINDS, type CredentialKind, type RecordKind } from './credentialCache.js';
import { trustRule } from './hearing.js';
import { Membership } from './membership.js';
import { Revocations } from './revocations.js';

export { CredentialCache, type CacheBounds, type CredentialKind, type RecordKind } from './credentialCache.js';

/** Characters of JSON the records kept per process may add up to (a month page is tens of KB). */
const MAX_RECORD_CHARS = 16_000_000;
/** A backstop only: revocation does not wait for it. It bounds what a lost message could cost. */
const MAX_AGE_MS = 5 * 60_000;

export class Credentials {
  readonly cache: CredentialCache;
  /** Family records and keyed states, bounded by the JSON they hold as well as by count. */
  readonly records: CredentialCache<RecordKind>;
  readonly membership: Membership;
  readonly revocations: Revocations;
  private readonly subs: Subscription[] = [];

  constructor(
    private readonly bus: Bus | undefined,
    namespace: string,
    log: Logger | undefined,
    maxAgeMs = MAX_AGE_MS,
  ) {
    const subject = (name: string) => `${namespace ? `${namespace}.` : ''}cc.creds.${name}`;
    this.membership = new Membership(bus, subject('members'));
    // Cut off from NATS, or back after a gap, this process may have missed a revocation: it trusts nothing it kept.
    this.cache = new CredentialCache(bus ? maxAgeMs : 0, Date.now, trustRule(bus, this.membership.heard));
    this.records = new CredentialCache<RecordKind>(bus ? maxAgeMs : 0, Date.now, trustRule(bus, this.membership.heard), {
      maxWeight: MAX_RECORD_CHARS,
      weigh: (v) => JSON.stringify(v).length,
    });
    this.revocations = new Revocations(bus, subject, log, this.membership, (kind, ids) => {
      if (RECORD_KINDS.has(kind)) this.records.forget(kind as RecordKind, ids);
      else this.cache.forget(kind as CredentialKind, ids);
    });
  }

  /** Joins this process's other services on `database`, and over NATS takes revocations,
   *  acknowledges them and keeps the list of processes to wait for. */
  async start(database?: string): Promise<void> {
    this.revocations.joinProcess(database);
    const bus = this.bus;
    if (!bus || bus.kind === 'memory') return;
    this.subs.push(this.revocations.listen(bus), this.membership.listen(bus));
    await bus.flush();
    this.membership.join();
  }

  /** Back on NATS after a wait: every process is asked again to say it is there, for the next change to wait for. */
  rejoin(): Promise<void> {
    return this.membership.rejoin();
  }

  /** See Revocations.revoked: resolves once every process has forgotten these credentials. */
  revoked(kind: CredentialKind, ids: readonly string[]): Promise<void> {
    return this.revocations.revoked(kind, ids);
  }

  /** See Revocations.changed: resolves once every process reads these records again. */
  changed(kind: RecordKind, ids: readonly string[]): Promise<void> {
    return this.revocations.changed(kind, ids);
  }

  /** What the last change sent from here reached (over NATS). */
  get lastReach(): { acknowledged: number; silent: number } | undefined {
    return this.revocations.lastReach;
  }

  set lastReach(reach: { acknowledged: number; silent: number } | undefined) {
    this.revocations.lastReach = reach;
  }

  async stop(): Promise<void> {
    this.revocations.leaveProcess();
    this.membership.leave();
    await Promise.all(this.subs.splice(0).map((s) => s.drain()));
  }
}

/** This process's credentials for a database (the role wiring opens them once). */
export async function openCredentials(db: Db, bus: Bus, namespace: string, log: Logger): Promise<Credentials> {
  const credentials = new Credentials(bus, namespace, log);
  await credentials.start(db.databaseName);
  return credentials;
}

/** Credentials for a store used on its own (a command, a test's handle): nothing is kept, and what
 *  it changes still reaches the services of this process on the same database. */
export function passThroughCredentials(db: Db): Credentials {
  const plain = new Credentials(undefined, '', undefined);
  void plain.start(db.databaseName);
  return plain;
}
