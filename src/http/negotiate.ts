// Content negotiation on the Accept header (RFC 9110 §12.5.1): quality values and wildcards.

interface Range {
  type: string;
  subtype: string;
  q: number;
}

function parseAccept(accept: string): Range[] {
  return accept
    .split(',')
    .map((part) => {
      const [range = '', ...params] = part.trim().split(';');
      const [type = '', subtype = ''] = range.trim().toLowerCase().split('/');
      const qParam = params.map((p) => p.trim().split('=')).find(([k]) => k?.trim().toLowerCase() === 'q');
      const q = qParam ? Number(qParam[1]) : 1;
      return { type, subtype, q: Number.isFinite(q) ? Math.min(1, Math.max(0, q)) : 0 };
    })
    .filter((r) => r.type && r.subtype);
}

function qualityOf(offer: string, ranges: Range[]): number {
  const [type, subtype] = offer.toLowerCase().split('/');
  let best: { specificity: number; q: number } | undefined;
  for (const r of ranges) {
    const specificity = r.type === type && r.subtype === subtype ? 3 : r.type === type && r.subtype === '*' ? 2 : r.type === '*' && r.subtype === '*' ? 1 : 0;
    if (specificity && (!best || specificity > best.specificity)) best = { specificity, q: r.q };
  }
  return best?.q ?? 0;
}

/** The offer the client prefers; the first offer when Accept is absent or ties. Undefined: none acceptable. */
export function preferredType(accept: string | undefined, offers: readonly string[]): string | undefined {
  if (!accept?.trim()) return offers[0];
  const ranges = parseAccept(accept);
  let chosen: string | undefined;
  let bestQ = 0;
  for (const offer of offers) {
    const q = qualityOf(offer, ranges);
    if (q > bestQ) {
      bestQ = q;
      chosen = offer;
    }
  }
  return chosen;
}

/** True when the client asks for markdown over HTML (for example `Accept: text/markdown`). */
export function wantsMarkdown(accept: string | undefined): boolean {
  return preferredType(accept, ['text/html', 'text/markdown']) === 'text/markdown';
}
