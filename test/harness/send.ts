// Sending a request exactly as given: node:http for any header (Host included), node:net for bytes
// that are not valid HTTP. Each on its own connection, so one broken exchange spoils no other.
import { request } from 'node:http';
import { connect } from 'node:net';

export interface Answer {
  /** The status, or 0 when the server closed the connection without one. */
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/** Rejects when no answer comes within `timeoutMs` (a hang is a finding too). */
export function sendHttp(
  base: string,
  o: { method: string; target: string; headers: Record<string, string>; body?: Buffer },
  timeoutMs: number,
): Promise<Answer> {
  const url = new URL(base);
  // node frames a DELETE or OPTIONS body with neither Content-Length nor chunking unless told.
  const headers = o.body && !('content-length' in o.headers) ? { ...o.headers, 'content-length': String(o.body.length) } : o.headers;
  return new Promise((resolve, reject) => {
    const req = request(
      { host: url.hostname, port: url.port, method: o.method, path: o.target, headers, agent: false, setHost: !('host' in o.headers) },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
        res.on('error', reject);
      },
    );
    req.setTimeout(timeoutMs, () => req.destroy(new Error(`no answer in ${timeoutMs} ms`)));
    // The server may answer (413, 400) and close before a large body is written: that is an answer.
    req.on('error', (err: NodeJS.ErrnoException) =>
      err.code === 'ECONNRESET' || err.code === 'EPIPE' ? resolve({ status: 0, headers: {}, body: Buffer.alloc(0) }) : reject(err),
    );
    req.end(o.body);
  });
}

/** Writes the bytes, half-closes, and reads what comes back: the worst status of every answer (0 when none). */
export function sendRaw(base: string, bytes: Buffer, timeoutMs: number): Promise<Answer> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: url.hostname, port: Number(url.port) });
    const chunks: Buffer[] = [];
    socket.setTimeout(timeoutMs, () => {
      socket.destroy();
      reject(new Error(`no answer in ${timeoutMs} ms`));
    });
    socket.on('connect', () => socket.end(bytes));
    socket.on('data', (c: Buffer) => chunks.push(c));
    const done = () => {
      const text = Buffer.concat(chunks).toString('latin1');
      const statuses = [...text.matchAll(/(?:^|\n)HTTP\/1\.[01] (\d{3})/g)].map((m) => Number(m[1]));
      resolve({ status: Math.max(0, ...statuses), headers: {}, body: Buffer.from(text, 'latin1') });
    };
    socket.on('close', done);
    socket.on('error', (err: NodeJS.ErrnoException) => (err.code === 'ECONNRESET' || err.code === 'EPIPE' ? undefined : reject(err)));
  });
}
