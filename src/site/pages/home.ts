// The home page: search, browse by need, the channels, planning tools and the newsletter.
import { RESOURCE_CATEGORY_VALUES } from '../../directory/data.js';
import { CANONICAL_PAGES } from '../catalog.js';
import type { Block, Page } from '../doc.js';
import { plural, type PagesDeps } from './common.js';
import { CATEGORY_LABELS, searchForm } from './resources.js';

export function homePage(deps: PagesDeps): Page {
  const { data } = deps.directory;
  const counts = new Map<string, number>();
  for (const r of data.resources) counts.set(r.category, (counts.get(r.category) ?? 0) + 1);
  const blocks: Block[] = [
    searchForm({}, {}, deps.config.siteUrl),
    { kind: 'heading', level: 2, text: 'Browse by need' },
    {
      kind: 'list',
      items: RESOURCE_CATEGORY_VALUES.filter((c) => counts.get(c)).map((c) => [
        { text: CATEGORY_LABELS[c], href: `/resources?category=${c}` },
        ` (${plural(counts.get(c) ?? 0, 'resource')})`,
      ]),
    },
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
    description:
      'Find national US help for the people who look after an older relative: helplines, respite, hospice, Medicare counseling, legal and money help, peer channels and a long-term-care cost calculator.',
    path: '/',
    blocks,
  };
}
