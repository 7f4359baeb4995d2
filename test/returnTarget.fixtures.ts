// Return addresses for after sign-in, hostile and fine, shared by the rule's own tests in Node and
// the same table run in Chromium, so both URL parsers are held to one list.

export interface Origins {
  app: string;
  site: string;
  /** Somewhere that is neither: a host name (`evil.example`) or `host:port` of a local listener. */
  evil: string;
}

/** Each must be refused: every one of them can reach `evil` in some browser or after some decoding. */
export function hostileNexts({ app, site, evil }: Origins): string[] {
  const appHost = new URL(app).host;
  const otherScheme = new URL(app).protocol === 'https:' ? 'http:' : 'https:';
  return [
    // Browsers drop tab, newline and carriage return anywhere in a URL, leaving `//evil`.
    `/\t/${evil}/phish`,
    `/\n/${evil}/phish`,
    `/\r/${evil}/phish`,
    `/\r\n/${evil}/phish`,
    `\t//${evil}/phish`,
    `/\t\\${evil}/phish`,
    // Leading and trailing C0 controls and spaces are stripped too; other whitespace and controls.
    ` //${evil}/phish`,
    `\u0000//${evil}/phish`,
    `\u001f//${evil}`,
    `/\u000b/${evil}`,
    `/\u000c/${evil}`,
    `/\u007f/${evil}`,
    `/\u0085/${evil}`,
    `/\u00a0/${evil}`,
    `/\u3000/${evil}`,
    `\ufeff//${evil}`,
    // Protocol-relative, and backslashes read as slashes.
    `//${evil}/phish`,
    `///${evil}/phish`,
    `/\\${evil}/phish`,
    `\\\\${evil}/phish`,
    `\\/${evil}/phish`,
    `/\\/${evil}/phish`,
    // Dot segments the parser folds into `//`.
    `/.//${evil}/phish`,
    `/x/..//${evil}/phish`,
    `/./\\${evil}`,
    // Percent-encoded slashes, backslashes and controls, once and twice (the query was already decoded once).
    `%2F%2F${evil}/phish`,
    `/%2F${evil}/phish`,
    `/%2f/${evil}/phish`,
    `%5C%5C${evil}/phish`,
    `/%5C${evil}/phish`,
    `/%5c${evil}/phish`,
    `/%09/${evil}/phish`,
    `/%0A/${evil}/phish`,
    `/%0d/${evil}/phish`,
    `/%252F%252F${evil}/phish`,
    `/%25252F${evil}`,
    // A path no decoder can read.
    '/%E0%A4%A',
    // Schemes that run code or show other content.
    'javascript:alert(document.domain)',
    'JaVaScRiPt:alert(1)',
    'java\tscript:alert(1)',
    ' javascript:alert(1)',
    'data:text/html,<script>alert(1)</script>',
    'vbscript:msgbox(1)',
    'file:///etc/passwd',
    // A blob: URL has the origin of the URL inside it, so only the scheme check stops these.
    `blob:${app}/x`,
    `blob:${site}/x`,
    // Other hosts by full address, or ours with credentials, another port or a look-alike name.
    `https://${evil}/phish`,
    `http://${evil}/phish`,
    `${otherScheme}${evil}/phish`,
    `${app}@${evil}/phish`,
    `//${appHost}@${evil}/phish`,
    `${new URL(app).protocol}//user:secret@${appHost}/`,
    `${site}.${evil}/phish`,
    `${site.replace(/:\d+$/, '')}:1/phish`,
    `ftp://${evil}/`,
    // Not a string, empty, or longer than any address of ours.
    '',
    `/${'a'.repeat(2000)}`,
  ];
}

/** Each is fine, with what the rule answers: a path on the app, a full URL on the site. */
export function keptNexts({ app, site }: Origins): [string, string][] {
  return [
    ['/', '/'],
    ['/settings', '/settings'],
    ['settings', '/settings'],
    ['/onboarding?workspace=ws_1', '/onboarding?workspace=ws_1'],
    ['/join/inv_1.c2VjcmV0', '/join/inv_1.c2VjcmV0'],
    ['/family/members/auth0%7C42/remove', '/family/members/auth0%7C42/remove'],
    ['/settings#connected-apps', '/settings#connected-apps'],
    [`${app}/family`, '/family'],
    [`${site}/channels/respite-and-burnout#take-part`, `${site}/channels/respite-and-burnout#take-part`],
    [`${site}/channels/respite-and-burnout/threads/thr_ab12#take-part`, `${site}/channels/respite-and-burnout/threads/thr_ab12#take-part`],
  ];
}
