// The deletion-neighbourhood lookup against MiniSearch's own radix-tree walk: same terms, same
// distances, same order, for terms of the directory's vocabulary with edits and for made-up ones.
import fc from 'fast-check';
import SearchableMap from 'minisearch/SearchableMap';
import { describe, expect, it } from 'vitest';
import { loadDirectoryData } from './data.js';
import { fuzzyIndex } from './fuzzy.js';

function lookups(words: string[]) {
  const map = new SearchableMap<number>();
  words.forEach((w, i) => map.set(w, i));
  const walk = (q: string, d: number) => map.fuzzyGet(q, d);
  return { walk, fast: fuzzyIndex(walk, Math.max(...words.map((w) => w.length))).fuzzyGet };
}

const entries = (m: Map<string, [number, number]>) => [...m.entries()];

/** Distinct lower-case words of the directory's names, summaries, terms and definitions. */
function directoryWords(): string[] {
  const data = loadDirectoryData();
  const text = [
    ...data.resources.flatMap((r) => [r.name, r.summary, ...r.tags]),
    ...data.glossary.flatMap((g) => [g.term, g.definition]),
    ...data.channels.flatMap((c) => [c.name, c.summary]),
  ].join(' ');
  return [...new Set(text.toLowerCase().match(/\p{L}+/gu) ?? [])];
}

describe('fuzzy lookup by deletion neighbourhoods', () => {
  const words = directoryWords();
  const { walk, fast } = lookups(words);

  it('finds what the tree walk finds, in its order, for every vocabulary word and its one- and two-letter edits', () => {
    let nonEmpty = 0;
    for (const [i, word] of words.entries()) {
      const edits = [word, word.slice(1), word.slice(0, -1) + 'x', `${word.slice(0, 2)}q${word.slice(2)}`, word.slice(0, 3) + word.slice(5), `z${word}z`];
      for (const q of edits)
        for (const d of [1, 2]) {
          const expected = entries(walk(q, d));
          if (expected.length > 1) nonEmpty++;
          expect(entries(fast(q, d)), `${q} within ${d} (word ${i})`).toEqual(expected);
        }
    }
    expect(nonEmpty).toBeGreaterThan(100); // the comparison saw real multi-term answers
  });

  it('agrees with the tree walk on arbitrary queries and vocabularies', () => {
    const word = fc.string({ unit: fc.constantFrom(...'abcdeé'), minLength: 0, maxLength: 9 });
    fc.assert(
      fc.property(
        fc.uniqueArray(
          word.filter((w) => w.length > 0),
          { minLength: 1, maxLength: 40 },
        ),
        word,
        fc.integer({ min: 0, max: 3 }),
        (vocab, q, d) => {
          const own = lookups(vocab);
          expect(entries(own.fast(q, d))).toEqual(entries(own.walk(q, d)));
        },
      ),
      { numRuns: 300 },
    );
  });
});
