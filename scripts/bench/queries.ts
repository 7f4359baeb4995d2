// The directory requests every server gets: several hundred distinct searches built from the
// directory's own words (with some state and category filters), so no result cache can answer
// for the search itself. Deterministic: every target and every run gets the same sequence.
import { loadDirectoryData, RESOURCE_CATEGORY_VALUES } from '../../src/directory/data.js';

const STOP = new Set(
  'about after also and any are because been before being but can care does for from have help her his how into its more not one only other our out over own per some such than that the their them then there these they this those through too under very was were what when where whether which while who will with you your'.split(
    ' ',
  ),
);
const STATES = ['OH', 'CA', 'TX', 'NY', 'FL', 'Pennsylvania', 'IL', 'Georgia', 'WA', 'MI'];

/** A small seeded generator (mulberry32), so the sequence is the same everywhere. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Distinct words of four letters or more from names, tags, summaries, terms and topics. */
export function directoryWords(): string[] {
  const data = loadDirectoryData();
  const text = [
    ...data.resources.flatMap((r) => [r.name, r.summary, ...r.tags]),
    ...data.glossary.flatMap((g) => [g.term, g.definition]),
    ...data.channels.flatMap((c) => [c.name, c.summary, ...c.topics]),
  ].join(' ');
  const words = new Set(text.toLowerCase().match(/[a-z]{4,}/g) ?? []);
  return [...words].filter((w) => !STOP.has(w)).sort();
}

export interface SearchArgs {
  query: string;
  limit: number;
  state?: string;
  category?: string;
}

export function searchArguments(count = 600): SearchArgs[] {
  const words = directoryWords();
  const next = random(13);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)]!;
  const seen = new Set<string>();
  const out: SearchArgs[] = [];
  while (out.length < count) {
    const query = Array.from({ length: 1 + Math.floor(next() * 3) }, () => pick(words)).join(' ');
    const roll = next();
    const args: SearchArgs = {
      query,
      limit: next() < 0.7 ? 5 : 10,
      ...(roll < 0.2 ? { state: pick(STATES) } : roll < 0.3 ? { category: pick(RESOURCE_CATEGORY_VALUES) } : {}),
    };
    const key = JSON.stringify(args);
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(args);
  }
  return out;
}

/** One JSON-RPC `tools/call search_care_resources` body per search. */
export function searchBodies(count?: number): string[] {
  return searchArguments(count).map((args, i) =>
    JSON.stringify({ jsonrpc: '2.0', id: i + 1, method: 'tools/call', params: { name: 'search_care_resources', arguments: args } }),
  );
}

/** The headers every MCP target gets: what the SDK's transport requires is what carecircle accepts. */
export const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' };
