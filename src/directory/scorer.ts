// Scoring a query over a frozen MiniSearch index as MiniSearch.search does (same matches, same
// scores to the last bit, same order), from postings whose BM25 parts are worked out once.
//
// MiniSearch's generic executor builds option objects, result records and match lists for every
// query term and recomputes each posting's BM25 score per search. Over a fixed set of documents
// those scores never change, so each term keeps, per field, its documents and their raw scores in
// the order MiniSearch visits them; a search only weights and adds them, in the same order, so
// that the floating-point sums are the very same numbers.
import type { FixedMiniSearch } from './fuzzy.js';

/** MiniSearch's defaults, which the directory keeps: BM25+ parameters and the prefix and fuzzy weights. */
const BM25 = { k: 1.2, b: 0.7, d: 0.5 };
const PREFIX_WEIGHT = 0.375;
const FUZZY_WEIGHT = 0.45;

/** One term's documents in one field, in MiniSearch's order, with their raw BM25 scores. */
interface Postings {
  boost: number;
  docs: Int32Array;
  raw: Float64Array;
}

export interface ScoreOptions {
  /** Prefix matching for a query term, as MiniSearch's `prefix` option. */
  prefix: (term: string) => boolean;
  /** Fuzzy distance for a query term (1 or more), or false, as MiniSearch's `fuzzy` option. */
  fuzzy: (term: string) => number | false;
  /** Documents (by MiniSearch's short id) a result may name. */
  accept?: (doc: number) => boolean;
}

export interface ScoredDoc {
  doc: number;
  score: number;
}

/** The same formula and operation order as MiniSearch's calcBM25Score. */
function bm25(termFreq: number, matchingCount: number, totalCount: number, fieldLength: number, avgFieldLength: number): number {
  const { k, b, d } = BM25;
  const invDocFreq = Math.log(1 + (totalCount - matchingCount + 0.5) / (matchingCount + 0.5));
  return invDocFreq * (d + (termFreq * (k + 1)) / (termFreq + k * (1 - b + (b * fieldLength) / avgFieldLength)));
}

type FieldTermData = Map<number, Map<number, number>>;
interface Internals {
  _index: Iterable<[string, FieldTermData]> & { fuzzyGet(term: string, maxDistance: number): Map<string, [FieldTermData, number]> };
  _documentCount: number;
  _documentIds: Map<number, unknown>;
  _fieldIds: Record<string, number>;
  _fieldLength: Map<number, number[]>;
  _avgFieldLength: number[];
}

export class Scorer {
  /** The documents' ids by MiniSearch's short id (ScoredDoc.doc). */
  readonly ids: unknown[] = [];
  private readonly postings = new Map<string, Postings[]>();
  /** Every term in ascending code-unit order, for prefix ranges, with its rank in the tree's own order. */
  private readonly sorted: string[];
  private readonly sortedRank: Int32Array;
  private readonly byRank: string[];
  private readonly fuzzyGet: (term: string, maxDistance: number) => Map<string, [unknown, number]>;
  // Scratch space reused by every search (a search runs to its end before the next begins).
  private readonly termScore: Float64Array;
  private readonly total: Float64Array;
  private readonly quality: Int32Array;
  private readonly termStamp: Uint32Array;
  private readonly totalStamp: Uint32Array;
  private stamp = 0;

  /** `mini` must be frozen (FixedMiniSearch.freeze) and `boosts` its fields in declaration order. */
  constructor(mini: FixedMiniSearch<never>, boosts: Readonly<Record<string, number>>) {
    const m = mini as unknown as Internals;
    this.fuzzyGet = (term, maxDistance) => m._index.fuzzyGet(term, maxDistance);
    const fields = Object.entries(boosts).map(([name, boost]) => ({ id: m._fieldIds[name]!, boost }));
    this.byRank = [];
    for (const [term, data] of m._index) {
      this.byRank.push(term);
      const lists: Postings[] = [];
      for (const { id, boost } of fields) {
        const freqs = data.get(id);
        if (!freqs) continue;
        const docs = new Int32Array(freqs.size);
        const raw = new Float64Array(freqs.size);
        let i = 0;
        for (const [doc, freq] of freqs) {
          docs[i] = doc;
          raw[i++] = bm25(freq, freqs.size, m._documentCount, m._fieldLength.get(doc)![id]!, m._avgFieldLength[id]!);
        }
        lists.push({ boost, docs, raw });
      }
      this.postings.set(term, lists);
    }
    const order = this.byRank.map((_, rank) => rank).sort((a, b) => (this.byRank[a]! < this.byRank[b]! ? -1 : 1));
    this.sorted = order.map((rank) => this.byRank[rank]!);
    this.sortedRank = Int32Array.from(order);
    for (const [doc, id] of m._documentIds) this.ids[doc] = id;
    const docs = this.ids.length;
    this.termScore = new Float64Array(docs);
    this.total = new Float64Array(docs);
    this.quality = new Int32Array(docs);
    this.termStamp = new Uint32Array(docs);
    this.totalStamp = new Uint32Array(docs);
  }

  /**
   * What `mini.search` answers for these processed query terms with OR, these options, the
   * index's boosts and a filter: documents with `score × matched terms`, by descending score, ties
   * in MiniSearch's order.
   */
  search(terms: readonly string[], options: ScoreOptions): ScoredDoc[] {
    const totalOrder: number[] = [];
    const totalStamp = this.nextStamp();
    const seen = new Set<string>();
    for (const term of terms) {
      const termStamp = this.nextStamp();
      const termOrder: number[] = [];
      this.termResults(term, 1, termStamp, termOrder);
      let prefixed: Set<string> | undefined;
      if (term.length > 0 && options.prefix(term)) {
        for (const match of this.withPrefix(term)) {
          const distance = match.length - term.length;
          if (!distance) continue;
          (prefixed ??= new Set()).add(match);
          this.termResults(match, (PREFIX_WEIGHT * match.length) / (match.length + 0.3 * distance), termStamp, termOrder);
        }
      }
      const fuzzy = options.fuzzy(term);
      if (fuzzy) {
        for (const [match, [, distance]] of this.fuzzyGet(term, fuzzy)) {
          if (!distance || prefixed?.has(match)) continue;
          this.termResults(match, (FUZZY_WEIGHT * match.length) / (match.length + distance), termStamp, termOrder);
        }
      }
      // A term given twice matches the same documents again: its scores add, its count does not.
      const first = !seen.has(term);
      seen.add(term);
      for (const doc of termOrder) {
        if (this.totalStamp[doc] !== totalStamp) {
          this.totalStamp[doc] = totalStamp;
          this.total[doc] = this.termScore[doc]!;
          this.quality[doc] = 1;
          totalOrder.push(doc);
        } else {
          this.total[doc] = this.total[doc]! + this.termScore[doc]!;
          if (first) this.quality[doc]!++;
        }
      }
    }
    const results: ScoredDoc[] = [];
    for (const doc of totalOrder) if (!options.accept || options.accept(doc)) results.push({ doc, score: this.total[doc]! * this.quality[doc]! });
    return results.sort((a, b) => b.score - a.score);
  }

  /** Adds one matched term's weighted scores to the query term's, as MiniSearch's termResults does. */
  private termResults(term: string, weight: number, stamp: number, order: number[]): void {
    const lists = this.postings.get(term);
    if (!lists) return;
    for (const { boost, docs, raw } of lists) {
      const factor = weight * boost;
      for (let i = 0; i < docs.length; i++) {
        const doc = docs[i]!;
        const score = factor * raw[i]!;
        if (this.termStamp[doc] === stamp) this.termScore[doc] = this.termScore[doc]! + score;
        else {
          this.termStamp[doc] = stamp;
          this.termScore[doc] = score;
          order.push(doc);
        }
      }
    }
  }

  /** Terms starting with `prefix`, in the order MiniSearch's tree lists them. */
  private withPrefix(prefix: string): string[] {
    let lo = 0;
    let hi = this.sorted.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.sorted[mid]! < prefix) lo = mid + 1;
      else hi = mid;
    }
    const ranks: number[] = [];
    for (let i = lo; i < this.sorted.length && this.sorted[i]!.startsWith(prefix); i++) ranks.push(this.sortedRank[i]!);
    return ranks.sort((a, b) => a - b).map((rank) => this.byRank[rank]!);
  }

  private nextStamp(): number {
    if (++this.stamp === 0xffffffff) {
      this.termStamp.fill(0);
      this.totalStamp.fill(0);
      this.stamp = 1;
    }
    return this.stamp;
  }
}
