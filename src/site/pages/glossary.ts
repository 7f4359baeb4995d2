// The care-planning glossary page: an A–Z index, then every term under its letter with its
// definition and links to related terms.
import type { Block, Inline, Page } from '../doc.js';
import type { PagesDeps } from './common.js';

const LETTERS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ'.split('');

/** The index letter a term files under: its first letter without accents; digits and signs under "#". */
export function indexLetter(term: string): string {
  const first = term
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .trim()
    .charAt(0)
    .toUpperCase();
  return LETTERS.includes(first) ? first : '#';
}

const letterId = (letter: string) => (letter === '#' ? 'letter-other' : `letter-${letter.toLowerCase()}`);

export function glossaryPage(deps: PagesDeps): Page {
  const terms = [...deps.directory.data.glossary].sort((a, b) => a.term.localeCompare(b.term, 'en'));
  const byId = new Map(terms.map((t) => [t.id, t]));
  const groups = new Map<string, typeof terms>();
  for (const t of terms) {
    const letter = indexLetter(t.term);
    groups.set(letter, [...(groups.get(letter) ?? []), t]);
  }
  const order = [...(groups.has('#') ? ['#'] : []), ...LETTERS];
  // Every letter is listed so the index reads as an alphabet; letters with no term are plain text.
  const index: Inline[] = order.flatMap((letter, i): Inline[] => [
    ...(i ? [' · '] : []),
    groups.has(letter) ? { text: letter, href: `#${letterId(letter)}` } : letter,
  ]);
  const blocks: Block[] = [
    { kind: 'para', content: [`${terms.length} terms, A to Z. Each definition links to related terms.`] },
    { kind: 'heading', level: 2, text: 'A–Z index', id: 'a-z' },
    { kind: 'para', content: index },
  ];
  for (const letter of order) {
    const group = groups.get(letter);
    if (!group) continue;
    blocks.push({ kind: 'heading', level: 2, text: letter === '#' ? 'Numbers and signs' : letter, id: letterId(letter) });
    for (const t of group) {
      blocks.push({ kind: 'heading', level: 3, text: t.term, id: t.id }, { kind: 'para', content: [t.definition] });
      const related = t.related.map((id) => byId.get(id)).filter((x) => x !== undefined);
      if (related.length)
        blocks.push({
          kind: 'para',
          content: ['Related: ', ...related.flatMap((r, i): Inline[] => [...(i ? [', '] : []), { text: r.term, href: `#${r.id}` }])],
        });
    }
    blocks.push({ kind: 'para', content: [{ text: 'Back to the A–Z index', href: '#a-z' }] });
  }
  return {
    status: 200,
    title: 'Care-planning glossary',
    description: `Plain-language definitions of ${terms.length} terms families meet when planning care: Medicare, Medicaid, legal documents, kinds of care.`,
    path: '/glossary',
    blocks,
  };
}
