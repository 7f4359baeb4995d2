// The directory's pages as models (title, summary, blocks), built from the directory data, the
// cost calculator and the community store. HTML and markdown are both rendered from these.
import type { Config } from '../config.js';
import { calculateLongTermCareCost, type CostEstimate } from '../directory/cost.js';
import { CARE_TYPES } from '../directory/costData.js';
import { costInputSchema } from '../directory/costInput.js';
import { RESOURCE_CATEGORY_VALUES, type Channel, type Resource, type ResourceCategory } from '../directory/data.js';
import { STATES, resolveState } from '../directory/states.js';
import type { DirectoryDeps } from '../directory/tools.js';
import { type CommunityStore, CursorError } from '../community/store.js';
import { CANONICAL_PAGES } from './catalog.js';
import type { Block, FormField, Inline, Page } from './doc.js';

export interface PagesDeps {
  config: Config;
  directory: DirectoryDeps;
  community: CommunityStore;
}

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
const THREADS_PER_PAGE = 20;
const COMMENTS_PER_PAGE = 50;

const languageNames = new Intl.DisplayNames(['en'], { type: 'language' });
const languageName = (code: string) => languageNames.of(code) ?? code;
const day = (iso: string) => iso.slice(0, 10);
const usd = (n: number) => `$${n.toLocaleString('en-US', { maximumFractionDigits: 2 })}`;
const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

function withQuery(path: string, params: Record<string, string | undefined>): string {
  const q = new URLSearchParams(Object.entries(params).filter((e): e is [string, string] => e[1] !== undefined && e[1] !== ''));
  const s = q.toString();
  return s ? `${path}?${s}` : path;
}

export function notFoundPage(path: string): Page {
  return {
    status: 404,
    title: 'Page not found',
    description: 'There is no page at this address.',
    path,
    blocks: [{ kind: 'para', content: ['Try the ', { text: 'resource search', href: '/resources' }, ', the ', { text: 'channels', href: '/channels' }, ' or the ', { text: 'home page', href: '/' }, '.'] }],
  };
}

function searchForm(values: { q?: string; category?: string; state?: string }, errors: Record<string, string>, siteUrl: string): Block {
  const fields: FormField[] = [
    { name: 'q', label: 'What are you looking for?', type: 'search', value: values.q ?? '', maxLength: 200, hint: 'For example: respite care, dementia helpline, Medicaid look-back.', ...(errors.q ? { error: errors.q } : {}) },
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
        { code: 'search_care_resources' },
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

function homePage(deps: PagesDeps): Page {
  const { data } = deps.directory;
  const counts = new Map<string, number>();
  for (const r of data.resources) counts.set(r.category, (counts.get(r.category) ?? 0) + 1);
  const blocks: Block[] = [
    searchForm({}, {}, deps.config.siteUrl),
    { kind: 'heading', level: 2, text: 'Browse by need' },
    { kind: 'list', items: RESOURCE_CATEGORY_VALUES.filter((c) => counts.get(c)).map((c) => [{ text: CATEGORY_LABELS[c], href: `/resources?category=${c}` }, ` (${plural(counts.get(c) ?? 0, 'resource')})`]) },
    { kind: 'heading', level: 2, text: 'Talk with other caregivers' },
    { kind: 'list', items: data.channels.map((c) => [{ text: c.name, href: `/channels/${c.slug}` }]) },
    { kind: 'heading', level: 2, text: 'Plan ahead' },
    {
      kind: 'list',
      items: CANONICAL_PAGES.filter((p) => p.path === '/calculator' || p.path === '/glossary').map((p) => [{ text: p.title, href: p.path }, `: ${p.about}.`]),
    },
  ];
  if (!deps.config.recaptchaSecret) {
    blocks.push(
      { kind: 'heading', level: 2, text: 'Newsletter' },
      { kind: 'para', content: ['An occasional letter for family caregivers: new resources and what other caregivers found useful. Unsubscribe any time.'] },
      {
        kind: 'form',
        form: {
          action: '/api/newsletter',
          method: 'post',
          label: 'Newsletter sign-up',
          fields: [
            { name: 'email', label: 'Email address', type: 'email', required: true, autocomplete: 'email', maxLength: 254 },
            { name: 'firstName', label: 'First name (optional)', type: 'text', autocomplete: 'given-name', maxLength: 80 },
          ],
          submit: 'Subscribe',
          markdown: ['To subscribe, POST JSON ', { code: '{"email": "name@example.com"}' }, ' to ', { code: `${deps.config.siteUrl}/api/newsletter` }, '.'],
        },
      },
    );
  }
  blocks.push(
    { kind: 'heading', level: 2, text: 'For AI assistants and developers' },
    {
      kind: 'list',
      items: [
        [{ text: 'llms.txt', href: '/llms.txt' }, ': an index of this site for language models.'],
        [{ text: 'OpenAPI description', href: '/openapi.json' }, ' of the site API.'],
        [{ text: 'Directory MCP endpoint', href: '/api/mcp' }, ': search, channels and the cost calculator as MCP tools, no sign-in.'],
      ],
    },
  );
  return {
    status: 200,
    title: 'Care resources for family caregivers',
    description: 'Find national US help for the people who look after an older relative: helplines, respite, hospice, Medicare counseling, legal and money help, peer channels and a long-term-care cost calculator.',
    path: '/',
    blocks,
  };
}

function resourcesPage(deps: PagesDeps, query: URLSearchParams): Page {
  const { data, index, siteUrl } = { ...deps.directory };
  const q = (query.get('q') ?? '').trim();
  const categoryRaw = (query.get('category') ?? '').trim().toLowerCase();
  const stateRaw = (query.get('state') ?? '').trim();
  const errors: Record<string, string> = {};
  if (q.length > 200) errors.q = 'q must be at most 200 characters';
  const category = categoryRaw ? (RESOURCE_CATEGORY_VALUES as readonly string[]).includes(categoryRaw) ? (categoryRaw as ResourceCategory) : undefined : undefined;
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
    if (!hits.length) blocks.push({ kind: 'para', content: ['Nothing matched. Try fewer or different words, or ', { text: 'browse all resources', href: '/resources' }, '.'] });
    else
      blocks.push({
        kind: 'list',
        items: hits.map((h): Inline[] => {
          const href = h.kind === 'resource' ? `/resources/${h.id}` : h.kind === 'channel' ? `/channels/${h.id}` : `/glossary#${h.id}`;
          const kind = h.kind === 'resource' ? CATEGORY_LABELS[h.category as ResourceCategory] ?? 'Resource' : h.kind === 'channel' ? 'Community channel' : 'Glossary';
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

function resourcePage(deps: PagesDeps, id: string): Page | null {
  const r = deps.directory.data.resources.find((x) => x.id === id);
  if (!r) return null;
  const facts: { term: string; value: Inline[] }[] = [
    { term: 'Category', value: [{ text: CATEGORY_LABELS[r.category], href: `/resources?category=${r.category}` }] },
    { term: 'Phone', value: r.phone ? [{ text: r.phone, href: telHref(r.phone) }] : ['No phone line listed; use the website.'] },
    { term: 'Website', value: [{ text: r.website, href: r.website }] },
    { term: 'Hours', value: [r.hours ?? 'Not published; check the website.'] },
    { term: 'Languages', value: [r.languages.map(languageName).join(', ')] },
    { term: 'Serves', value: [r.coverage === 'national' ? 'All of the United States' : resolveState(r.coverage)?.name ?? r.coverage] },
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
      { kind: 'para', content: ['Phone numbers and hours change; if something here is wrong, tell us through the ', { text: 'community', href: '/channels' }, '. In an emergency call 911.'] },
      { kind: 'para', content: [{ text: 'All care resources', href: '/resources' }] },
    ],
  };
}

function channelsPage(deps: PagesDeps): Page {
  return {
    status: 200,
    title: 'Community channels',
    description: 'Peer channels where family caregivers share what works, each about one situation.',
    path: '/channels',
    blocks: [
      {
        kind: 'list',
        items: deps.directory.data.channels.map((c) => [{ text: c.name, href: `/channels/${c.slug}` }, `${c.language === 'es' ? ' (en español)' : ''}: ${c.summary}`]),
      },
      participationHelp(deps.config),
    ],
  };
}

function participationHelp(config: Config, channel?: Channel): Block {
  const slug = channel?.slug ?? '<slug>';
  return {
    kind: 'para',
    content: [
      'Reading is open to everyone. Members post through the site API: ',
      { code: `POST ${config.siteUrl}/api/community` },
      ' with ',
      { code: 'Authorization: Bearer <ID token>' },
      ' and ',
      { code: `{"channel": "${slug}", "action": "join"}` },
      ', then ',
      { code: '"thread"' },
      ' (title, body) or ',
      { code: '"comment"' },
      ' (threadId, body).',
    ],
  };
}

async function channelPage(deps: PagesDeps, slug: string, query: URLSearchParams): Promise<Page | null> {
  const channel = deps.directory.data.channels.find((c) => c.slug === slug);
  if (!channel) return null;
  const cursor = query.get('cursor') ?? undefined;
  const path = withQuery(`/channels/${channel.slug}`, { cursor });
  const base = { title: channel.name, description: channel.summary, path };
  let page;
  try {
    page = await deps.community.listThreads(channel.slug, { limit: THREADS_PER_PAGE, ...(cursor ? { cursor } : {}) });
  } catch (err) {
    if (!(err instanceof CursorError)) throw err;
    return { ...base, status: 400, errors: [{ field: 'cursor', message: 'cursor: not a cursor this site returned' }], blocks: [{ kind: 'notice', tone: 'error', content: ['This page link is not valid. ', { text: 'Start from the newest threads', href: `/channels/${channel.slug}` }, '.'] }] };
  }
  const memberCount = await deps.community.memberCount(channel.slug);
  const blocks: Block[] = [
    {
      kind: 'facts',
      items: [
        { term: 'Topics', value: [channel.topics.join(', ')] },
        { term: 'Language', value: [languageName(channel.language)] },
        { term: 'Members', value: [String(memberCount)] },
      ],
    },
    { kind: 'heading', level: 2, text: cursor ? 'Older threads' : 'Threads' },
  ];
  if (!page.items.length) blocks.push({ kind: 'para', content: [cursor ? 'No older threads.' : 'No threads yet. Be the first to start one.'] });
  else
    blocks.push({
      kind: 'list',
      items: page.items.map((t) => [
        { text: t.title, href: `/channels/${channel.slug}/threads/${t.id}` },
        `: ${t.excerpt} (by ${t.authorName}, started ${day(t.createdAt)}; ${plural(t.commentCount, 'comment')}; last activity ${day(t.lastActivityAt)})`,
      ]),
    });
  if (page.nextCursor) blocks.push({ kind: 'para', content: [{ text: 'Older threads', href: withQuery(`/channels/${channel.slug}`, { cursor: page.nextCursor }) }] });
  blocks.push({ kind: 'heading', level: 2, text: 'Take part' }, participationHelp(deps.config, channel), { kind: 'para', content: [{ text: 'All channels', href: '/channels' }] });
  return { ...base, status: 200, blocks };
}

async function threadPage(deps: PagesDeps, slug: string, threadId: string, query: URLSearchParams): Promise<Page | null> {
  const channel = deps.directory.data.channels.find((c) => c.slug === slug);
  if (!channel) return null;
  const thread = await deps.community.getThread(threadId);
  if (!thread || thread.channel !== channel.slug) return null;
  const cursor = query.get('cursor') ?? undefined;
  const path = withQuery(`/channels/${channel.slug}/threads/${thread._id}`, { cursor });
  let comments;
  try {
    comments = await deps.community.listComments(thread._id, { limit: COMMENTS_PER_PAGE, ...(cursor ? { cursor } : {}) });
  } catch (err) {
    if (!(err instanceof CursorError)) throw err;
    return { status: 400, title: thread.title, description: 'This page link is not valid.', path, errors: [{ field: 'cursor', message: 'cursor: not a cursor this site returned' }], blocks: [] };
  }
  const detail = await deps.community.threadDetail(thread);
  const blocks: Block[] = [
    { kind: 'para', content: [`Started by ${detail.authorName} on ${day(detail.createdAt)} in `, { text: channel.name, href: `/channels/${channel.slug}` }, '.'] },
    { kind: 'text', text: thread.body },
    { kind: 'heading', level: 2, text: `Comments (${detail.commentCount})` },
  ];
  if (!comments.items.length) blocks.push({ kind: 'para', content: [cursor ? 'No more comments.' : 'No comments yet.'] });
  for (const c of comments.items) blocks.push({ kind: 'card', blocks: [{ kind: 'para', content: [{ strong: c.authorName }, ` on ${day(c.createdAt)}`] }, { kind: 'text', text: c.body }] });
  if (comments.nextCursor) blocks.push({ kind: 'para', content: [{ text: 'More comments', href: withQuery(`/channels/${channel.slug}/threads/${thread._id}`, { cursor: comments.nextCursor }) }] });
  return { status: 200, title: thread.title, description: `A thread in ${channel.name}, started by ${detail.authorName}.`, path, blocks };
}

const CALCULATOR_FIELDS = ['careType', 'state', 'hoursPerWeek', 'daysPerWeek', 'years', 'annualIncreasePct'] as const;

/** Query strings to tool arguments: empty means absent, numbers are numbers when they parse. */
export function calculatorArgs(query: URLSearchParams): Record<string, unknown> {
  const args: Record<string, unknown> = {};
  for (const f of CALCULATOR_FIELDS) {
    const raw = query.get(f)?.trim();
    if (!raw) continue;
    if (f === 'careType' || f === 'state') args[f] = raw;
    else args[f] = Number.isFinite(Number(raw)) ? Number(raw) : raw;
  }
  return args;
}

function calculatorPage(deps: PagesDeps, query: URLSearchParams): Page {
  const costs = deps.directory.costs;
  const args = calculatorArgs(query);
  const submitted = Object.keys(args).length > 0;
  const errors: Record<string, string> = {};
  let estimate: CostEstimate | undefined;
  if (submitted) {
    const parsed = costInputSchema.safeParse(args);
    if (parsed.success) estimate = calculateLongTermCareCost(parsed.data, costs);
    else
      for (const issue of parsed.error.issues) {
        const field = issue.code === 'unrecognized_keys' ? 'form' : String(issue.path[0] ?? 'form');
        errors[field] ??= field === 'careType' && args.careType === undefined ? `careType is required: one of ${CARE_TYPES.join(', ')}` : issue.message;
      }
  }
  const value = (f: string) => query.get(f)?.trim() ?? '';
  const err = (f: string) => (errors[f] ? { error: errors[f] } : {});
  const fields: FormField[] = [
    { name: 'careType', label: 'Kind of care', type: 'select', value: value('careType'), required: true, options: [{ value: '', label: 'Choose…' }, ...CARE_TYPES.map((t) => ({ value: t, label: costs.careTypes[t].label }))], ...err('careType') },
    { name: 'state', label: 'State', type: 'select', value: resolveState(value('state'))?.code ?? value('state'), options: [{ value: '', label: 'United States (national median)' }, ...STATES.map((s) => ({ value: s.code, label: s.name }))], ...err('state') },
    { name: 'hoursPerWeek', label: 'Hours a week (in-home care)', type: 'number', value: value('hoursPerWeek'), min: 1, max: 168, step: 'any', hint: `Default ${costs.inHomeDefaults.hoursPerWeek}.`, ...err('hoursPerWeek') },
    { name: 'daysPerWeek', label: 'Days a week (adult day care)', type: 'number', value: value('daysPerWeek'), min: 1, max: 7, step: 'any', hint: `Default ${costs.adultDayDefaults.daysPerWeek}.`, ...err('daysPerWeek') },
    { name: 'years', label: 'Years of care', type: 'number', value: value('years'), min: 1, max: 30, step: '1', hint: 'Default 1.', ...err('years') },
    { name: 'annualIncreasePct', label: 'Yearly price increase (%)', type: 'number', value: value('annualIncreasePct'), min: 0, max: 15, step: 'any', hint: `Default ${costs.growth.defaultAnnualIncreasePct}.`, ...err('annualIncreasePct') },
  ];
  const path = submitted ? withQuery('/calculator', Object.fromEntries(CALCULATOR_FIELDS.map((f) => [f, value(f) || undefined]))) : '/calculator';
  const form: Block = {
    kind: 'form',
    form: {
      action: '/calculator',
      method: 'get',
      label: 'Long-term-care cost calculator',
      fields,
      submit: 'Estimate the cost',
      markdown: [
        'To estimate, request ',
        { code: `${deps.config.siteUrl}/api/md?path=/calculator?careType=<${CARE_TYPES.join('|')}>&state=<USPS code>&years=<1-30>` },
        ' (also hoursPerWeek, daysPerWeek, annualIncreasePct), or call the MCP tool ',
        { code: 'calculate_long_term_care_cost' },
        ' at ',
        { code: `${deps.config.siteUrl}/api/mcp` },
        ' with the same arguments.',
      ],
    },
  };
  const base = {
    title: 'Long-term-care cost calculator',
    description: `What care costs nationally or in your state, from the ${costs.source.name} medians (${costs.national.year}): monthly, yearly and over several years.`,
    path,
  };
  if (Object.keys(errors).length)
    return {
      ...base,
      status: 400,
      errors: Object.entries(errors).map(([field, message]) => ({ field, message })),
      blocks: [{ kind: 'notice', tone: 'error', content: ['Please correct the form: ', Object.values(errors).join('; '), '.'] }, form],
    };
  if (!estimate) return { ...base, status: 200, blocks: [form] };
  const e = estimate;
  const blocks: Block[] = [
    { kind: 'heading', level: 2, text: `${e.careTypeLabel} in ${e.location.name}` },
    {
      kind: 'facts',
      items: [
        { term: 'Median rate', value: [`${usd(e.rate.amount)} per ${e.rate.unit}`] },
        { term: 'Monthly', value: [usd(e.monthly)] },
        { term: 'First year', value: [usd(e.annual)] },
        { term: `Total over ${plural(e.assumptions.years, 'year')}`, value: [usd(e.total)] },
        { term: 'Data', value: [{ text: e.source.name, href: e.source.url }, ` (survey year ${e.dataYear})`] },
      ],
    },
  ];
  if (e.perYear.length > 1)
    blocks.push({ kind: 'table', caption: 'Cost by year', head: ['Year', 'Cost'], rows: e.perYear.map((y) => [[String(y.year)], [usd(y.annual)]]) });
  blocks.push({ kind: 'heading', level: 3, text: 'How this was worked out' }, { kind: 'list', items: e.notes.map((n) => [n]) }, { kind: 'heading', level: 2, text: 'Try other figures' }, form);
  return { ...base, status: 200, blocks };
}

function glossaryPage(deps: PagesDeps): Page {
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

/** The page at `path` (query in `query`), or null when there is none. */
export async function resolvePage(deps: PagesDeps, path: string, query: URLSearchParams): Promise<Page | null> {
  const clean = path.length > 1 ? path.replace(/\/+$/, '') : path;
  if (clean === '/') return homePage(deps);
  if (clean === '/resources') return resourcesPage(deps, query);
  if (clean === '/channels') return channelsPage(deps);
  if (clean === '/calculator') return calculatorPage(deps, query);
  if (clean === '/glossary') return glossaryPage(deps);
  const parts = clean.split('/').slice(1).map((p) => {
    try {
      return decodeURIComponent(p);
    } catch {
      return '\u0000';
    }
  });
  if (parts.length === 2 && parts[0] === 'resources') return resourcePage(deps, parts[1] ?? '');
  if (parts.length === 2 && parts[0] === 'channels') return channelPage(deps, parts[1] ?? '', query);
  if (parts.length === 4 && parts[0] === 'channels' && parts[2] === 'threads') return threadPage(deps, parts[1] ?? '', parts[3] ?? '', query);
  return null;
}
