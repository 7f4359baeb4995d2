// What an instant is wherever carecircle reads one (event times, signed send times): strict ISO 8601.
/** Strict ISO 8601 date-time with seconds and a zone: `2026-11-22T10:15:00Z`, `…T10:15:00.123+01:00`. */
const ISO_DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?(Z|[+-](\d{2}):(\d{2}))$/;

/** Milliseconds since the epoch, or null when the text is not a strict, real ISO 8601 instant. */
export function parseIsoInstant(text: string): number | null {
  const m = ISO_DATE_TIME.exec(text);
  if (!m) return null;
  const [, y, mo, d, h, mi, s] = m.map(Number) as number[];
  if (mo! < 1 || mo! > 12 || d! < 1 || h! > 23 || mi! > 59 || s! > 59) return null;
  if (d! > new Date(Date.UTC(y!, mo!, 0)).getUTCDate()) return null;
  if (m[9] !== undefined && (Number(m[9]) > 23 || Number(m[10]) > 59)) return null;
  const ms = Date.parse(text);
  return Number.isNaN(ms) ? null : ms;
}
