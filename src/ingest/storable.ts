// Whether an accepted event can be stored as it is: the rules the document store enforces on a
// care event's payload, checked before the 202 so a refusal is a deterministic 400, never a write
// that fails after acceptance and is redelivered for ever.

/**
 * Objects and arrays a payload may nest, the payload itself being level 1. MongoDB refuses
 * documents nested more than 100 levels (the care event and its payload take two); FerretDB on
 * SQLite refuses about 330 (measured: 332 objects stored, 333 refused). 32 leaves both ample room.
 */
export const MAX_PAYLOAD_DEPTH = 32;

/** Shown paths are cut after this many segments, so a refusal stays short at any depth. */
const SHOWN_SEGMENTS = 8;

export interface Unstorable {
  /** Where, from the body's root: `payload.vitals.$gt`. */
  path: string;
  rule: 'depth' | 'key' | 'nested_array' | 'number' | 'text';
  message: string;
}

/** An unpaired surrogate: JSON allows it (`"\\ud800"`), UTF-8 and so the store cannot carry it. */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

const isIdentifier = (k: string) => /^[A-Za-z_][A-Za-z0-9_]*$/.test(k);

function showPath(segments: (string | number)[]): string {
  const shown = segments.length > SHOWN_SEGMENTS ? [...segments.slice(0, SHOWN_SEGMENTS - 1), '…', segments.at(-1)!] : segments;
  return shown
    .map((s, i) => (typeof s === 'number' ? `[${s}]` : s === '…' ? '.…' : isIdentifier(s) ? `${i ? '.' : ''}${s}` : `[${JSON.stringify(s.slice(0, 40))}]`))
    .join('');
}

/** Why the store refuses this key name, if it does. */
function keyProblem(key: string): string | undefined {
  if (key === '') return 'is an empty key name';
  if (key.startsWith('$')) return 'starts with "$" (reserved for database operators)';
  if (key.includes('.')) return 'contains "." (reserved for field paths)';
  if (key.includes('\u0000')) return 'contains a NUL character';
  // JSON.parse keeps it as a field, but any later copy by assignment (schema parsing, a merge in a
  // reader) takes it as the object's prototype: lost at best, a prototype change at worst.
  // "constructor" and "prototype" are ordinary fields all the way to the store and back.
  if (key === '__proto__') return 'is "__proto__", which is not allowed (JavaScript takes it as the object\'s prototype, not a field; rename it)';
  if (LONE_SURROGATE.test(key)) return 'holds an unpaired UTF-16 surrogate (not valid Unicode)';
  return undefined;
}

/**
 * The first rule the value breaks, walked without recursion so no depth can exhaust the stack.
 * `root` names the value (`payload`); depth counts from it.
 */
export function unstorable(value: unknown, root: string): Unstorable | undefined {
  const stack: { value: unknown; path: (string | number)[]; depth: number; inArray: boolean }[] = [{ value, path: [root], depth: 1, inArray: false }];
  while (stack.length) {
    const at = stack.pop()!;
    const v = at.value;
    if (typeof v === 'number') {
      if (!Number.isFinite(v))
        return { path: showPath(at.path), rule: 'number', message: 'is a number outside the 64-bit floating-point range (the store cannot hold it)' };
      continue;
    }
    if (typeof v === 'string') {
      if (LONE_SURROGATE.test(v)) return { path: showPath(at.path), rule: 'text', message: 'holds an unpaired UTF-16 surrogate (not valid Unicode)' };
      continue;
    }
    if (v === null || typeof v !== 'object') continue;
    if (at.depth > MAX_PAYLOAD_DEPTH)
      return {
        path: showPath(at.path),
        rule: 'depth',
        message: `is nested more than ${MAX_PAYLOAD_DEPTH} levels deep (objects and arrays count; ${root} is level 1)`,
      };
    if (Array.isArray(v)) {
      if (at.inArray)
        return { path: showPath(at.path), rule: 'nested_array', message: 'is an array directly inside an array (wrap it in an object: [{"items": [...]}])' };
      for (let i = v.length - 1; i >= 0; i--) stack.push({ value: v[i], path: [...at.path, i], depth: at.depth + 1, inArray: true });
      continue;
    }
    const keys = Object.keys(v);
    for (let i = keys.length - 1; i >= 0; i--) {
      const k = keys[i]!;
      const problem = keyProblem(k);
      if (problem) return { path: showPath([...at.path, k]), rule: 'key', message: `key ${problem}` };
      stack.push({ value: (v as Record<string, unknown>)[k], path: [...at.path, k], depth: at.depth + 1, inArray: false });
    }
  }
  return undefined;
}
