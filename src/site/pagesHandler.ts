// The worker handler behind the directory pages: HTML for browsers, markdown for agents (by
// `Accept: text/markdown` on the page itself, or through /api/md), the stylesheet and the icon.
import type { Credentials } from '../auth/credentials.js';
import { createHash } from 'node:crypto';
import type { Db } from 'mongodb';
import type { HttpReplyEnvelope, HttpRequestEnvelope } from '../bus/envelopes.js';
import type { Config } from '../config.js';
import { CommunityStore } from '../community/store.js';
import type { DirectoryDeps } from '../directory/tools.js';
import { ApiProblem, text } from '../http/reply.js';
import { handlers, type RouteHandlers } from '../slice/contract.js';
import { renderMarkdown, type Page } from './doc.js';
import { PAGE_HEADERS, renderHtml } from './layout.js';
import { wantsMarkdown } from '../http/negotiate.js';
import { notFoundPage, resolvePage } from './pages.js';
import type { PagesDeps } from './pages/common.js';
import { onSitePattern, SITE_ROUTES } from './routes.js';
import { FAVICON_SVG, STYLESHEET } from './styles.js';
import { communityForms, type CommunityForms } from './communityForms.js';
import type { Limiter } from '../limits/limiter.js';
import { redirect } from '../http/page.js';

export const MARKDOWN_TYPE = 'text/markdown; charset=utf-8';
const HTML_TYPE = 'text/html; charset=utf-8';
const VARY = 'Accept, Accept-Encoding';
/** Directory pages change with a deployment; community pages with every post. */
const STATIC_CACHE = 'public, max-age=300';
const LIVE_CACHE = 'no-cache';
const MAX_PATH = 2048;

const etagOf = (body: string) => `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;

/** A body with an ETag; a matching If-None-Match gets 304 with no body. */
export function cacheable(req: HttpRequestEnvelope, status: number, body: string, contentType: string, headers: Record<string, string>): HttpReplyEnvelope {
  const etag = etagOf(body);
  const all = { ...headers, etag };
  if (status === 200 && req.headers['if-none-match']?.split(',').some((t) => t.trim() === etag)) return { status: 304, headers: all };
  return text(status, body, contentType, all);
}

const isLive = (path: string) => path.startsWith('/channels/');

export function pageReply(req: HttpRequestEnvelope, page: Page, config: Config, markdown: boolean): HttpReplyEnvelope {
  const cache = page.status === 200 ? (isLive(page.path) ? LIVE_CACHE : STATIC_CACHE) : 'no-store';
  const common = { vary: VARY, 'cache-control': cache, link: `<${config.siteUrl}${page.path}>; rel="canonical"` };
  if (markdown) return cacheable(req, page.status, renderMarkdown(page, config.siteUrl), MARKDOWN_TYPE, { ...common, 'x-content-type-options': 'nosniff' });
  return cacheable(req, page.status, renderHtml(page, config), HTML_TYPE, { ...common, ...PAGE_HEADERS });
}

/** The site path /api/md should render: `?path=`, else the `x-md-original-path` header, else the home page. */
export function markdownTarget(req: HttpRequestEnvelope, siteUrl: string): URL {
  const field = req.query.path !== undefined ? 'path' : 'x-md-original-path';
  const raw = req.query.path ?? req.headers['x-md-original-path'] ?? '/';
  const hint = 'Pass a path on this site, such as /resources/eldercare-locator or /calculator?careType=assisted_living; /llms.txt lists the pages.';
  if (raw.length > MAX_PATH) throw new ApiProblem(400, 'VALIDATION_FAILED', `${field} must be at most ${MAX_PATH} characters`, hint);
  // The OpenAPI document's pattern, so the document and this check refuse the same values.
  const refused = () =>
    new ApiProblem(
      400,
      'VALIDATION_FAILED',
      `${field} must be a path on this site: starting with a single / (not // or /\\) or with ${siteUrl}, without control characters`,
      hint,
    );
  if (!new RegExp(onSitePattern(siteUrl), 'u').test(raw)) throw refused();
  let url: URL;
  try {
    url = new URL(raw, `${siteUrl}/`);
  } catch {
    throw new ApiProblem(400, 'VALIDATION_FAILED', `${field} is not a valid URL path`, hint);
  }
  // Kept behind the pattern: whatever the pattern lets through must still land on this site.
  if (url.origin !== new URL(siteUrl).origin) throw refused();
  // `/api/md?path=/calculator?careType=x&state=OH` arrives with `state` as our own parameter:
  // an unencoded query of the target is the common way to write it, so it belongs to the target.
  if (req.query.path !== undefined) for (const [k, v] of Object.entries(req.query)) if (k !== 'path') url.searchParams.append(k, v);
  return url;
}

export function pagesRoutes(deps: PagesDeps, forms: CommunityForms): RouteHandlers {
  const { config } = deps;
  return handlers(SITE_ROUTES)
    .on('styles', 'GET', async (req) =>
      cacheable(req, 200, STYLESHEET, 'text/css; charset=utf-8', { 'cache-control': 'public, max-age=3600', 'x-content-type-options': 'nosniff' }),
    )
    .on('favicon', 'GET', async (req) =>
      cacheable(req, 200, FAVICON_SVG, 'image/svg+xml', { 'cache-control': 'public, max-age=86400', 'x-content-type-options': 'nosniff' }),
    )
    .on('markdown', 'GET', async (req) => {
      const url = markdownTarget(req, config.siteUrl);
      const page = await resolvePage(deps, url.pathname, url.searchParams);
      if (!page || page.status === 404)
        throw new ApiProblem(404, 'NOT_FOUND', `No page at ${url.pathname}`, `The pages are listed in ${config.siteUrl}/llms.txt.`, { vary: VARY });
      if (page.status === 400)
        throw new ApiProblem(
          400,
          'VALIDATION_FAILED',
          (page.errors ?? []).map((e) => (e.message.startsWith(e.field) ? e.message : `${e.field}: ${e.message}`)).join('; ') || 'invalid query',
          'Correct the query of the path and try again.',
          { vary: VARY },
        );
      return pageReply(req, page, config, true);
    })
    .on('pages', 'GET', async (req) => {
      const query = new URLSearchParams(req.query);
      const page = (await resolvePage(deps, req.path, query)) ?? notFoundPage(req.path);
      return pageReply(req, page, config, wantsMarkdown(req.headers.accept));
    })
    .on('communityPages', 'GET', async (req, params) => {
      const query = new URLSearchParams(req.query);
      const markdown = wantsMarkdown(req.headers.accept);
      // Agents read the markdown twin, the same for everyone; people see what they can do.
      const viewer = !markdown && params.slug ? await forms.viewerOf(req, params.slug, `${req.path}#take-part`) : undefined;
      const page = (await resolvePage(deps, req.path, query, viewer ? { viewer } : {})) ?? notFoundPage(req.path);
      const reply = pageReply(req, page, config, markdown);
      return viewer?.signedIn ? { ...reply, headers: { ...reply.headers, 'cache-control': 'private, no-cache', vary: `${VARY}, Cookie` } } : reply;
    })
    .on('communityForms', 'POST', async (req, params) => {
      const outcome = await forms.submit(req, params.slug ?? '');
      if (!outcome) return pageReply(req, notFoundPage(req.path), config, false);
      if ('redirectTo' in outcome) return redirect(outcome.redirectTo);
      const reply = pageReply(req, outcome.page, config, false);
      return { ...reply, headers: { ...reply.headers, ...outcome.headers, 'cache-control': 'no-store' } };
    })
    .done();
}

export function pagesHandlers(config: Config, db: Db, credentials: Credentials, directory: DirectoryDeps, limiter: Limiter): RouteHandlers {
  const deps = { config, directory, community: new CommunityStore(db) };
  return pagesRoutes(deps, communityForms(deps, db, credentials, limiter));
}
