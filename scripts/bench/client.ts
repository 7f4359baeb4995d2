// A lean HTTP/1.1 keep-alive client for loopback load: one socket, one request in flight, the
// request bytes prepared by the caller. It parses only what framing needs (status, length,
// chunks), so the load generator spends a fraction of what node:http would of the shared cores.
import net from 'node:net';

const CRLF = Buffer.from('\r\n');
const HEAD_END = Buffer.from('\r\n\r\n');

/** The bytes of one request; `headers` must not include host or content-length. */
export function requestBytes(method: string, url: URL, headers: Record<string, string>, body = ''): Buffer {
  const lines = [`${method} ${url.pathname}${url.search} HTTP/1.1`, `host: ${url.host}`, ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)];
  if (body || method !== 'GET') lines.push(`content-length: ${Buffer.byteLength(body)}`);
  return Buffer.from(`${lines.join('\r\n')}\r\n\r\n${body}`);
}

type Framing = number | 'chunked' | 'close';

export class Connection {
  private socket: net.Socket | undefined;
  private buf: Buffer = Buffer.alloc(0);
  private head: { status: number; framing: Framing; keepAlive: boolean } | undefined;
  /** Where the next chunk-size line starts, within `buf`. */
  private chunkAt = 0;
  private pending: { resolve(status: number): void; reject(err: Error): void } | undefined;

  constructor(
    private readonly port: number,
    private readonly host = '127.0.0.1',
  ) {}

  /** Sends one request and resolves with the response status once the whole body has arrived. */
  request(bytes: Buffer): Promise<number> {
    if (this.pending) return Promise.reject(new Error('one request at a time per connection'));
    const socket = this.socket ?? this.connect();
    return new Promise((resolve, reject) => {
      this.pending = { resolve, reject };
      socket.write(bytes);
    });
  }

  close(): void {
    this.socket?.destroy();
    this.socket = undefined;
  }

  private connect(): net.Socket {
    const socket = net.connect(this.port, this.host);
    socket.setNoDelay(true);
    socket.on('data', (data: Buffer) => this.onData(data));
    socket.on('error', (err) => this.fail(err));
    socket.on('close', () => {
      if (this.socket !== socket) return;
      this.socket = undefined;
      if (this.head?.framing === 'close') this.complete(this.buf.length);
      else this.fail(new Error('connection closed by the server'));
    });
    this.socket = socket;
    return socket;
  }

  private onData(data: Buffer): void {
    this.buf = this.buf.length ? Buffer.concat([this.buf, data]) : data;
    if (!this.head) {
      const end = this.buf.indexOf(HEAD_END);
      if (end < 0) return;
      const text = this.buf.toString('latin1', 0, end).toLowerCase();
      const status = Number(text.slice(9, 12));
      const length = /\r\ncontent-length: *(\d+)/.exec(text);
      const framing: Framing =
        status === 204 || status === 304 ? 0 : length ? Number(length[1]) : /\r\ntransfer-encoding:[^\r]*chunked/.test(text) ? 'chunked' : 'close';
      this.head = { status, framing, keepAlive: !/\r\nconnection: *close/.test(text) };
      this.buf = this.buf.subarray(end + HEAD_END.length);
      this.chunkAt = 0;
    }
    const { framing } = this.head;
    if (typeof framing === 'number') {
      if (this.buf.length >= framing) this.complete(framing);
      return;
    }
    if (framing === 'close') return;
    for (;;) {
      const lineEnd = this.buf.indexOf(CRLF, this.chunkAt);
      if (lineEnd < 0) return;
      const size = parseInt(this.buf.toString('latin1', this.chunkAt, lineEnd).split(';')[0]!, 16);
      if (size === 0) {
        // The last chunk, then optional trailers, then an empty line.
        const end = this.buf.indexOf(HEAD_END, lineEnd);
        if (end >= 0) this.complete(end + HEAD_END.length);
        return;
      }
      const next = lineEnd + CRLF.length + size + CRLF.length;
      if (this.buf.length < next) return;
      this.chunkAt = next;
    }
  }

  private complete(consumed: number): void {
    const { status, keepAlive } = this.head!;
    const pending = this.pending;
    this.head = undefined;
    this.pending = undefined;
    this.buf = this.buf.subarray(consumed);
    if (!keepAlive) this.close();
    pending?.resolve(status);
  }

  private fail(err: Error): void {
    const pending = this.pending;
    this.head = undefined;
    this.pending = undefined;
    this.buf = Buffer.alloc(0);
    this.close();
    pending?.reject(err);
  }
}
