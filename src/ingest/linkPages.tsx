// The link-code form answered as pages, for a browser that posts it without script: a confirmation
// after the redirect, and a refusal in plain words with the way back. Scripts get JSON instead.
import type { HttpReplyEnvelope, HttpRequestEnvelope } from '../bus/envelopes.js';
import { contentSecurityPolicy } from '../http/csp.js';
import type { Markup } from '../http/html.js';
import { preferredType } from '../http/negotiate.js';
import { htmlReply, pageHeaders, renderShell } from '../http/page.js';

/** A page for a browser's plain form post, unless it asks for JSON; JSON for everything else (scripts). */
export function wantsPage(req: HttpRequestEnvelope): boolean {
  const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  return type === 'application/x-www-form-urlencoded' && preferredType(req.headers.accept, ['text/html', 'application/json']) !== 'application/json';
}

/** The app's look (its stylesheet, no script) with a way home. */
export function linkPage(status: number, title: string, main: Markup, headers: Record<string, string> = {}): HttpReplyEnvelope {
  const html = renderShell({
    title,
    stylesheet: '/assets/app.css',
    skipLink: true,
    header: (
      <header>
        <a class="brand" href="/">
          carecircle
        </a>
        <nav aria-label="Main">
          <a href="/">Workspace</a> <a href="/family">Family</a> <a href="/settings">Settings</a>
        </nav>
      </header>
    ),
    main,
  });
  const csp = contentSecurityPolicy({ style: "'self'", img: "'self' data:", formTargets: [], frameAncestors: "'none'", baseUri: "'none'" });
  return htmlReply(status, html, { ...pageHeaders({ csp, referrer: 'same-origin' }), ...headers });
}

export function linkedPage(institution: string, lovedOne: string): HttpReplyEnvelope {
  return linkPage(
    200,
    'Agency linked',
    <>
      <h1>Agency linked</h1>
      <section class="card" id="family-share-linked">
        <p role="status">
          Linked: events from {institution} will appear for {lovedOne}.
        </p>
        <p>
          <a href="/">Back to your workspace</a>
        </p>
      </section>
    </>,
  );
}

export function refusedPage(status: number, message: string, hint: string, headers: Record<string, string> = {}): HttpReplyEnvelope {
  return linkPage(
    status,
    'The agency was not linked',
    <>
      <h1>The agency was not linked</h1>
      <section class="card" id="family-share-refused">
        <p role="alert">{message}</p>
        <p>{hint}</p>
        <p>
          <a href="/#family-share-form">Back to the link form</a>
        </p>
      </section>
    </>,
    headers,
  );
}
