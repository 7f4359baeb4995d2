// The directory's own scorer against MiniSearch's search over the same index: the same documents,
// the same scores to the last bit, in the same order, with and without prefix, fuzzy and a filter.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { loadDirectoryData } from './data.js';
import { fuzzyFor, indexDirectory, prefixFor, queryTerms } from './search.js';

const { mini, scorer } = indexDirectory(loadDirectoryData());
const shortId = new Map(scorer.ids.map((id, doc) => [id, doc]));
const everyThird = (doc: number) => doc % 3 === 0;

function compare(query: string): number {
  const terms = queryTerms(query);
  const cases = [
    { theirs: mini.search(query), ours: scorer.search(terms, { prefix: prefixFor, fuzzy: fuzzyFor }) },
    { theirs: mini.search(query, { prefix: false, fuzzy: false }), ours: scorer.search(terms, { prefix: () => false, fuzzy: () => false }) },
    {
      theirs: mini.search(query, { filter: (r) => everyThird(shortId.get(r.id)!) }),
      ours: scorer.search(terms, { prefix: prefixFor, fuzzy: fuzzyFor, accept: everyThird }),
    },
  ];
  for (const { theirs, ours } of cases)
    expect(
      ours.map((r) => [scorer.ids[r.doc], r.score]),
      query,
    ).toEqual(theirs.map((r) => [r.id, r.score]));
  return cases[0]!.theirs.length;
}

/** A small seeded generator, so the word combinations are the same on every run. */
function random(seed: number): () => number {
  let a = seed;
  return () => (a = (Math.imul(a, 1103515245) + 12345) >>> 0) / 2 ** 32;
}

describe('directory scorer', () => {
  const data = loadDirectoryData();
  const text = [
    ...data.resources.flatMap((r) => [r.name, r.summary, ...r.tags]),
    ...data.glossary.flatMap((g) => [g.term, g.definition]),
    ...data.channels.flatMap((c) => [c.name, c.summary, ...c.topics]),
  ].join(' ');
  const words = [...new Set(text.toLowerCase().match(/\p{L}+/gu) ?? [])];

  it('scores every vocabulary word, its prefixes and its typos as MiniSearch does', () => {
    let found = 0;
    for (const w of words)
      for (const q of [w, w.slice(0, 3), w.slice(0, 5), w.slice(1), `${w.slice(0, -1)}x`, `${w.slice(0, 2)}q${w.slice(2)}`, `${w} ${w}`])
        if (compare(q) > 1) found++;
    expect(found).toBeGreaterThan(1000); // the comparison saw real rankings
  });

  it('scores questions of several words as MiniSearch does, repeated words included', () => {
    const next = random(7);
    const pick = () => words[Math.floor(next() * words.length)]!;
    for (let i = 0; i < 2000; i++) {
      const parts = Array.from({ length: 2 + Math.floor(next() * 4) }, pick);
      if (i % 5 === 0) parts.push(parts[0]!);
      compare(parts.join(' '));
    }
  });

  it('agrees with MiniSearch on arbitrary text', () => {
    const word = fc.string({ unit: fc.constantFrom(...'aceilmnorstuéh '), maxLength: 14 });
    fc.assert(
      fc.property(word, (q) => void compare(q)),
      { numRuns: 1500 },
    );
  });
});
