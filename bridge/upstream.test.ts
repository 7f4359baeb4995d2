import { describe, expect, it } from 'vitest';
import { describeCause } from './netError.js';
import { NOT_JSON, parseBody, retryAfterSec } from './upstream.js';

describe('bridge upstream - reading answers', () => {
  it('when the body is JSON, an event stream, empty or something else, then each is told apart', () => {
    expect(parseBody('application/json', '{"jsonrpc":"2.0","id":1,"result":{}}')).toEqual({ jsonrpc: '2.0', id: 1, result: {} });
    expect(parseBody('application/json', '  ')).toBeUndefined();
    expect(parseBody('text/html', '<html>Bad gateway</html>')).toBe(NOT_JSON);
    const stream =
      'event: message\ndata: {"jsonrpc":"2.0","method":"notifications/progress"}\n\nevent: message\ndata: {"jsonrpc":"2.0",\ndata: "id":2,"result":{}}\n\n';
    expect(parseBody('text/event-stream; charset=utf-8', stream)).toEqual([
      { jsonrpc: '2.0', method: 'notifications/progress' },
      { jsonrpc: '2.0', id: 2, result: {} },
    ]);
    expect(parseBody('text/event-stream', ': keep-alive\n\n')).toBeUndefined();
  });

  it('when Retry-After is seconds, a date or absent, then the wait comes from it, the body, or 1 s', () => {
    expect(retryAfterSec('7')).toBe(7);
    expect(retryAfterSec(new Date(Date.now() + 3_500).toUTCString())).toBeGreaterThanOrEqual(2);
    expect(retryAfterSec(null, { code: -32029, message: 'x', data: { retryAfterSec: 4 } })).toBe(4);
    expect(retryAfterSec(null)).toBe(1);
  });

  it('when fetch fails, then the socket errors under "fetch failed" are what the message names', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' });
    expect(describeCause(new TypeError('fetch failed', { cause: refused }))).toEqual({ text: 'connect ECONNREFUSED 127.0.0.1:1', code: 'ECONNREFUSED' });
    const v6 = Object.assign(new Error('connect ECONNREFUSED ::1:1'), { code: 'ECONNREFUSED' });
    expect(describeCause(new TypeError('fetch failed', { cause: new AggregateError([v6, refused]) }))).toEqual({
      text: 'connect ECONNREFUSED ::1:1; connect ECONNREFUSED 127.0.0.1:1',
      code: 'ECONNREFUSED',
    });
  });
});
