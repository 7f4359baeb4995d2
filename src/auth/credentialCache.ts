// What a process keeps in memory of credentials and family records: values by kind and id, bounded
// in count (and in weight where asked), expiring after a backstop age, and never keeping a value
// read while its key (or everything) was forgotten, so a stale read cannot bring a revoked
// credential or a former member back. Forgetting across processes is src/auth/revocations.ts.

export type CredentialKind = 'key' | 'session' | 'grant' | 'jti';
/** Records a family request reads to know what the caller may see (src/family), where a partner's
 *  events for a client go (`binding`, src/ingest/familyShare.ts), a partner institution and its
 *  sealed secrets (`institution`, src/partner/records.ts): kept and forgotten under the same rule as
 *  credentials. */
export type RecordKind = 'member' | 'workspace' | 'lovedOne' | 'binding' | 'institution';
export const RECORD_KINDS: ReadonlySet<string> = new Set<RecordKind>(['member', 'workspace', 'lovedOne', 'binding', 'institution']);

/** Entries kept per process; the oldest filled goes first. */
const MAX_ENTRIES = 50_000;

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

  /** Forget these ids, reads in flight included. */
  forget(kind: K, ids: readonly string[]): void {
    for (const key of ids.map((id) => `${kind}:${id}`)) {
      for (const f of this.fills.get(key) ?? []) f.keep = false;
      this.drop(key);
    }
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
