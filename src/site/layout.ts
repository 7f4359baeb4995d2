// The HTML shell around every page, and the headers every page carries (strict CSP, no scripts).
import { blocksHtml, escapeHtml, type Page } from './doc.js';

/** No scripts at all; styles and images only from the site itself; forms post only to the site. */
export const CONTENT_SECURITY_POLICY =
  "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

export const PAGE_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': CONTENT_SECURITY_POLICY,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'strict-origin-when-cross-origin',
  'x-frame-options': 'DENY',
};

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

export function renderHtml(page: Page, siteUrl: string): string {
  const nav = NAV.map((n) => `<li><a href="${n.path}"${current(page.path, n.path) ? ' aria-current="page"' : ''}>${escapeHtml(n.label)}</a></li>`).join('');
  const canonical = `${siteUrl}${page.path}`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(page.title)} · carecircle</title>
<meta name="description" content="${escapeHtml(page.description)}">
<link rel="canonical" href="${escapeHtml(canonical)}">
<link rel="alternate" type="text/markdown" href="/api/md?path=${escapeHtml(encodeURIComponent(page.path))}">
<link rel="icon" href="/favicon.svg" type="image/svg+xml">
<link rel="stylesheet" href="/styles.css">
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<header class="site"><div class="bar">
<a class="brand" href="/">carecircle</a>
<nav aria-label="Main"><ul>${nav}</ul></nav>
</div></header>
<main id="main">
<h1>${escapeHtml(page.title)}</h1>
<p class="lead">${escapeHtml(page.description)}</p>
${blocksHtml(page.blocks)}
</main>
<footer class="site"><div class="bar">
<p>carecircle: a care-resource directory and community for family caregivers of older adults. Not medical or legal advice; in an emergency call 911.</p>
<p>For AI assistants: <a href="/llms.txt">llms.txt</a> · <a href="/openapi.json">OpenAPI</a> · <a href="/api/mcp">MCP endpoint</a> · this page as <a href="/api/md?path=${escapeHtml(encodeURIComponent(page.path))}">markdown</a></p>
</div></footer>
</body>
</html>
`;
}
