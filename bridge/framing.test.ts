import { describe, expect, it } from 'vitest';
import { LineSplitter } from './framing.js';

const chunks = (splitter: LineSplitter, ...parts: string[]) => parts.flatMap((p) => splitter.push(Buffer.from(p)));

describe('bridge framing', () => {
  it('when lines arrive split across chunks, with CRLF and a byte-order mark, then whole lines come out', () => {
    const s = new LineSplitter();
    expect(chunks(s, '\uFEFF{"a":', '1}\r\n{"b"', ':2}\n\n', '{"c":3}')).toEqual([
      { kind: 'line', text: '{"a":1}' },
      { kind: 'line', text: '{"b":2}' },
      { kind: 'line', text: '' },
    ]);
    expect(s.end()).toEqual([{ kind: 'line', text: '{"c":3}' }]);
    expect(s.end()).toEqual([]);
  });

  it('when a line exceeds the cap, then only its size, head and tail are kept and the next line is whole', () => {
    const s = new LineSplitter(64);
    const long = `{"method":"x","params":{"p":"${'y'.repeat(500)}"},"jsonrpc":"2.0","id":5}`;
    const frames = chunks(s, long.slice(0, 40), long.slice(40, 300), `${long.slice(300)}\n{"ok":1}\n`);
    expect(frames).toHaveLength(2);
    expect(frames[0]).toMatchObject({ kind: 'oversized', bytes: long.length });
    const over = frames[0] as { head: string; tail: string };
    expect(long.startsWith(over.head)).toBe(true);
    expect(over.tail.endsWith('"jsonrpc":"2.0","id":5}')).toBe(true);
    expect(frames[1]).toEqual({ kind: 'line', text: '{"ok":1}' });
  });
});
