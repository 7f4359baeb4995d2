// The search tool's hand check of its arguments against its zod schema: it accepts only what the
// schema accepts, and reads it the same way; everything else is left to the schema to name.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { loadDirectory } from './handler.js';
import { directoryTools } from './tools.js';

const search = directoryTools(loadDirectory('https://example.test')).find((t) => t.name === 'search_care_resources')!;

const value = fc.oneof(
  fc.string({ maxLength: 12 }),
  fc.constantFrom(
    '  respite  ',
    '',
    ' ',
    'x'.repeat(200),
    ` ${'x'.repeat(200)} `,
    'x'.repeat(201),
    'OH',
    ' ohio ',
    'oh',
    'ZZ',
    'Ohio',
    'legal',
    'channel',
    'glossary',
    'Legal',
    'respite',
  ),
  fc.integer({ min: -2, max: 30 }),
  fc.constantFrom(2.5, Number.NaN, Number.POSITIVE_INFINITY, 1e21, -0),
  fc.constant(null),
  fc.constant(undefined),
  fc.boolean(),
  fc.array(fc.integer(), { maxLength: 2 }),
  fc.object({ maxDepth: 1 }),
);
const mostly = <T>(good: fc.Arbitrary<T>) => fc.oneof({ arbitrary: good, weight: 3 }, { arbitrary: value, weight: 1 });
const args = fc
  .record(
    {
      query: mostly(fc.constantFrom('respite', '  dementia helpline ', 'x'.repeat(200), '\u00a0care\t')),
      limit: mostly(fc.integer({ min: 1, max: 25 })),
      category: mostly(fc.constantFrom('legal', 'channel', 'glossary', 'respite', 'hospice-and-grief')),
      state: mostly(fc.constantFrom('OH', ' ohio ', 'District of Columbia', 'dc', 'ZZ')),
      extra: value,
    },
    { requiredKeys: [] },
  )
  .filter((a) => !('extra' in a) || Math.random() < 0.2);

describe('search_care_resources arguments', () => {
  it('the hand check accepts only what the schema accepts, and reads it the same', () => {
    let accepted = 0;
    fc.assert(
      fc.property(args, (raw) => {
        const fast = search.accept!(raw);
        const parsed = search.input.safeParse(raw);
        if (fast === undefined) return;
        accepted++;
        expect(parsed.success).toBe(true);
        expect(fast).toStrictEqual(parsed.data);
      }),
      { numRuns: 3000 },
    );
    expect(accepted).toBeGreaterThan(20); // the comparison saw accepted arguments
  });

  it('the hand check takes the usual well-formed arguments', () => {
    expect(search.accept!({ query: ' respite care ', limit: 10, state: ' ohio ', category: 'respite' })).toStrictEqual({
      query: 'respite care',
      limit: 10,
      state: 'ohio',
      category: 'respite',
    });
    expect(search.accept!({ query: 'respite' })).toStrictEqual({ query: 'respite', limit: 5 });
  });
});
