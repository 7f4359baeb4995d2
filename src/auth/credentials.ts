// Credentials (API keys, sessions, OAuth grants and token revocations) served from memory in every
// process, with revocation that reaches every process before the revoking request returns: the
// revoker writes the store first, then tells every process over the bus and waits for each one's
// acknowledgement. A fill that raced a revocation is never kept, so a stale read cannot bring a
// revoked credential back.
import { randomUUID } from 'node:crypto';
import type { Db } from 'mongodb';
import type { Bus, Subscription } from '../bus/types.js';
import type { Logger } from '../log.js';

export type CredentialKind = 'key' | 'session' | 'grant' | 'jti';

/** Entries kept per process; the oldest filled goes first. */
const MAX_ENTRIES = 50_000;
/** A backstop only: revocation does not wait for it. It bounds what a lost message could cost. */
const MAX_AGE_MS = 5 * 60_000;
const HEARTBEAT_MS = 2_000;
/** A process not heard from for this long is no longer waited for (it stopped, or was killed). */
const MEMBER_TTL_MS = 3 * HEARTBEAT_MS;
/** Longest a revocation waits for a process that should acknowledge and does not. */
const ACK_TIMEOUT_MS = 3_000;

interface Entry {
  value: unknown;
  until: number;
}

/** Values by credential (or by any other kind of id a caller names); a value read while a
 *  revocation arrived is used once, never kept. */
export class CredentialCache<K extends string = CredentialKind> {
  private readonly entries = new Map<string, Entry>();
  private generation = 0;
  constructor(
    private readonly maxAgeMs: number,
    private readonly clock: () => number = Date.now,
    /** False while this process may have missed a revocation: everything kept is dropped. */
    private readonly trustworthy: () => boolean = () => true,
  ) {}

  /** The cached value, or `load()`'s (null: unknown, never cached, read again next time). */
  async lookup<V>(kind: K, id: string, load: () => Promise<V | null>): Promise<V | null> {
    const key = `${kind}:${id}`;
    if (this.entries.size && !this.trustworthy()) this.clear();
    const hit = this.entries.get(key);
    if (hit && hit.until > this.clock()) return hit.value as V;
    const generation = this.generation;
    const value = await load();
    if (value !== null && this.maxAgeMs > 0 && generation === this.generation) {
      if (this.entries.size >= MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value!);
      this.entries.set(key, { value, until: this.clock() + this.maxAgeMs });
    }
    return value;
  }

  forget(kind: K, ids: readonly string[]): void {
    this.generation++;
    for (const id of ids) this.entries.delete(`${kind}:${id}`);
  }

  clear(): void {
    this.generation++;
    this.entries.clear();
  }

  get size(): number {
    return this.entries.size;
  }
}

interface Revoked {
  kind: CredentialKind;
  ids: string[];
  ack: string;
}

/**
 * The in-process bus is one process: its revocations reach every service in this process on the
 * same database (a test may run two), and no other. Several processes on one database use NATS.
 */
const inProcess = new Map<string, Set<CredentialCache>>();

export class Credentials {
  readonly cache: CredentialCache;
  /** Set with the in-process bus: the database whose services in this process share revocations. */
  private local: string | undefined;
  private readonly id = randomUUID();
  private readonly members = new Map<string, number>();
  private readonly subs: Subscription[] = [];
  private heartbeat: NodeJS.Timeout | undefined;
  /** When this process last heard its own heartbeat: older, and revokers may have stopped waiting for it. */
  private lastEcho = Date.now();
  /** Resolves once the processes already running have had time to say they are there. */
  private introduced: Promise<void> = Promise.resolve();

  constructor(
    private readonly bus: Bus | undefined,
    private readonly namespace: string,
    private readonly log: Logger | undefined,
    maxAgeMs = MAX_AGE_MS,
  ) {
    // Cut off from the others (NATS down, the event loop stalled) for longer than they wait for a
    // silent process, this one may have missed a revocation: it trusts nothing it kept.
    this.cache = new CredentialCache(bus ? maxAgeMs : 0, Date.now, () => bus?.kind === 'memory' || Date.now() - this.lastEcho < MEMBER_TTL_MS - HEARTBEAT_MS);
  }

  private subject(name: string): string {
    return `${this.namespace ? `${this.namespace}.` : ''}cc.creds.${name}`;
  }

  /** Over NATS: take revocations, acknowledge them, and keep the list of processes to wait for. */
  async start(database?: string): Promise<void> {
    this.local = database;
    const bus = this.bus;
    if (!bus) return;
    if (bus.kind === 'memory') {
      if (!this.local) return;
      let peers = inProcess.get(this.local);
      if (!peers) inProcess.set(this.local, (peers = new Set()));
      peers.add(this.cache);
      return;
    }
    this.subs.push(
      bus.subscribe(this.subject('revoked'), (msg) => {
        const r = msg.data as Revoked;
        if (!Array.isArray(r?.ids) || typeof r.ack !== 'string') return;
        this.cache.forget(r.kind, r.ids.map(String));
        bus.publish(r.ack, { member: this.id });
      }),
      bus.subscribe(this.subject('members'), (msg) => {
        const m = msg.data as { member?: string; hello?: boolean; gone?: boolean };
        if (typeof m?.member !== 'string') return;
        if (m.member === this.id) this.lastEcho = Date.now();
        if (m.gone) this.members.delete(m.member);
        else this.members.set(m.member, Date.now());
        // A process that just started learns of every other at once.
        if (m.hello && m.member !== this.id) this.announce();
      }),
    );
    await bus.flush();
    this.announce(true);
    this.heartbeat = setInterval(() => this.announce(), HEARTBEAT_MS).unref();
    this.introduced = new Promise((resolve) => setTimeout(resolve, 300).unref());
  }

  private announce(hello = false): void {
    this.bus?.publish(this.subject('members'), { member: this.id, ...(hello ? { hello } : {}) });
  }

  /**
   * Call after the store says revoked: forgets the credentials here and in every other process, and
   * resolves once each has acknowledged (a process silent past the timeout is logged, not waited for).
   */
  async revoked(kind: CredentialKind, ids: readonly string[]): Promise<void> {
    this.cache.forget(kind, ids);
    for (const peer of (this.local && inProcess.get(this.local)) || []) peer.forget(kind, ids);
    const bus = this.bus;
    if (!bus || bus.kind === 'memory' || !ids.length) return;
    await this.introduced;
    const now = Date.now();
    const waiting = new Set([...this.members].filter(([, at]) => now - at < MEMBER_TTL_MS).map(([m]) => m));
    waiting.delete(this.id);
    const ack = this.subject(`ack.${randomUUID()}`);
    let done!: () => void;
    const all = new Promise<void>((resolve) => (done = resolve));
    const sub = bus.subscribe(ack, (msg) => {
      waiting.delete((msg.data as { member?: string })?.member ?? '');
      if (!waiting.size) done();
    });
    try {
      await bus.flush();
      bus.publish(this.subject('revoked'), { kind, ids: [...ids], ack } satisfies Revoked);
      if (!waiting.size) return;
      let timer: NodeJS.Timeout | undefined;
      const late = await Promise.race([all.then(() => false), new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(true), ACK_TIMEOUT_MS)))]);
      clearTimeout(timer);
      if (late) this.log?.warn({ kind, unacknowledged: [...waiting] }, 'a revocation was not acknowledged by every process in time');
    } finally {
      await sub.drain();
    }
  }

  async stop(): Promise<void> {
    if (this.local) inProcess.get(this.local)?.delete(this.cache);
    clearInterval(this.heartbeat);
    if (this.bus && this.bus.kind !== 'memory' && this.heartbeat) this.bus.publish(this.subject('members'), { member: this.id, gone: true });
    await Promise.all(this.subs.splice(0).map((s) => s.drain()));
  }
}

const registry = new WeakMap<Db, Credentials>();

/** Open this process's credentials for a database handle (the role wiring does, once). */
export async function openCredentials(db: Db, bus: Bus, namespace: string, log: Logger): Promise<Credentials> {
  const credentials = new Credentials(bus, namespace, log);
  await credentials.start(db.databaseName);
  registry.set(db, credentials);
  return credentials;
}

const uncached = new WeakMap<Db, Credentials>();

/** The process's credentials for this handle; without any opened (a store used on its own), nothing is cached. */
export function credentialsFor(db: Db): Credentials {
  const opened = registry.get(db);
  if (opened) return opened;
  let plain = uncached.get(db);
  if (!plain) uncached.set(db, (plain = new Credentials(undefined, '', undefined)));
  return plain;
}
