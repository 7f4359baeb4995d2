// Fuzzy term lookup by deletion neighbourhoods: the same terms, distances and order as
// MiniSearch's radix-tree walk over a fixed vocabulary, without walking the tree per query term.
//
// Two strings within k edits (Levenshtein) can both be cut down to one common string by deleting
// at most k characters from each (a substitution deletes on both sides, an insertion on one). So
// every vocabulary term's deletions up to MAX_EDITS are indexed once; a query term's own deletions
// name every candidate, and an exact distance check keeps those within the limit. Matches come back
// in the order the tree walk finds them (its depth-first order, recorded once), so scores add up
// in the same order and ties rank the same.

/** What the radix-tree lookup returns: term → [its value, its edit distance]. */
export type FuzzyResults<T> = Map<string, [T, number]>;

/** Distances the neighbourhoods cover; a larger one falls back to the tree walk. */
const MAX_EDITS = 2;

/** The strings made by deleting exactly 0, 1, … `k` characters of `term`, by count, each once. */
function deletions(term: string, k: number): string[][] {
  const seen = new Set([term]);
  const levels = [[term]];
  for (let d = 1; d <= k; d++) {
    const next: string[] = [];
    for (const s of levels[d - 1]!)
      for (let i = 0; i < s.length; i++) {
        const cut = s.slice(0, i) + s.slice(i + 1);
        if (!seen.has(cut)) {
          seen.add(cut);
          next.push(cut);
        }
      }
    levels.push(next);
  }
  return levels;
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
  // By the number of characters deleted from the term: a lookup within k edits needs only those up to k.
  const byDeletion = Array.from({ length: MAX_EDITS + 1 }, () => new Map<string, number[]>());
  terms.forEach((term, rank) => {
    deletions(term, Math.min(MAX_EDITS, term.length)).forEach((cuts, d) => {
      for (const cut of cuts) {
        const ranks = byDeletion[d]!.get(cut);
        if (ranks) ranks.push(rank);
        else byDeletion[d]!.set(cut, [rank]);
      }
    });
  });
  const row = new Uint16Array(longestTerm + 1);
  return {
    fuzzyGet(query, maxDistance) {
      if (maxDistance > MAX_EDITS) return walk(query, maxDistance);
      // No term is long enough to come within reach (and a long query's deletions would be many).
      if (query.length - maxDistance > longestTerm) return new Map();
      const found = new Map<number, number>();
      for (const cuts of deletions(query, Math.min(maxDistance, query.length)))
        for (const cut of cuts)
          for (let d = 0; d <= maxDistance; d++)
            for (const rank of byDeletion[d]!.get(cut) ?? []) if (!found.has(rank)) found.set(rank, distanceWithin(query, terms[rank]!, maxDistance, row));
      const results: FuzzyResults<T> = new Map();
      for (const rank of [...found.keys()].sort((a, b) => a - b)) {
        const distance = found.get(rank)!;
        if (distance <= maxDistance) results.set(terms[rank]!, [values[rank]!, distance]);
      }
      return results;
    },
  };
}
