// The one Content-Security-Policy builder: every page starts from `default-src 'none'` and is
// granted only the sources its options name.

/**
 * What a page may load, post to and be framed by. Directives are written in the order the keys
 * are given, after `default-src 'none'`: each host's header keeps the exact text it has always had.
 */
export interface CspOptions {
  /** script-src: the host's own script files. Absent: no script runs at all. */
  script?: "'self'";
  /** style-src: the host's stylesheet, or one inline <style> (the development sign-in page only). */
  style?: "'self'" | "'unsafe-inline'";
  /** img-src: images from the host, `data:` URLs (the blank tab icon), or both. */
  img?: "'self'" | 'data:' | "'self' data:";
  /** connect-src: the page's script calls back to its own host. */
  connect?: "'self'";
  /**
   * form-action is always 'self'; these are further origins (or schemes) a form may post to. It
   * must also admit where the form's answer redirects to: Chromium checks redirects after a post.
   */
  formTargets: readonly string[];
  /** No page may be framed or change its base URL; the keys only place the directives. */
  frameAncestors: "'none'";
  baseUri: "'none'";
}

const DIRECTIVES: Record<Exclude<keyof CspOptions, 'formTargets'>, string> = {
  script: 'script-src',
  style: 'style-src',
  img: 'img-src',
  connect: 'connect-src',
  frameAncestors: 'frame-ancestors',
  baseUri: 'base-uri',
};

export function contentSecurityPolicy(opts: CspOptions): string {
  const parts = ["default-src 'none'"];
  for (const [key, value] of Object.entries(opts) as [keyof CspOptions, CspOptions[keyof CspOptions]][]) {
    if (value === undefined) continue;
    if (key === 'formTargets') parts.push(['form-action', "'self'", ...(value as readonly string[])].join(' '));
    else parts.push(`${DIRECTIVES[key]} ${value as string}`);
  }
  return parts.join('; ');
}

/** The CSP source that admits a redirect URI: its origin, or its scheme for a native app's private scheme. */
export function cspSourceFor(redirectUri: string | undefined): string[] {
  const url = redirectUri ? URL.parse(redirectUri) : null;
  if (!url) return [];
  if (url.protocol === 'http:' || url.protocol === 'https:') return [url.origin];
  return /^[a-z][a-z0-9+.-]*:$/i.test(url.protocol) ? [url.protocol] : [];
}
