// The site's parts of the page shell (skip link, nav, footer, markdown alternate) and the headers
// every site page carries (strict CSP, no scripts).
import type { Config } from '../config.js';
import { contentSecurityPolicy } from '../http/csp.js';
import { pageHeaders, renderShell } from '../http/page.js';
import type { Page } from './doc.js';
import { Blocks } from './docHtml.js';

/** No scripts at all; styles and images only from the site itself; forms post only to the site. */
export const CONTENT_SECURITY_POLICY = contentSecurityPolicy({ style: "'self'", img: "'self'", formTargets: [], baseUri: "'none'", frameAncestors: "'none'" });

export const PAGE_HEADERS: Readonly<Record<string, string>> = pageHeaders({
  csp: CONTENT_SECURITY_POLICY,
  referrer: 'strict-origin-when-cross-origin',
  frameOptions: true,
});

export const NAV: readonly { path: string; label: string }[] = [
  { path: '/resources', label: 'Resources' },
  { path: '/channels', label: 'Channels' },
  { path: '/calculator', label: 'Cost calculator' },
  { path: '/glossary', label: 'Glossary' },
];

function current(pagePath: string, navPath: string): boolean {
  const path = pagePath.split('?')[0] ?? '';
  return path === navPath || path.startsWith(`${navPath}/`);
}

/** The family app's sign-in, from APP_URL: the site and the app are one service to a person. */
const appSignIn = (appUrl: string): string => `${appUrl}/signin`;

function header(pagePath: string, appUrl: string) {
  return (
    <header class="site">
      <div class="bar">
        <a class="brand" href="/">
          carecircle
        </a>
        <nav aria-label="Main">
          <ul>
            {NAV.map((n) => (
              <li>
                <a href={n.path} aria-current={current(pagePath, n.path) ? 'page' : undefined}>
                  {n.label}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <a class="app" href={appSignIn(appUrl)}>
          Sign in to your family workspace
        </a>
      </div>
    </header>
  );
}

const footer = (markdownHref: string) => (
  <footer class="site">
    <div class="bar">
      <p>carecircle: a care-resource directory and community for family caregivers of older adults. Not medical or legal advice; in an emergency call 911.</p>
      <p>
        For AI assistants: <a href="/llms.txt">llms.txt</a> · <a href="/openapi.json">OpenAPI</a> · <a href="/api/mcp">MCP endpoint</a> · this page as{' '}
        <a href={markdownHref}>markdown</a>
      </p>
    </div>
  </footer>
);

export function renderHtml(page: Page, urls: Pick<Config, 'siteUrl' | 'appUrl'>): string {
  const markdown = `/api/md?path=${encodeURIComponent(page.path)}`;
  return renderShell({
    title: page.title,
    description: page.description,
    canonical: `${urls.siteUrl}${page.path}`,
    alternate: { type: 'text/markdown', href: markdown },
    icon: { href: '/favicon.svg', type: 'image/svg+xml' },
    stylesheet: '/styles.css',
    skipLink: true,
    header: header(page.path, urls.appUrl),
    main: (
      <>
        <h1>{page.title}</h1>
        <p class="lead">{page.description}</p>
        <Blocks blocks={page.blocks} />
      </>
    ),
    footer: footer(markdown),
  });
}
