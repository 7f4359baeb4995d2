// The one HTML page shell (doctype, head, body) and the security headers every page carries; each
// host passes its own parts: the site its nav and footer, the app its header, the auth host its script.
import type { Context } from 'koa';
import type { HttpReplyEnvelope } from '../bus/envelopes.js';
import { renderMarkup, type Markup } from './html.js';

export const HTML_TYPE = 'text/html; charset=utf-8';

export interface ShellOptions {
  /** The page's own title; the document title adds `titleSuffix`. */
  title: string;
  /** Defaults to " · carecircle". */
  titleSuffix?: string;
  /** <meta name="description">. */
  description?: string;
  canonical?: string;
  /** The same page in another format, such as its markdown. */
  alternate?: { type: string; href: string };
  /** The tab icon; without one a blank data: URL, so the browser does not ask for /favicon.ico. */
  icon?: { href: string; type: string };
  stylesheet?: string;
  /** One script file, deferred. */
  script?: string;
  /** An inline <style>, for a page whose host serves no stylesheet (the development sign-in page): a constant of ours. */
  inlineStyle?: string;
  /** A "Skip to content" link first in the body, and `id="main"` on <main> for it to land on. */
  skipLink?: boolean;
  /** Markup before <main>. */
  header?: Markup;
  /** The main content, in a <main> element unless `bareBody`. */
  main: Markup;
  /** Markup after <main>. */
  footer?: Markup;
  /** Put `main` straight into <body>: the development sign-in page has no landmarks. */
  bareBody?: boolean;
}

function head(o: ShellOptions): string {
  return renderMarkup(
    <>
      <meta charset="utf-8" />
      <meta name="viewport" content="width=device-width, initial-scale=1" />
      <title>{`${o.title}${o.titleSuffix ?? ' · carecircle'}`}</title>
      {o.description === undefined ? null : <meta name="description" content={o.description} />}
      {o.canonical ? <link rel="canonical" href={o.canonical} /> : null}
      {o.alternate ? <link rel="alternate" type={o.alternate.type} href={o.alternate.href} /> : null}
      {o.icon ? <link rel="icon" href={o.icon.href} type={o.icon.type} /> : <link rel="icon" href="data:," />}
      {o.stylesheet ? <link rel="stylesheet" href={o.stylesheet} /> : null}
      {o.script ? <script src={o.script} defer /> : null}
      {o.inlineStyle ? <style dangerouslySetInnerHTML={{ __html: o.inlineStyle }} /> : null}
    </>,
  );
}

function body(o: ShellOptions): string[] {
  if (o.bareBody) return [renderMarkup(o.main)];
  const parts = [
    o.skipLink
      ? renderMarkup(
          <a class="skip" href="#main">
            Skip to content
          </a>,
        )
      : '',
    o.header === undefined ? '' : renderMarkup(o.header),
  ];
  parts.push(`<main${o.skipLink ? ' id="main"' : ''}>`, renderMarkup(o.main), '</main>', o.footer === undefined ? '' : renderMarkup(o.footer));
  return parts.filter((part) => part !== '');
}

/** Parts are rendered one by one, so the site's pre-rendered blocks (TrustedHtml) fit any slot. */
export function renderShell(o: ShellOptions): string {
  const lines = ['<!doctype html>', '<html lang="en">', '<head>', head(o), '</head>', '<body>', ...body(o), '</body>', '</html>'];
  return `${lines.join('\n')}\n`;
}
export interface PageSecurity {
  csp: string;
  /**
   * Omitted: the browser default. The app and auth hosts use same-origin, not no-referrer: with
   * no-referrer Chromium sends `Origin: null` on a page's own form posts.
   */
  referrer?: 'same-origin' | 'strict-origin-when-cross-origin';
  /** X-Frame-Options: DENY as well as frame-ancestors, for browsers that predate CSP. */
  frameOptions?: boolean;
}

/** The security headers of an HTML page. */
export function pageHeaders(s: PageSecurity): Record<string, string> {
  return {
    'content-security-policy': s.csp,
    'x-content-type-options': 'nosniff',
    ...(s.referrer ? { 'referrer-policy': s.referrer } : {}),
    ...(s.frameOptions ? { 'x-frame-options': 'DENY' } : {}),
  };
}

/** A page answered through the bus. Not stored by default: these pages show a person's own data. */
export function htmlReply(status: number, html: string, headers: Record<string, string>): HttpReplyEnvelope {
  return { status, headers: { 'content-type': HTML_TYPE, 'cache-control': 'no-store', ...headers }, body: html, raw: true };
}

/** A page answered in the gateway itself (the auth host and the development sign-in), never stored. */
export function sendHtml(ctx: Context, status: number, html: string, headers: Record<string, string>): void {
  ctx.status = status;
  ctx.type = HTML_TYPE;
  ctx.set({ 'cache-control': 'no-store', ...headers });
  ctx.body = html;
}

/** 303 See Other: after a form post, the browser fetches the next page with GET. */
export const redirect = (location: string, headers: Record<string, string> = {}): HttpReplyEnvelope => ({
  status: 303,
  headers: { location, 'cache-control': 'no-store', ...headers },
  body: '',
  raw: true,
});
