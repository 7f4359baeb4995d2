// Server-rendered pages of the app host: one layout, one stylesheet, one script, a strict CSP.
import type { HttpReplyEnvelope } from '../bus/envelopes.js';
import { escapeHtml } from './html.js';

export interface PageOptions {
  title: string;
  body: string;
  /** Signed-in email, shown in the header with a sign-out button. */
  signedInAs?: string;
  /** Extra origin allowed as a form target (the identity provider). */
  formAction?: string;
}

export function csp(formAction?: string): string {
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    "connect-src 'self'",
    `form-action 'self'${formAction ? ` ${formAction}` : ''}`,
    "frame-ancestors 'none'",
    "base-uri 'none'",
  ].join('; ');
}

export function renderPage(opts: PageOptions): string {
  const account = opts.signedInAs
    ? `<form class="account" method="post" action="/signout"><span>${escapeHtml(opts.signedInAs)}</span> <button type="submit" class="link">Sign out</button></form>`
    : '';
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(opts.title)} · carecircle</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/assets/app.css">
<script src="/assets/app.js" defer></script>
</head>
<body>
<header><a class="brand" href="/">carecircle</a><nav><a href="/">Workspace</a> <a href="/settings">Settings</a></nav>${account}</header>
<main>
${opts.body}
</main>
</body>
</html>`;
}

export function page(status: number, opts: PageOptions, headers: Record<string, string> = {}): HttpReplyEnvelope {
  return {
    status,
    headers: { 'content-type': 'text/html; charset=utf-8', 'content-security-policy': csp(opts.formAction), 'cache-control': 'no-store', 'x-content-type-options': 'nosniff', 'referrer-policy': 'same-origin', ...headers },
    body: renderPage(opts),
    raw: true,
  };
}

export const redirect = (location: string, headers: Record<string, string> = {}): HttpReplyEnvelope => ({ status: 303, headers: { location, 'cache-control': 'no-store', ...headers }, body: '', raw: true });
