// The app host's pages: the shared shell with the app's header (account and sign-out), its one
// stylesheet and one script, and its CSP.
import type { HttpReplyEnvelope } from '../bus/envelopes.js';
import { contentSecurityPolicy } from '../http/csp.js';
import type { Markup } from '../http/html.js';
import { htmlReply, pageHeaders, renderShell } from '../http/page.js';

export interface PageOptions {
  title: string;
  body: Markup;
  /** Signed-in email, shown in the header with a sign-out button. */
  signedInAs?: string;
  /** Extra origin allowed as a form target (the identity provider). */
  formAction?: string;
  /** The public site (SITE_URL): the footer links to its directory, community and calculator. */
  siteUrl: string;
}

/** The app pages' CSP; `formTargets` are the origins (or schemes) beyond its own a form's answer may lead to. */
export const appPageCsp = (formTargets: readonly string[]): string =>
  contentSecurityPolicy({
    script: "'self'",
    style: "'self'",
    img: "'self' data:",
    connect: "'self'",
    formTargets,
    frameAncestors: "'none'",
    baseUri: "'none'",
  });

const csp = (formAction?: string): string => appPageCsp(formAction ? [formAction] : []);

function header(signedInAs: string | undefined) {
  return (
    <header>
      <a class="brand" href="/">
        carecircle
      </a>
      <nav aria-label="Main">
        <a href="/">Workspace</a> <a href="/family">Family</a> <a href="/settings">Settings</a>
      </nav>
      {signedInAs ? (
        <form class="account" method="post" action="/signout">
          <span>{signedInAs}</span>{' '}
          <button type="submit" class="link">
            Sign out
          </button>
        </form>
      ) : null}
    </header>
  );
}

/** The public site's parts a family turns to beside their workspace. */
const SITE_PARTS = [
  { path: '/resources', label: 'Care directory' },
  { path: '/channels', label: 'Community' },
  { path: '/calculator', label: 'Cost calculator' },
] as const;

function footer(siteUrl: string) {
  return (
    <footer>
      <nav aria-label="carecircle public site">
        On the carecircle site:{' '}
        {SITE_PARTS.map((p, i) => (
          <>
            {i ? ' · ' : ''}
            <a href={`${siteUrl}${p.path}`}>{p.label}</a>
          </>
        ))}
      </nav>
    </footer>
  );
}

export function page(status: number, opts: PageOptions, headers: Record<string, string> = {}): HttpReplyEnvelope {
  const html = renderShell({
    title: opts.title,
    stylesheet: '/assets/app.css',
    script: '/assets/app.js',
    skipLink: true,
    header: header(opts.signedInAs),
    main: opts.body,
    footer: footer(opts.siteUrl),
  });
  return htmlReply(status, html, { ...pageHeaders({ csp: csp(opts.formAction), referrer: 'same-origin' }), ...headers });
}
