// Newline-delimited framing of stdin with a size cap: a line over the cap is dropped while it
// streams in (only its head and tail are kept, to recover its id), so no line can exhaust memory.

export const MAX_LINE_BYTES = 1024 * 1024;
const HEAD_BYTES = 4096;
const TAIL_BYTES = 512;
const NEWLINE = 0x0a;

export type Frame = { kind: 'line'; text: string } | { kind: 'oversized'; bytes: number; head: string; tail: string };

export class LineSplitter {
  private parts: Buffer[] = [];
  private size = 0;
  private oversized: { head: Buffer; tail: Buffer } | null = null;
  private first = true;

  constructor(private readonly maxBytes = MAX_LINE_BYTES) {}

  /** The complete lines in `chunk` (with what came before it). */
  push(chunk: Buffer): Frame[] {
    const frames: Frame[] = [];
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(NEWLINE, start);
      this.append(chunk.subarray(start, nl === -1 ? chunk.length : nl));
      if (nl === -1) return frames;
      frames.push(this.take());
      start = nl + 1;
    }
  }

  /** The last line when input ends without a newline. */
  end(): Frame[] {
    return this.size > 0 ? [this.take()] : [];
  }

  private append(bytes: Buffer): void {
    if (bytes.length === 0) return;
    this.size += bytes.length;
    if (this.oversized) {
      this.oversized.tail = keepTail(Buffer.concat([this.oversized.tail, bytes]));
      return;
    }
    this.parts.push(bytes);
    if (this.size > this.maxBytes) {
      const all = Buffer.concat(this.parts);
      this.oversized = { head: Buffer.from(all.subarray(0, HEAD_BYTES)), tail: keepTail(all) };
      this.parts = [];
    }
  }

  private take(): Frame {
    const bytes = this.size;
    let frame: Frame;
    if (this.oversized) {
      frame = { kind: 'oversized', bytes, head: this.oversized.head.toString('utf8'), tail: stripCr(this.oversized.tail.toString('utf8')) };
    } else {
      let text = stripCr(Buffer.concat(this.parts).toString('utf8'));
      if (this.first && text.charCodeAt(0) === 0xfeff) text = text.slice(1); // a UTF-8 byte-order mark
      frame = { kind: 'line', text };
    }
    this.first = false;
    this.parts = [];
    this.size = 0;
    this.oversized = null;
    return frame;
  }
}

const keepTail = (b: Buffer): Buffer => (b.length > TAIL_BYTES ? Buffer.from(b.subarray(b.length - TAIL_BYTES)) : b);
const stripCr = (s: string): string => (s.endsWith('\r') ? s.slice(0, -1) : s);
