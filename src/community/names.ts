// The one rule for the name others see in the community, for the API and the site's forms alike:
// never an email address, however it is dressed up, and a stable pseudonym where there is no name.
import { createHash } from 'node:crypto';

export const DISPLAY_NAME_MAX = 60;

/** NFKC first, so compatibility forms (full-width `＠` and `．`, small `﹫`) are judged, and kept, as the characters they show. */
export const normalName = (name: string): string => name.normalize('NFKC');

/** An `@` with something on both sides, spaces allowed around it: `ana@localhost`, `ana @ example.com`
 *  and their full-width forms all read as an address to a person, with or without a dot. */
export const looksLikeEmail = (name: string): boolean => /\S\s*@\s*\S/.test(normalName(name));

/** What others see of a person without a name of their own: derived from the uid, never the email. */
export const pseudonymOf = (uid: string): string => `Member ${createHash('sha256').update(uid).digest('hex').slice(0, 6)}`;

/** A stored author name as readers see it: one stored under an older, looser rule that looks like
 *  an email address is shown as the author's pseudonym instead. */
export const shownName = (name: string, uid: string): string => (looksLikeEmail(name) ? pseudonymOf(uid) : name);
