// A tools/call a worker answered with a question for the person: the event stream that puts it to
// the client, waits for the answer (routed here over the bus from whichever gateway the client posted
// it to), hands the call back to a worker with that answer and writes the worker's result last.
import { PassThrough } from 'node:stream';
import type { Context } from 'koa';
import type { HttpReplyEnvelope } from '../bus/envelopes.js';
import { RawJson } from '../bus/replies.js';
import { awaitAnswer } from '../rpc/answers.js';
import type { ElicitQuestion } from '../rpc/writes.js';
import type { GatewayDeps } from './context.js';
import { forwardPlain, type ForwardedRequest } from './forward.js';

/** A comment line now and then, so proxies and clients do not take a quiet stream for a dead one. */
const KEEPALIVE_MS = 20_000;

const event = (message: unknown): string => `event: message\ndata: ${message instanceof RawJson ? message.json : JSON.stringify(message)}\n\n`;

/**
 * Open the stream with the worker's question on it, once this gateway listens for the answer; the
 * rest runs after Koa has sent the headers. `failureBody` words a failure of the second round as the
 * edge words any (a JSON-RPC error with the call's id).
 */
export async function streamQuestion(
  deps: GatewayDeps,
  ctx: Context,
  reply: HttpReplyEnvelope & { elicit: ElicitQuestion },
  subject: string,
  names: readonly string[],
  failureBody: (err: unknown) => unknown,
): Promise<void> {
  const question = reply.elicit;
  // Taken apart now: the second round goes out after this middleware has returned.
  const headers: Record<string, string> = {};
  for (const name of names) headers[name] = ctx.get(name);
  const request: ForwardedRequest = {
    method: ctx.method,
    path: ctx.path,
    query: {},
    header: (name) => headers[name] ?? '',
    body: ctx.state.rpcBody,
    clientIp: ctx.ip,
    requestId: ctx.state.requestId,
  };
  const waiting = awaitAnswer(deps.bus, deps.config.busNamespace, question.key, question.timeoutMs);
  try {
    await waiting.ready;
  } catch (err) {
    // The bus is down: no answer could reach this stream, so the question is not sent at all.
    waiting.stop();
    throw err;
  }

  const stream = new PassThrough();
  ctx.status = 200;
  for (const [k, v] of Object.entries(reply.headers ?? {})) ctx.set(k, v);
  ctx.type = 'text/event-stream';
  ctx.set('Cache-Control', 'no-cache, no-transform');
  ctx.body = stream;
  stream.write(event(question.request));
  const keepalive = setInterval(() => stream.write(': waiting for the person\n\n'), KEEPALIVE_MS);
  // A client that goes away has nobody left to answer: the write is given up at once.
  ctx.res.once('close', () => waiting.stop());

  void (async () => {
    let last: unknown;
    try {
      const answer = await waiting.answer;
      const done = await forwardPlain(deps, { ...request, answer: { question: String(question.request.id), ...answer } }, subject, names, false);
      last = done.body ?? failureBody(new Error(`empty reply with status ${done.status}`));
    } catch (err) {
      last = failureBody(err);
    } finally {
      clearInterval(keepalive);
    }
    if (!stream.destroyed) stream.end(event(last));
  })();
}
