// The site's pages by path: each page family builds its page model (title, summary, blocks) from
// the directory data, the cost calculator or the community store; HTML and markdown are rendered from it.
import type { Page } from './doc.js';
import { calculatorPage } from './pages/calculator.js';
import { channelPage, channelsPage, threadPage, type PageViewer } from './pages/channels.js';
import type { PagesDeps } from './pages/common.js';
import { glossaryPage } from './pages/glossary.js';
import { homePage } from './pages/home.js';
import { resourcePage, resourcesPage } from './pages/resources.js';

export function notFoundPage(path: string): Page {
  return {
    status: 404,
    title: 'Page not found',
    description: 'There is no page at this address.',
    path,
    blocks: [
      {
        kind: 'para',
        content: [
          'Try the ',
          { text: 'resource search', href: '/resources' },
          ', the ',
          { text: 'channels', href: '/channels' },
          ' or the ',
          { text: 'home page', href: '/' },
          '.',
        ],
      },
    ],
  };
}

/** The page at `path` (query in `query`), or null when there is none. */
export async function resolvePage(deps: PagesDeps, path: string, query: URLSearchParams, who: PageViewer = {}): Promise<Page | null> {
  const clean = path.length > 1 ? path.replace(/\/+$/, '') : path;
  if (clean === '/') return homePage(deps);
  if (clean === '/resources') return resourcesPage(deps, query);
  if (clean === '/channels') return channelsPage(deps);
  if (clean === '/calculator') return calculatorPage(deps, query);
  if (clean === '/glossary') return glossaryPage(deps);
  const parts = clean
    .split('/')
    .slice(1)
    .map((p) => {
      try {
        return decodeURIComponent(p);
      } catch {
        return '\u0000';
      }
    });
  if (parts.length === 2 && parts[0] === 'resources') return resourcePage(deps, parts[1] ?? '');
  if (parts.length === 2 && parts[0] === 'channels') return channelPage(deps, parts[1] ?? '', query, who);
  if (parts.length === 4 && parts[0] === 'channels' && parts[2] === 'threads') return threadPage(deps, parts[1] ?? '', parts[3] ?? '', query, who);
  return null;
}
