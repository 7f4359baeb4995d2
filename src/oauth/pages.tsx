// Pages of the authorization server (sign-in hand-off, consent, errors) and their one stylesheet
// and one script, served from the auth host under a CSP with no inline script or style.
import type { Context } from 'koa';
import { contentSecurityPolicy } from '../http/csp.js';
import type { Markup } from '../http/html.js';
import { pageHeaders, renderShell, sendHtml } from '../http/page.js';
import { SCOPE_TEXT, type Scope } from '../auth/scopes.js';
import { ASSET_PATHS } from './paths.js';

export const OAUTH_CSS = `:root { --ink: #1f2937; --muted: #6b7280; --accent: #0f766e; --line: #e5e7eb; --bg: #f9fafb; }
* { box-sizing: border-box; }
body { margin: 0; font: 16px/1.55 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--ink); background: var(--bg); }
header { padding: .75rem 1.5rem; background: #fff; border-bottom: 1px solid var(--line); font-weight: 700; color: var(--accent); font-size: 1.15rem; }
main { max-width: 36rem; margin: 2rem auto; padding: 0 1.5rem; }
h1 { font-size: 1.45rem; margin: 0 0 1rem; }
a { color: var(--accent); }
section.card { background: #fff; border: 1px solid var(--line); border-radius: .5rem; padding: 1.25rem 1.5rem; margin-bottom: 1.5rem; }
fieldset { border: 0; padding: 0; margin: 1rem 0; }
legend { font-weight: 600; margin-bottom: .5rem; }
.scope { display: flex; gap: .75rem; align-items: flex-start; padding: .75rem 0; border-top: 1px solid var(--line); }
.scope input { margin-top: .3rem; width: 1.15rem; height: 1.15rem; }
.scope label { display: block; }
.scope .reveals { display: block; color: var(--muted); font-size: .95rem; }
button { padding: .55rem 1.1rem; font-size: 1rem; border-radius: .3rem; border: 1px solid var(--accent); background: var(--accent); color: #fff; cursor: pointer; margin: .75rem .5rem 0 0; }
button.secondary { background: #fff; color: var(--accent); }
.muted { color: var(--muted); }
.error { background: #fef2f2; border: 1px solid #fecaca; padding: .75rem 1rem; border-radius: .3rem; color: #991b1b; }
code { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: .9em; }
`;

/** Finishes a sign-in: the identity provider returns the ID token in the URL fragment, which
 * never reaches a server, so this posts it to the authorization server from the page. */
export const OAUTH_JS = `(function () {
  'use strict';
  document.addEventListener('DOMContentLoaded', function () {
    var form = document.getElementById('signed-in');
    if (!form) return;
    var token = new URLSearchParams(location.hash.slice(1)).get('id_token');
    history.replaceState(null, '', location.pathname + location.search);
    if (!token) {
      var status = document.getElementById('signin-status');
      if (status) status.textContent = 'The sign-in did not return a token. Go back to your app and connect again.';
      return;
    }
    form.elements.namedItem('id_token').value = token;
    form.submit();
  });
})();
`;

/** Our pages' CSP; `formTargets` admits where a form's answer redirects to: after consent, the app's redirect URI. */
const pageCsp = (formTargets: string[]): string =>
  contentSecurityPolicy({ script: "'self'", style: "'self'", img: "'self' data:", formTargets, frameAncestors: "'none'", baseUri: "'none'" });

export function renderAsPage(ctx: Context, status: number, title: string, body: Markup, formTargets: string[] = []): void {
  const html = renderShell({ title, stylesheet: ASSET_PATHS.css, script: ASSET_PATHS.js, header: <header>carecircle</header>, main: body });
  sendHtml(ctx, status, html, pageHeaders({ csp: pageCsp(formTargets), referrer: 'same-origin' }));
}

export function signedInPage(uid: string) {
  return (
    <>
      <h1>Signing you in…</h1>
      <section class="card">
        <p id="signin-status" role="status">
          One moment.
        </p>
        <form id="signed-in" method="post" action={`/oauth/interaction/${encodeURIComponent(uid)}/login`}>
          <input type="hidden" name="id_token" value="" />
          <noscript>
            <p class="error">This step needs JavaScript to pass your sign-in on to carecircle.</p>
          </noscript>
        </form>
      </section>
    </>
  );
}

export interface ConsentView {
  uid: string;
  clientName: string;
  clientUri?: string;
  /** The client's Client ID Metadata Document, when it identified itself by one. */
  documentUrl?: string;
  redirectUri?: string;
  email: string;
  /** The scopes the app asked for, in our order. */
  requested: Scope[];
  /** Scopes this person already approved for this app (pre-ticked). */
  approved: Scope[];
  settingsUrl: string;
  /** Shown above the choices when the last answer could not be used. */
  problem?: string;
}

/** Scopes that change the care record: asked apart from reading, so a person can grant reading alone. */
const WRITE_SCOPES: readonly Scope[] = ['care_circle:write'];
const writes = (s: Scope) => WRITE_SCOPES.includes(s);

function scopeChoice(v: ConsentView, s: Scope) {
  const id = `scope-${s.replace(/[^a-z]/g, '-')}`;
  return (
    <div class="scope">
      <input type="checkbox" id={id} name="scope" value={s} checked={v.approved.includes(s)} />
      <label for={id}>
        <strong>{SCOPE_TEXT[s].title}</strong> <code>{s}</code>
        <span class="reveals">{SCOPE_TEXT[s].reveals}</span>
      </label>
    </div>
  );
}

function scopeChoices(v: ConsentView) {
  if (!v.requested.some((s) => !writes(s)))
    return (
      <p class="error" role="alert">
        This app asked to read nothing, so it cannot connect. Go back to the app; it needs to ask for <code>profile:read</code> or <code>care_circle:read</code>
        .
      </p>
    );
  return v.requested.filter((s) => !writes(s)).map((s) => scopeChoice(v, s));
}

/** The writing the app asked for, in its own group, never ticked unless this person allowed it before. */
function writeChoices(v: ConsentView) {
  const asked = v.requested.filter(writes);
  if (!asked.length) return <p class="muted">The app can change nothing.</p>;
  return (
    <fieldset id="write-scopes">
      <legend>This app also asks to add to the care record in your name. Leave the box empty to let it read only.</legend>
      {asked.map((s) => scopeChoice(v, s))}
    </fieldset>
  );
}

export function consentPage(v: ConsentView) {
  const returnHost = v.redirectUri ? URL.parse(v.redirectUri)?.host || v.redirectUri : '';
  return (
    <>
      <h1>
        Connect <span id="client-name">{v.clientName}</span> to carecircle?
      </h1>
      <section class="card">
        <p>
          Signed in as <strong>{v.email}</strong>. The app chose its own name
          {v.clientUri ? (
            <>
              {' '}
              and says it is{' '}
              <a href={v.clientUri} rel="noopener noreferrer">
                {v.clientUri}
              </a>
            </>
          ) : null}
          ; it will send you back to <code>{returnHost}</code>.
          {v.documentUrl ? (
            <>
              {' '}
              It describes itself in a document at <code id="client-document">{URL.parse(v.documentUrl)?.host ?? v.documentUrl}</code>.
            </>
          ) : null}
        </p>
        {v.problem ? (
          <p class="error" role="alert" id="consent-problem">
            {v.problem}
          </p>
        ) : null}
        <form method="post" action={`/oauth/interaction/${encodeURIComponent(v.uid)}/consent`}>
          <fieldset>
            <legend>Tick what this app may read. Each is read-only; leave a box empty to keep that private.</legend>
            {scopeChoices(v)}
          </fieldset>
          {writeChoices(v)}
          <p class="muted">
            You can see it and disconnect it any time under <a href={v.settingsUrl}>Settings → Connected apps</a>.
          </p>
          {v.requested.some((s) => !writes(s)) ? (
            <button type="submit" name="decision" value="allow" id="allow">
              Allow selected
            </button>
          ) : null}
          <button type="submit" name="decision" value="deny" class="secondary" id="deny">
            {v.requested.length ? 'Deny' : 'Back to the app'}
          </button>
        </form>
      </section>
    </>
  );
}

export function errorPage(code: string, description: string | undefined, hint: string) {
  return (
    <>
      <h1>This connection cannot continue</h1>
      <section class="card">
        <p class="error" role="alert">
          {description ?? 'The request was refused.'}
        </p>
        <p>
          Error code: <code id="error-code">{code}</code>
        </p>
        <p>{hint}</p>
      </section>
    </>
  );
}
