// What every page family of the site shares: its dependencies and small text helpers.
import type { Config } from '../../config.js';
import type { DirectoryDeps } from '../../directory/tools.js';
import type { CommunityStore } from '../../community/store.js';

export interface PagesDeps {
  config: Config;
  directory: DirectoryDeps;
  community: CommunityStore;
}

const languageNames = new Intl.DisplayNames(['en'], { type: 'language' });
export const languageName = (code: string) => languageNames.of(code) ?? code;
export const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

export function withQuery(path: string, params: Record<string, string | undefined>): string {
  const q = new URLSearchParams(Object.entries(params).filter((e): e is [string, string] => e[1] !== undefined && e[1] !== ''));
  const s = q.toString();
  return s ? `${path}?${s}` : path;
}
