// One HTTP POST over a kept-alive connection, with node's own client: a stdio message costs one
// request on a socket already open, without the fetch layer's per-request machinery (about a
// third of the bridge's overhead). Redirects are not followed; the caller reads them.
import { Agent as HttpAgent, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';

export interface Answer {
  status: number;
  headers: { get(name: string): string | null };
  text: string;
}

const agents = { http: new HttpAgent({ keepAlive: true }), https: new HttpsAgent({ keepAlive: true }) };

const headerReader = (raw: IncomingHttpHeaders) => ({
  get(name: string): string | null {
    const value = raw[name.toLowerCase()];
    return value === undefined ? null : Array.isArray(value) ? value.join(', ') : value;
  },
});

/** POST `body` to `url`; rejects on a network failure, or when `signal` aborts first. */
export function post(url: URL, headers: Record<string, string>, body: string, signal: AbortSignal): Promise<Answer> {
  return new Promise<Answer>((resolve, reject) => {
    const secure = url.protocol === 'https:';
    const req = (secure ? httpsRequest : httpRequest)(
      url,
      { method: 'POST', headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) }, agent: secure ? agents.https : agents.http },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: headerReader(res.headers), text: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    const abort = () => req.destroy(new Error('aborted'));
    if (signal.aborted) abort();
    signal.addEventListener('abort', abort, { once: true });
    req.on('close', () => signal.removeEventListener('abort', abort));
    req.on('error', reject);
    req.end(body);
  });
}
