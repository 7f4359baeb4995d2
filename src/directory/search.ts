/**
 * Full-text search over the public directory: resources, community channels and
 * glossary terms in one MiniSearch index.
 *
 * Ranking: a match in the title (resource name, channel name, glossary term)
 * counts most, then tags/topics, then the summary or definition. Prefix and
 * fuzzy matching let partial words ("medic") and typos ("respit", "hospise")
 * still find results. Query and documents go through the same normalisation:
 * lower case, accents and apostrophes removed ("Alzheimer's" → "alzheimers"),
 * a light plural fold ("helplines" → "helpline") and common stop words dropped.
 *
 * Questions in everyday words ("my mom keeps falling") are first read through the
 * lay-terms table (./layTerms.ts): family words and filler are dropped, and
 * everyday phrases add the directory's own terms ("falls prevention"), which are
 * searched exactly, next to the question's remaining words.
 */
import { RESOURCE_CATEGORY_VALUES, type DirectoryData } from './data.js';
import { FixedMiniSearch } from './fuzzy.js';
import { Scorer } from './scorer.js';
import { readLayQuestion } from './layTerms.js';
import { resolveState } from './states.js';

export type DirectoryKind = 'resource' | 'channel' | 'glossary';

export interface DirectoryHit {
  kind: DirectoryKind;
  id: string;
  title: string;
  summary: string;
  score: number;
  category?: string;
  url?: string;
  phone?: string | null;
}

export interface DirectorySearchOptions {
  limit: number;
  category?: string;
  state?: string;
}

export interface DirectoryIndex {
  search(query: string, options: DirectorySearchOptions): DirectoryHit[];
  readonly size: number;
}

/** Thrown for a `category` or `state` filter value the directory does not know. */
export class DirectoryFilterError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DirectoryFilterError';
  }
}

interface IndexedDoc {
  key: string; // `${kind}:${id}`, unique across kinds
  kind: DirectoryKind;
  id: string;
  title: string;
  keywords: string;
  body: string;
  category: string | undefined;
  coverage: string; // "national" or a USPS code; channels and glossary terms are "national"
}

const STOP_WORDS = new Set([
  // English
  'a',
  'about',
  'also',
  'an',
  'and',
  'are',
  'as',
  'at',
  'be',
  'but',
  'by',
  'can',
  'do',
  'for',
  'from',
  'has',
  'have',
  'how',
  'i',
  'if',
  'in',
  'into',
  'is',
  'it',
  'its',
  'me',
  'my',
  'near',
  'not',
  'of',
  'on',
  'or',
  'our',
  'than',
  'that',
  'the',
  'their',
  'them',
  'they',
  'this',
  'to',
  'was',
  'we',
  'what',
  'when',
  'where',
  'who',
  'will',
  'with',
  'you',
  'your',
  // Spanish
  'de',
  'del',
  'el',
  'en',
  'la',
  'las',
  'los',
  'para',
  'por',
  'que',
  'un',
  'una',
  'y',
]);

const FIELD_BOOSTS = { title: 4, keywords: 2, body: 1 } as const;

/** Splits on anything that is not a letter or digit, after dropping apostrophes so "Alzheimer's" stays one word. */
function tokenize(text: string): string[] {
  return text
    .replace(/['’‘`]/g, '')
    .split(/[^\p{L}\p{N}]+/u)
    .filter((t) => t.length > 0);
}

const ASCII = /^[ -~]*$/;

/** Lower case without diacritics: "Café" → "cafe". */
function fold(term: string): string {
  // Printable ASCII has no marks and nothing NFKD changes: most terms need only lower case.
  if (ASCII.test(term)) return term.toLowerCase();
  return term
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase();
}

/** Lower case, no diacritics, stop words dropped, and a light plural fold applied the same way to documents and queries. */
function processTerm(term: string): string | null {
  const t = fold(term);
  if (t.length === 0 || STOP_WORDS.has(t)) return null;
  if (t.length > 4 && t.endsWith('s') && !t.endsWith('ss') && !t.endsWith('us') && !t.endsWith('is')) {
    return t.slice(0, -1);
  }
  return t;
}

/**
 * How much the directory terms read from everyday phrasing count next to the question's own
 * words. They count double because the everyday phrase is usually what the question is about
 * ("at night" in "dementia help at night"), while its other words are often incidental. The
 * two are searched separately and their scores added, so that many added terms cannot multiply
 * a score the way extra words in one MiniSearch query do, and a question already in the
 * directory's words ("elder abuse", "power of attorney") keeps its ranking.
 */
const MEANING_WEIGHT = 2;

/**
 * Splits a question into its own words and the directory terms its everyday phrasing stands
 * for. A translated word stays with the question's words when the directory itself uses it
 * ("falls", "money"), so the table can add meaning but never hide a real term.
 */
function readQuestion(question: string, vocabulary: ReadonlySet<string>): { words: string; meaning: string } {
  const reading = readLayQuestion(tokenize(question).map(fold));
  const words = [...reading.words, ...reading.translated.filter((w) => vocabulary.has(processTerm(w) ?? ''))];
  // A question made only of noise words ("help") is searched as typed rather than not at all.
  if (words.length === 0 && reading.meaning.length === 0) return { words: question, meaning: '' };
  return { words: words.join(' '), meaning: reading.meaning.join(' ') };
}

/** Fuzzy distance for a query term: none for short words, one edit from 5 letters, two from 9. */
export function fuzzyFor(term: string): number | false {
  if (term.length < 5) return false;
  return term.length >= 9 ? 2 : 1;
}

function toDocs(data: DirectoryData): IndexedDoc[] {
  const docs: IndexedDoc[] = [];
  for (const r of data.resources) {
    docs.push({
      key: `resource:${r.id}`,
      kind: 'resource',
      id: r.id,
      title: r.name,
      keywords: [...r.tags, r.category.replace(/-/g, ' ')].join(' \n '),
      body: r.summary,
      category: r.category,
      coverage: r.coverage,
    });
  }
  for (const c of data.channels) {
    docs.push({
      key: `channel:${c.slug}`,
      kind: 'channel',
      id: c.slug,
      title: c.name,
      keywords: [...c.topics, 'community channel', c.language === 'es' ? 'español spanish' : ''].join(' \n '),
      body: c.summary,
      category: undefined,
      coverage: 'national',
    });
  }
  for (const g of data.glossary) {
    docs.push({
      key: `glossary:${g.id}`,
      kind: 'glossary',
      id: g.id,
      title: g.term,
      keywords: 'glossary definition',
      body: g.definition,
      category: undefined,
      coverage: 'national',
    });
  }
  return docs;
}

const KIND_CATEGORIES: Readonly<Record<string, DirectoryKind>> = {
  resource: 'resource',
  channel: 'channel',
  glossary: 'glossary',
};
const RESOURCE_CATEGORIES = new Set<string>(RESOURCE_CATEGORY_VALUES);

/** Builds the predicate for the optional `category` and `state` filters, or throws for unknown values. */
function buildFilter(options: DirectorySearchOptions): ((doc: IndexedDoc) => boolean) | undefined {
  const checks: Array<(doc: IndexedDoc) => boolean> = [];

  if (options.category !== undefined) {
    const category = options.category.trim().toLowerCase();
    const kind = KIND_CATEGORIES[category];
    if (kind) {
      checks.push((doc) => doc.kind === kind);
    } else if (RESOURCE_CATEGORIES.has(category)) {
      checks.push((doc) => doc.kind === 'resource' && doc.category === category);
    } else {
      throw new DirectoryFilterError(`unknown category "${options.category}": use one of ${[...RESOURCE_CATEGORY_VALUES, 'channel', 'glossary'].join(', ')}`);
    }
  }

  if (options.state !== undefined) {
    const state = resolveState(options.state);
    if (!state) {
      throw new DirectoryFilterError(
        `unknown state "${options.state}": use a USPS code ("OH") or a full state name ("Ohio"); the 50 states and DC are covered`,
      );
    }
    // National resources (and channels/glossary terms, which are not tied to a place) match every state.
    checks.push((doc) => doc.coverage === 'national' || doc.coverage === state.code);
  }

  if (checks.length === 0) return undefined;
  return (doc) => checks.every((check) => check(doc));
}

/** Prefix matching from three letters on. */
export const prefixFor = (term: string): boolean => term.length >= 3;

/** The directory's documents in one frozen MiniSearch index, with the vocabulary it holds. */
export function indexDirectory(data: DirectoryData) {
  const docs = toDocs(data);
  const mini = new FixedMiniSearch<IndexedDoc>({
    idField: 'key',
    fields: ['title', 'keywords', 'body'],
    storeFields: [],
    tokenize,
    processTerm,
    searchOptions: { boost: { ...FIELD_BOOSTS }, prefix: prefixFor, fuzzy: fuzzyFor, combineWith: 'OR' },
  });
  mini.addAll(docs);
  mini.freeze();
  return { docs, mini, scorer: new Scorer(mini, FIELD_BOOSTS) };
}

/** A query's terms as the index reads them (MiniSearch's tokenize and processTerm). */
export const queryTerms = (text: string): string[] => tokenize(text).flatMap((t) => processTerm(t) ?? []);

export function createDirectoryIndex(data: DirectoryData): DirectoryIndex {
  const { docs, mini, scorer } = indexDirectory(data);
  const byKey = new Map(docs.map((d) => [d.key, d]));
  const resources = new Map(data.resources.map((r) => [r.id, r]));
  const channels = new Map(data.channels.map((c) => [c.slug, c]));
  const glossary = new Map(data.glossary.map((g) => [g.id, g]));
  const vocabulary = new Set(docs.flatMap((d) => [d.title, d.keywords, d.body].flatMap(tokenize)).flatMap((t) => processTerm(t) ?? []));
  // MiniSearch's own ids for the documents, so results need no lookup by key.
  const byShortId = scorer.ids.map((key) => byKey.get(String(key)));

  const toHit = (doc: IndexedDoc | undefined, rawScore: number): DirectoryHit | undefined => {
    if (!doc) return undefined;
    const score = Math.round(rawScore * 1000) / 1000;
    switch (doc.kind) {
      case 'resource': {
        const r = resources.get(doc.id);
        if (!r) return undefined;
        return { kind: 'resource', id: r.id, title: r.name, summary: r.summary, score, category: r.category, url: r.website, phone: r.phone };
      }
      case 'channel': {
        const c = channels.get(doc.id);
        if (!c) return undefined;
        return { kind: 'channel', id: c.slug, title: c.name, summary: c.summary, score, category: 'channel' };
      }
      case 'glossary': {
        const g = glossary.get(doc.id);
        if (!g) return undefined;
        return { kind: 'glossary', id: g.id, title: g.term, summary: g.definition, score, category: 'glossary' };
      }
    }
  };

  return {
    get size() {
      return mini.documentCount;
    },
    search(query: string, options: DirectorySearchOptions): DirectoryHit[] {
      const filter = buildFilter(options);
      const limit = Number.isFinite(options.limit) ? Math.floor(options.limit) : 0;
      const q = typeof query === 'string' ? query.trim() : '';
      if (q === '' || limit < 1) return [];

      const { words, meaning } = readQuestion(q, vocabulary);
      const accept = filter
        ? (doc: number) => {
            const d = byShortId[doc];
            return d !== undefined && filter(d);
          }
        : undefined;
      const found = scorer.search(queryTerms(words), { prefix: prefixFor, fuzzy: fuzzyFor, ...(accept ? { accept } : {}) });
      // Already by descending score: only added terms call for a merge and a new order.
      let ranked = found;
      if (meaning !== '') {
        const scores = new Map(found.map((r) => [r.doc, r.score]));
        // The added terms are the directory's own words, so they are matched exactly.
        for (const r of scorer.search(queryTerms(meaning), { prefix: () => false, fuzzy: () => false, ...(accept ? { accept } : {}) }))
          scores.set(r.doc, (scores.get(r.doc) ?? 0) + MEANING_WEIGHT * r.score);
        ranked = [...scores].map(([doc, score]) => ({ doc, score })).sort((a, b) => b.score - a.score);
      }

      const hits: DirectoryHit[] = [];
      for (const { doc, score } of ranked) {
        const hit = toHit(byShortId[doc], score);
        if (hit) hits.push(hit);
        if (hits.length >= limit) break;
      }
      return hits;
    },
  };
}
