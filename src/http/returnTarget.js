// Where a sign-in may send the browser afterwards: the one rule, in plain JavaScript so the app's
// page script runs this very file (served as /assets/return-target.js) and the server imports it.

/** Characters a browser drops or reads as something else in a URL: C0 and C1 controls, DEL, every
 *  kind of whitespace (a tab inside `/\t/host` vanishes, leaving `//host`) and the backslash,
 *  which browsers treat as a slash. No address we send people to contains one. */
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\s\\]/; // eslint-disable-line no-control-regex

/** Decoding rounds before a path counts as hiding something: `%25` nests one round deeper each time. */
const DECODE_ROUNDS = 4;

/** True when the path, and each decoding of it, neither starts with two slashes nor holds a
 *  control character or backslash. The parser itself can make `//` (`/.//host` becomes `//host`,
 *  which a browser reads as another host), and whatever decodes the path later (a proxy, a
 *  framework) must not find another host in `/%2F%2Fhost` either. */
function pathStaysHere(path) {
  let current = path;
  for (let round = 0; round <= DECODE_ROUNDS; round++) {
    if (/^[/\\]{2}/.test(current) || /[\u0000-\u001f\u007f-\u009f\\]/.test(current)) return false; // eslint-disable-line no-control-regex
    let decoded;
    try {
      decoded = decodeURIComponent(current);
    } catch {
      return false;
    }
    if (decoded === current) return true;
    current = decoded;
  }
  return false;
}

/**
 * Where to send the browser after signing in, or null when `candidate` might lead anywhere else.
 * The candidate is refused outright if it holds an unsafe character, then resolved with the WHATWG
 * URL parser (the browser's own) against `home`, and kept only when it lands on `home` or on one
 * of `others`.
 *
 * @param {unknown} candidate  the `next` or `return_to` as received
 * @param {string | null} home  the origin relative candidates resolve against; a target there is
 *   answered as path, query and fragment. null: only absolute URLs are accepted.
 * @param {readonly string[]} [others]  further origins a target may name, answered as a full URL
 * @returns {string | null}
 */
export function returnTarget(candidate, home, others = []) {
  if (typeof candidate !== 'string' || candidate === '' || candidate.length > 2000 || UNSAFE.test(candidate)) return null;
  let url;
  try {
    url = home === null ? new URL(candidate) : new URL(candidate, home);
  } catch {
    return null;
  }
  // javascript:, data: and file: have the origin "null"; blob: has its inner URL's, hence the scheme.
  if (!/^https?:$/.test(url.protocol) || url.username || url.password || !pathStaysHere(url.pathname)) return null;
  if (home !== null && url.origin === new URL(home).origin) return url.pathname + url.search + url.hash;
  return others.some((origin) => new URL(origin).origin === url.origin) ? url.href : null;
}
