// The care-planning glossary page: every term with its definition and links to related terms.
import type { Block, Inline, Page } from '../doc.js';
import type { PagesDeps } from './common.js';

export function glossaryPage(deps: PagesDeps): Page {
  const terms = [...deps.directory.data.glossary].sort((a, b) => a.term.localeCompare(b.term, 'en'));
  const byId = new Map(terms.map((t) => [t.id, t]));
  const blocks: Block[] = [];
  for (const t of terms) {
    blocks.push({ kind: 'heading', level: 2, text: t.term, id: t.id }, { kind: 'para', content: [t.definition] });
    const related = t.related.map((id) => byId.get(id)).filter((x) => x !== undefined);
    if (related.length) blocks.push({ kind: 'para', content: ['Related: ', ...related.flatMap((r, i): Inline[] => [...(i ? [', '] : []), { text: r.term, href: `#${r.id}` }])] });
  }
  return {
    status: 200,
    title: 'Care-planning glossary',
    description: `Plain-language definitions of ${terms.length} terms families meet when planning care: Medicare, Medicaid, legal documents, kinds of care.`,
    path: '/glossary',
    blocks,
  };
}
