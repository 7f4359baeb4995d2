// The resource pages: search and browse by category or state, and one page per resource.
import { RESOURCE_CATEGORY_VALUES, type Resource, type ResourceCategory } from '../../directory/data.js';
import { STATES, resolveState } from '../../directory/states.js';
import type { Block, FormField, Inline, Page } from '../doc.js';
import { languageName, plural, withQuery, type PagesDeps } from './common.js';
import { DIRECTORY_TOOLS } from '../../directory/tools.js';

export const CATEGORY_LABELS: Readonly<Record<ResourceCategory, string>> = {
  helpline: 'Helplines',
  government: 'Government programs',
  dementia: 'Dementia',
  'disease-specific': 'Specific conditions',
  respite: 'Respite care',
  'hospice-and-grief': 'Hospice and grief',
  'medicare-and-insurance': 'Medicare and insurance',
  'benefits-and-money': 'Benefits and money',
  legal: 'Legal help',
  'elder-abuse-and-fraud': 'Elder abuse and fraud',
  crisis: 'Crisis lines',
  veterans: 'Veterans',
  'caregiver-support': 'Caregiver support',
  'housing-and-facilities': 'Housing and facilities',
  'nutrition-and-transport': 'Meals and transportation',
  'care-management': 'Care management',
};

const SEARCH_LIMIT = 25;

export function searchForm(values: { q?: string; category?: string; state?: string }, errors: Record<string, string>, siteUrl: string): Block {
  const fields: FormField[] = [
    {
      name: 'q',
      label: 'What are you looking for?',
      type: 'search',
      value: values.q ?? '',
      maxLength: 200,
      hint: 'For example: respite care, dementia helpline, Medicaid look-back.',
      ...(errors.q ? { error: errors.q } : {}),
    },
    {
      name: 'category',
      label: 'Category',
      type: 'select',
      value: values.category ?? '',
      options: [{ value: '', label: 'All categories' }, ...RESOURCE_CATEGORY_VALUES.map((c) => ({ value: c, label: CATEGORY_LABELS[c] }))],
      ...(errors.category ? { error: errors.category } : {}),
    },
    {
      name: 'state',
      label: 'State',
      type: 'select',
      value: values.state ?? '',
      options: [{ value: '', label: 'Any state' }, ...STATES.map((s) => ({ value: s.code, label: s.name }))],
      ...(errors.state ? { error: errors.state } : {}),
    },
  ];
  return {
    kind: 'form',
    form: {
      action: '/resources',
      method: 'get',
      label: 'Search care resources',
      fields,
      submit: 'Search',
      markdown: [
        'To search, request ',
        { code: `${siteUrl}/resources?q=<words>&category=<category>&state=<USPS code>` },
        ' (as markdown: ',
        { code: `${siteUrl}/api/md?path=/resources?q=<words>` },
        '), or call the MCP tool ',
        { code: DIRECTORY_TOOLS.search.name },
        ' at ',
        { code: `${siteUrl}/api/mcp` },
        '.',
      ],
    },
  };
}

function resourceItem(r: Resource): Inline[] {
  return [{ text: r.name, href: `/resources/${r.id}` }, `: ${r.summary}`, ...(r.phone ? [' Phone: ', { text: r.phone, href: telHref(r.phone) }, '.'] : [])];
}

function telHref(phone: string): string {
  const digits = phone.replace(/\D/g, '');
  return digits.length === 11 ? `tel:+${digits}` : `tel:${digits}`;
}

export function resourcesPage(deps: PagesDeps, query: URLSearchParams): Page {
  const { data, index, siteUrl } = { ...deps.directory };
  const q = (query.get('q') ?? '').trim();
  const categoryRaw = (query.get('category') ?? '').trim().toLowerCase();
  const stateRaw = (query.get('state') ?? '').trim();
  const errors: Record<string, string> = {};
  if (q.length > 200) errors.q = 'q must be at most 200 characters';
  const category = categoryRaw
    ? (RESOURCE_CATEGORY_VALUES as readonly string[]).includes(categoryRaw)
      ? (categoryRaw as ResourceCategory)
      : undefined
    : undefined;
  if (categoryRaw && !category) errors.category = `category must be one of: ${RESOURCE_CATEGORY_VALUES.join(', ')}`;
  const state = stateRaw ? resolveState(stateRaw) : undefined;
  if (stateRaw && !state) errors.state = 'state must be a US state or DC, as a USPS code ("OH") or full name ("Ohio")';
  const path = withQuery('/resources', { q: q || undefined, category: categoryRaw || undefined, state: state?.code ?? (stateRaw || undefined) });
  const form = searchForm({ q, category: categoryRaw, state: state?.code ?? stateRaw }, errors, siteUrl);
  const base = { title: 'Care resources', description: 'National US resources for family caregivers of older adults, with phone numbers and links.', path };

  if (Object.keys(errors).length) {
    return {
      ...base,
      status: 400,
      errors: Object.entries(errors).map(([field, message]) => ({ field, message })),
      blocks: [{ kind: 'notice', tone: 'error', content: ['Please correct the search: ', Object.values(errors).join('; '), '.'] }, form],
    };
  }

  const blocks: Block[] = [form];
  if (q) {
    const hits = index.search(q, { limit: SEARCH_LIMIT, ...(category ? { category } : {}), ...(state ? { state: state.code } : {}) });
    blocks.push({ kind: 'heading', level: 2, text: `${plural(hits.length, 'result')} for “${q}”` });
    if (!hits.length)
      blocks.push({ kind: 'para', content: ['Nothing matched. Try fewer or different words, or ', { text: 'browse all resources', href: '/resources' }, '.'] });
    else
      blocks.push({
        kind: 'list',
        items: hits.map((h): Inline[] => {
          const href = h.kind === 'resource' ? `/resources/${h.id}` : h.kind === 'channel' ? `/channels/${h.id}` : `/glossary#${h.id}`;
          const kind =
            h.kind === 'resource' ? (CATEGORY_LABELS[h.category as ResourceCategory] ?? 'Resource') : h.kind === 'channel' ? 'Community channel' : 'Glossary';
          return [{ text: h.title, href }, ` (${kind}): ${h.summary}`, ...(h.phone ? [' Phone: ', { text: h.phone, href: telHref(h.phone) }, '.'] : [])];
        }),
      });
    return { ...base, status: 200, blocks };
  }

  const shown = data.resources.filter((r) => (!category || r.category === category) && (!state || r.coverage === 'national' || r.coverage === state.code));
  for (const c of RESOURCE_CATEGORY_VALUES) {
    const inCategory = shown.filter((r) => r.category === c);
    if (!inCategory.length) continue;
    blocks.push({ kind: 'heading', level: 2, text: CATEGORY_LABELS[c], id: c }, { kind: 'list', items: inCategory.map(resourceItem) });
  }
  return { ...base, status: 200, title: category ? `${CATEGORY_LABELS[category]}: care resources` : base.title, blocks };
}

export function resourcePage(deps: PagesDeps, id: string): Page | null {
  const r = deps.directory.data.resources.find((x) => x.id === id);
  if (!r) return null;
  const facts: { term: string; value: Inline[] }[] = [
    { term: 'Category', value: [{ text: CATEGORY_LABELS[r.category], href: `/resources?category=${r.category}` }] },
    { term: 'Phone', value: r.phone ? [{ text: r.phone, href: telHref(r.phone) }] : ['No phone line listed; use the website.'] },
    { term: 'Website', value: [{ text: r.website, href: r.website }] },
    { term: 'Hours', value: [r.hours ?? 'Not published; check the website.'] },
    { term: 'Languages', value: [r.languages.map(languageName).join(', ')] },
    { term: 'Serves', value: [r.coverage === 'national' ? 'All of the United States' : (resolveState(r.coverage)?.name ?? r.coverage)] },
    { term: 'Topics', value: [r.tags.join(', ')] },
    { term: 'Source of these facts', value: [{ text: r.source, href: r.source }] },
  ];
  return {
    status: 200,
    title: r.name,
    description: r.summary,
    path: `/resources/${r.id}`,
    blocks: [
      { kind: 'facts', items: facts },
      {
        kind: 'para',
        content: [
          'Phone numbers and hours change; if something here is wrong, tell us through the ',
          { text: 'community', href: '/channels' },
          '. In an emergency call 911.',
        ],
      },
      { kind: 'para', content: [{ text: 'All care resources', href: '/resources' }] },
    ],
  };
}
