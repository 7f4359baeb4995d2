// Fuzzy term lookup by deletion neighbourhoods: the same terms, distances and order as
// MiniSearch's radix-tree walk over a fixed vocabulary, without walking the tree per query term.
//
// Two strings within k edits (Levenshtein) can both be cut down to one common string by deleting
// at most k characters from each (a substitution deletes on both sides, an insertion on one). So
// every vocabulary term's deletions up to MAX_EDITS are indexed once; a query term's own deletions
// name every candidate, and an exact distance check keeps those within the limit. Matches come back
// in the order the tree walk finds them (its depth-first order, recorded once), so scores add up
// in the same order and ties rank the same.
import MiniSearch from 'minisearch';

/** What the radix-tree lookup returns: term → [its value, its edit distance]. */
export type FuzzyResults<T> = Map<string, [T, number]>;

/** Distances the neighbourhoods cover; a larger one falls back to the tree walk. */
const MAX_EDITS = 2;

/** Polynomial hashes modulo 2^32, kept to 30 bits so Map keys stay small integers. */
const BASE = 0x01000193;
const KEY_BITS = 0x3fffffff;
const POW = [1];
const pow = (n: number): number => {
  while (POW.length <= n) POW.push(Math.imul(POW[POW.length - 1]!, BASE));
  return POW[n]!;
};

/** Hash of s[a, b) from the prefix hashes: prefix[b] − prefix[a]·BASE^(b−a). */
const part = (prefix: Int32Array, a: number, b: number): number => prefix[b]! - Math.imul(prefix[a]!, pow(b - a));
/** The length goes into the key too: equal strings have equal lengths. */
const key = (h: number, len: number): number => (h ^ Math.imul(len, 0x9e3779b1)) & KEY_BITS;

/** Room for the hashes of a term of `n` characters with up to MAX_EDITS deleted. */
const hashesOf = (n: number): number => 1 + n + (n * (n - 1)) / 2;

/**
 * Hashes of the strings made by deleting 0, 1, … `k` characters of `s`, written to `out` with the
 * count deleted beside each (`deleted`); returns how many. A string reached by several deletions
 * may repeat. Computed from prefix hashes, so no string is built: a hash names a candidate, the
 * distance check decides, and a collision costs one extra check. (No closures: this runs for
 * every fuzzy query term.)
 */
function deletionHashes(s: string, k: number, prefix: Int32Array, out: Int32Array, deleted: Uint8Array): number {
  const n = s.length;
  prefix[0] = 0;
  for (let i = 0; i < n; i++) prefix[i + 1] = Math.imul(prefix[i]!, BASE) + s.charCodeAt(i);
  let count = 0;
  out[count] = key(prefix[n]!, n);
  deleted[count++] = 0;
  if (k < 1) return count;
  for (let i = 0; i < n; i++) {
    out[count] = key(Math.imul(prefix[i]!, pow(n - 1 - i)) + part(prefix, i + 1, n), n - 1);
    deleted[count++] = 1;
  }
  if (k < 2) return count;
  for (let i = 0; i < n; i++)
    for (let j = i + 1; j < n; j++) {
      out[count] = key(Math.imul(prefix[i]!, pow(n - 2 - i)) + Math.imul(part(prefix, i + 1, j), pow(n - 1 - j)) + part(prefix, j + 1, n), n - 2);
      deleted[count++] = 2;
    }
  return count;
}

/** Levenshtein distance of `a` and `b` when at most `max`, else `max + 1`. */
function distanceWithin(a: string, b: string, max: number, row: Uint16Array): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  const n = b.length;
  for (let j = 0; j <= n; j++) row[j] = j;
  for (let i = 1; i <= a.length; i++) {
    let diagonal = row[0]!;
    row[0] = i;
    let best = i;
    const ch = a.charCodeAt(i - 1);
    for (let j = 1; j <= n; j++) {
      const above = row[j]!;
      const value = Math.min(above + 1, row[j - 1]! + 1, diagonal + (ch === b.charCodeAt(j - 1) ? 0 : 1));
      row[j] = value;
      diagonal = above;
      if (value < best) best = value;
    }
    if (best > max) return max + 1;
  }
  return Math.min(row[n]!, max + 1);
}

/**
 * The deletion map packed into typed arrays: open addressing, each slot holding its key and where
 * its entries run in one flat array, so that a probe reads one cache line rather than a Map
 * entry and then an array: under load most probes miss the processor's caches.
 */
function packed(map: Map<number, number[]>) {
  let bits = 1;
  while (1 << bits < map.size * 2) bits++;
  const mask = (1 << bits) - 1;
  // Four numbers a slot: key (−1 when empty), first entry, end of entries, unused (alignment).
  const slots = new Int32Array((mask + 1) * 4).fill(-1);
  const slotFor = (k: number) => {
    let i = Math.imul(k, 0x9e3779b1) >>> (32 - bits);
    while (slots[i * 4] !== -1 && slots[i * 4] !== k) i = (i + 1) & mask;
    return i * 4;
  };
  const entries = new Int32Array([...map.values()].reduce((n, list) => n + list.length, 0));
  let next = 0;
  for (const [k, list] of map) {
    const at = slotFor(k);
    slots[at] = k;
    slots[at + 1] = next;
    entries.set(list, next);
    next += list.length;
    slots[at + 2] = next;
  }
  return {
    slots,
    entries,
    /** The key's slot (its entries run from slots[at + 1] to slots[at + 2]), or −1 when no term has that deletion. */
    find(k: number): number {
      const at = slotFor(k);
      return slots[at] === -1 ? -1 : at;
    },
  };
}

export interface FuzzyIndex<T> {
  /** Same contract as SearchableMap.fuzzyGet. */
  fuzzyGet(query: string, maxDistance: number): FuzzyResults<T>;
}

/**
 * `walk` is the radix tree's own fuzzy lookup; called once with a distance that reaches every
 * term it gives the terms in the tree's order, and it still answers distances beyond MAX_EDITS.
 */
export function fuzzyIndex<T>(walk: (query: string, maxDistance: number) => FuzzyResults<T>, longestTerm: number): FuzzyIndex<T> {
  // The walk's matrix holds distances in bytes: past that, keep the walk for every query.
  if (longestTerm >= 250) return { fuzzyGet: walk };
  const all = walk('', longestTerm);
  const terms = [...all.keys()];
  const values = terms.map((t) => all.get(t)![0]);
  // Each entry is a term's rank and how many characters were deleted from it (rank·4 + deleted):
  // a lookup within k edits takes only those with k or fewer deleted.
  const byDeletion = new Map<number, number[]>();
  const prefix = new Int32Array(longestTerm + MAX_EDITS + 1);
  const hashes = new Int32Array(hashesOf(longestTerm + MAX_EDITS));
  const deleted = new Uint8Array(hashes.length);
  terms.forEach((term, rank) => {
    const count = deletionHashes(term, Math.min(MAX_EDITS, term.length), prefix, hashes, deleted);
    for (let h = 0; h < count; h++) {
      const entry = rank * 4 + deleted[h]!;
      const entries = byDeletion.get(hashes[h]!);
      if (!entries) byDeletion.set(hashes[h]!, [entry]);
      else if (entries[entries.length - 1] !== entry) entries.push(entry);
    }
  });
  const table = packed(byDeletion);
  const row = new Uint16Array(longestTerm + 1);
  // Which terms this lookup has checked already: a stamp per term, so nothing is cleared between lookups.
  const checked = new Uint32Array(terms.length);
  let stamp = 0;
  return {
    fuzzyGet(query, maxDistance) {
      if (maxDistance > MAX_EDITS) return walk(query, maxDistance);
      // No term is long enough to come within reach (and a long query's deletions would be many).
      if (query.length - maxDistance > longestTerm) return new Map();
      if (++stamp === 0xffffffff) {
        checked.fill(0);
        stamp = 1;
      }
      const near: number[] = [];
      const distances: number[] = [];
      const count = deletionHashes(query, Math.min(maxDistance, query.length), prefix, hashes, deleted);
      for (let h = 0; h < count; h++) {
        const slot = table.find(hashes[h]!);
        if (slot < 0) continue;
        for (let e = table.slots[slot + 1]!, end = table.slots[slot + 2]!; e < end; e++) {
          const entry = table.entries[e]!;
          const rank = entry >> 2;
          if ((entry & 3) > maxDistance || checked[rank] === stamp) continue;
          checked[rank] = stamp;
          const distance = distanceWithin(query, terms[rank]!, maxDistance, row);
          if (distance <= maxDistance) {
            near.push(rank);
            distances[rank] = distance;
          }
        }
      }
      const results: FuzzyResults<T> = new Map();
      for (const rank of near.sort((a, b) => a - b)) results.set(terms[rank]!, [values[rank]!, distances[rank]!]);
      return results;
    },
  };
}

/**
 * MiniSearch over a fixed set of documents, whose fuzzy lookups use deletion neighbourhoods
 * (fuzzyIndex, above) instead of walking the term tree: the same matches in the same order, at a
 * fraction of the cost that the walk took of every search.
 */
export class FixedMiniSearch<T> extends MiniSearch<T> {
  /** Call once every document is added; adding more afterwards would go unseen by fuzzy lookups. */
  freeze(): void {
    const index = this._index as unknown as { fuzzyGet(query: string, maxDistance: number): FuzzyResults<unknown> };
    const walk = index.fuzzyGet.bind(index);
    let longest = 0;
    for (const term of this._index.keys()) longest = Math.max(longest, term.length);
    index.fuzzyGet = fuzzyIndex(walk, longest).fuzzyGet;
  }
}
