// Credentials (API keys, sessions, OAuth grants and token revocations) and the family records a
// request re-derives access from, served from memory in every process, with a change that reaches
// every process before the changing request returns: the writer writes the store first, then tells
// every process over the bus and waits for each one's acknowledgement. A fill that raced a change
// of its key is never kept, so a stale read cannot bring a revoked credential or a former member back.
import { randomUUID } from 'node:crypto';
import type { Db } from 'mongodb';
import type { Bus, Subscription } from '../bus/types.js';
import type { Logger } from '../log.js';
import { HEARTBEAT_MS, MEMBER_TTL_MS, trustRule } from './hearing.js';

export type CredentialKind = 'key' | 'session' | 'grant' | 'jti';
/** Records a family request reads to know what the caller may see (src/family), where a partner's
 *  events for a client go (`binding`, src/ingest/familyShare.ts), a partner institution and its
 *  sealed secrets (`institution`, src/partner/records.ts), and keyed states (`state`, by
 *  `<collection>\0<key>`): kept and forgotten under the same rule as credentials. */
export type RecordKind = 'member' | 'workspace' | 'lovedOne' | 'binding' | 'institution' | 'state';
const RECORD_KINDS: ReadonlySet<string> = new Set<RecordKind>(['member', 'workspace', 'lovedOne', 'binding', 'institution', 'state']);

/** Entries kept per process; the oldest filled goes first. */
const MAX_ENTRIES = 50_000;
/** Characters of JSON the records kept per process may add up to (a month page is tens of KB). */
const MAX_RECORD_CHARS = 16_000_000;
/** A backstop only: revocation does not wait for it. It bounds what a lost message could cost. */
const MAX_AGE_MS = 5 * 60_000;
/** Longest a revocation waits for a process that should acknowledge and does not. */
const ACK_TIMEOUT_MS = 3_000;

interface Entry {
  value: unknown;
  until: number;
  weight: number;
}

/** A read in flight; a change of its key while it is out clears `keep`. */
interface Fill {
  keep: boolean;
}

export interface CacheBounds {
  maxEntries?: number;
  /** With `weigh`: what the kept values may weigh together; the oldest go first. */
  maxWeight?: number;
  weigh?: (value: unknown) => number;
}

/** Values by credential (or by any other kind of id a caller names); a value read while its key
 *  was forgotten (or everything was) is used once, never kept. */
export class CredentialCache<K extends string = CredentialKind> {
  private readonly entries = new Map<string, Entry>();
  private readonly fills = new Map<string, Set<Fill>>();
  private weight = 0;
  constructor(
    private readonly maxAgeMs: number,
    private readonly clock: () => number = Date.now,
    /** False while this process may have missed a revocation: everything kept is dropped. */
    private readonly trustworthy: () => boolean = () => true,
    private readonly bounds: CacheBounds = {},
  ) {}

  /** The cached value, or `load()`'s (null: unknown, never cached, read again next time). */
  async lookup<V>(kind: K, id: string, load: () => Promise<V | null>): Promise<V | null> {
    const key = `${kind}:${id}`;
    if (this.entries.size && !this.trustworthy()) this.clear();
    const hit = this.entries.get(key);
    if (hit && hit.until > this.clock()) return hit.value as V;
    if (this.maxAgeMs <= 0) return load();
    const fill: Fill = { keep: true };
    const pending = this.fills.get(key) ?? this.fills.set(key, new Set()).get(key)!;
    pending.add(fill);
    let value: V | null;
    try {
      value = await load();
    } finally {
      pending.delete(fill);
      if (!pending.size && this.fills.get(key) === pending) this.fills.delete(key);
    }
    if (value !== null && fill.keep) this.keep(key, value);
    return value;
  }

  private keep(key: string, value: unknown): void {
    this.drop(key);
    const weight = this.bounds.weigh?.(value) ?? 0;
    const maxWeight = this.bounds.maxWeight ?? Infinity;
    if (weight > maxWeight) return;
    this.entries.set(key, { value, until: this.clock() + this.maxAgeMs, weight });
    this.weight += weight;
    while (this.entries.size > (this.bounds.maxEntries ?? MAX_ENTRIES) || this.weight > maxWeight) this.drop(this.entries.keys().next().value!);
  }

  private drop(key: string): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.entries.delete(key);
    this.weight -= entry.weight;
  }

  /** Forget these ids, or (`prefix`) every id that starts with one of them. */
  forget(kind: K, ids: readonly string[], prefix = false): void {
    const keys = ids.map((id) => `${kind}:${id}`);
    const named = (k: string) => keys.some((p) => k.startsWith(p));
    const fills = prefix ? [...this.fills].filter(([k]) => named(k)).map(([, f]) => f) : keys.map((k) => this.fills.get(k));
    for (const pending of fills) for (const f of pending ?? []) f.keep = false;
    for (const k of prefix ? [...this.entries.keys()].filter(named) : keys) this.drop(k);
  }

  clear(): void {
    for (const fills of this.fills.values()) for (const f of fills) f.keep = false;
    this.entries.clear();
    this.weight = 0;
  }

  get size(): number {
    return this.entries.size;
  }
}

interface Revoked {
  kind: CredentialKind | RecordKind;
  ids: string[];
  /** The ids are prefixes: every key that starts with one goes (a dropped collection's states). */
  prefix?: true;
  ack: string;
}

/**
 * Every service in this process on the same database (a test may run two, or write through a
 * handle of its own) forgets at once whatever any of them changes; the in-process bus reaches no
 * other process. Several processes on one database use NATS.
 */
const inProcess = new Map<string, Set<Credentials>>();

export class Credentials {
  readonly cache: CredentialCache;
  /** Family records and keyed states, bounded by the JSON they hold as well as by count. */
  readonly records: CredentialCache<RecordKind>;
  /** The database whose services in this process share changes. */
  private local: string | undefined;
  private readonly id = randomUUID();
  private readonly members = new Map<string, number>();
  private readonly subs: Subscription[] = [];
  private heartbeat: NodeJS.Timeout | undefined;
  /** When this process last heard its own heartbeat: older, and revokers may have stopped waiting for it. */
  private lastEcho = Date.now();
  /** Resolves once the processes already running have had time to say they are there. */
  private introduced: Promise<void> = Promise.resolve();
  /** Over NATS, what the last change sent from here reached: the other processes that acknowledged
   *  it and those silent past the timeout. A command that makes one change reports it. */
  lastReach: { acknowledged: number; silent: number } | undefined;

  constructor(
    private readonly bus: Bus | undefined,
    private readonly namespace: string,
    private readonly log: Logger | undefined,
    maxAgeMs = MAX_AGE_MS,
  ) {
    // Cut off from NATS, or back after a gap, this process may have missed a revocation: it trusts nothing it kept.
    const heard = () => this.lastEcho;
    this.cache = new CredentialCache(bus ? maxAgeMs : 0, Date.now, trustRule(bus, heard));
    this.records = new CredentialCache<RecordKind>(bus ? maxAgeMs : 0, Date.now, trustRule(bus, heard), { maxWeight: MAX_RECORD_CHARS, weigh: (v) => JSON.stringify(v).length });
  }

  private forgetHere(kind: CredentialKind | RecordKind, ids: readonly string[], prefix: boolean): void {
    if (RECORD_KINDS.has(kind)) this.records.forget(kind as RecordKind, ids, prefix);
    else this.cache.forget(kind as CredentialKind, ids, prefix);
  }

  private subject(name: string): string {
    return `${this.namespace ? `${this.namespace}.` : ''}cc.creds.${name}`;
  }

  /** Over NATS: take revocations, acknowledge them, and keep the list of processes to wait for. */
  async start(database?: string): Promise<void> {
    this.local = database;
    const bus = this.bus;
    if (!bus) return;
    if (this.local) {
      let peers = inProcess.get(this.local);
      if (!peers) inProcess.set(this.local, (peers = new Set()));
      peers.add(this);
    }
    if (bus.kind === 'memory') return;
    this.subs.push(
      bus.subscribe(this.subject('revoked'), (msg) => {
        const r = msg.data as Revoked;
        if (!Array.isArray(r?.ids) || typeof r.ack !== 'string') return;
        this.forgetHere(r.kind, r.ids.map(String), r.prefix === true);
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

  /** Back on NATS after a wait: every process is asked again to say it is there, for the next change to wait for. */
  rejoin(): Promise<void> {
    this.announce(true);
    this.introduced = new Promise((resolve) => setTimeout(resolve, 300).unref());
    return this.bus ? this.bus.flush() : Promise.resolve();
  }

  private announce(hello = false): void {
    this.bus?.publish(this.subject('members'), { member: this.id, ...(hello ? { hello } : {}) });
  }

  /**
   * Call after the store says revoked: forgets the credentials here and in every other process, and
   * resolves once each has acknowledged (a process silent past the timeout is logged, not waited for).
   */
  revoked(kind: CredentialKind, ids: readonly string[]): Promise<void> {
    return this.everywhere(kind, ids, false);
  }

  /** Call after the store has changed these records (`prefix`: every id starting with one): the
   *  same as a revocation, so the very next request on any process reads them again. */
  changed(kind: RecordKind, ids: readonly string[], prefix = false): Promise<void> {
    return this.everywhere(kind, ids, prefix);
  }

  private async everywhere(kind: CredentialKind | RecordKind, ids: readonly string[], prefix: boolean): Promise<void> {
    if (!ids.length) return;
    this.forgetHere(kind, ids, prefix);
    for (const peer of (this.local && inProcess.get(this.local)) || []) if (peer !== this) peer.forgetHere(kind, ids, prefix);
    const bus = this.bus;
    if (!bus || bus.kind === 'memory') return;
    await this.introduced;
    const now = Date.now();
    const waiting = new Set([...this.members].filter(([, at]) => now - at < MEMBER_TTL_MS).map(([m]) => m));
    waiting.delete(this.id);
    const expected = waiting.size;
    const ack = this.subject(`ack.${randomUUID()}`);
    let done!: () => void;
    const all = new Promise<void>((resolve) => (done = resolve));
    const sub = bus.subscribe(ack, (msg) => {
      waiting.delete((msg.data as { member?: string })?.member ?? '');
      if (!waiting.size) done();
    });
    try {
      await bus.flush();
      bus.publish(this.subject('revoked'), { kind, ids: [...ids], ...(prefix ? { prefix } : {}), ack } satisfies Revoked);
      if (waiting.size) {
        let timer: NodeJS.Timeout | undefined;
        const late = await Promise.race([all.then(() => false), new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(true), ACK_TIMEOUT_MS)))]);
        clearTimeout(timer);
        if (late) this.log?.warn({ kind, unacknowledged: [...waiting] }, 'a revocation was not acknowledged by every process in time');
      }
      this.lastReach = { acknowledged: expected - waiting.size, silent: waiting.size };
    } finally {
      await sub.drain();
    }
  }

  async stop(): Promise<void> {
    if (this.local) inProcess.get(this.local)?.delete(this);
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
  if (!plain) {
    plain = new Credentials(undefined, '', undefined);
    // It keeps nothing, but what it changes still reaches the services of this process.
    void plain.start(db.databaseName);
    uncached.set(db, plain);
  }
  return plain;
}
