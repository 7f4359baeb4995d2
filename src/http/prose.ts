// Sentences around text someone else chose (a name, a workspace, a channel): a full stop after
// text that already ends in one ("David O.", "Acme Inc.") is left out, never printed twice.

/** True when `text` already closes a sentence: it ends in a full stop, ellipsis, `!` or `?`. */
export const endsSentence = (text: string): boolean => /[.!?…]["'’”)]*$/.test(text.trimEnd());

/** The full stop to print after `text`: none when it already ends a sentence. */
export const stopAfter = (text: string): string => (endsSentence(text) ? '' : '.');

/** `text` and a closing full stop, unless it already ends a sentence. */
export const sentence = (text: string): string => (endsSentence(text) ? text : `${text}.`);

/**
 * Runs of text to print one after another, with a run that starts with a full stop trimmed of it
 * when the run before already ends a sentence: a name given as one run (`{ strong: name }`)
 * followed by a literal `'.'` reads "as David O." and not "as David O..".
 */
export function joinedRuns<T>(runs: readonly T[], textOf: (run: T) => string, dropStop: (run: T) => T): T[] {
  const out: T[] = [];
  let before = '';
  for (const run of runs) {
    const text = textOf(run);
    const next = text.startsWith('.') && !text.startsWith('..') && endsSentence(before) ? dropStop(run) : run;
    out.push(next);
    const nextText = textOf(next);
    if (nextText) before = nextText;
  }
  return out;
}
